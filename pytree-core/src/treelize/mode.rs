//! treevalue's modes: how an operation on several trees lines them up when
//! their maps (or `Option`s) differ in which keys (values) are present, and
//! what fills a slot that one tree lacks.
//!
//! [`Mode`] is the runtime value; [`Strict`], [`Inner`], [`Outer`] and
//! [`Left`] are the same modes as types, so that [`Treelize`](crate::Treelize)
//! can reject a `missing` value in a mode that never uses it at compile time.

pub use crate::treedef::Mode;

/// The strict mode as a type (the default of [`Treelize`](crate::Treelize)).
///
/// ```
/// use pytree_std::treelize::mode::{Mode, Strict, TreelizeMode};
/// assert_eq!(Strict::MODE, Mode::Strict);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Strict;

/// The inner mode as a type: keys present in every tree.
///
/// ```
/// use pytree_std::treelize::mode::{Inner, Mode, TreelizeMode};
/// assert_eq!(Inner::MODE, Mode::Inner);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Inner;

/// The outer mode as a type: keys present in any tree.
///
/// ```
/// use pytree_std::treelize::mode::{Mode, Outer, TreelizeMode};
/// assert_eq!(Outer::MODE, Mode::Outer);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outer;

/// The left mode as a type: keys of the leftmost tree.
///
/// ```
/// use pytree_std::treelize::mode::{Left, Mode, TreelizeMode};
/// assert_eq!(Left::MODE, Mode::Left);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Left;

/// A mode as a type; implemented by [`Strict`], [`Inner`], [`Outer`] and
/// [`Left`].
///
/// ```
/// use pytree_std::treelize::mode::{Left, Mode, TreelizeMode};
/// fn mode_of<M: TreelizeMode>(_: M) -> Mode { M::MODE }
/// assert_eq!(mode_of(Left), Mode::Left);
/// ```
pub trait TreelizeMode {
    /// The runtime value of the mode.
    const MODE: Mode;
}

impl TreelizeMode for Strict {
    const MODE: Mode = Mode::Strict;
}
impl TreelizeMode for Inner {
    const MODE: Mode = Mode::Inner;
}
impl TreelizeMode for Outer {
    const MODE: Mode = Mode::Outer;
}
impl TreelizeMode for Left {
    const MODE: Mode = Mode::Left;
}

/// No `missing` value was given: a slot that one tree lacks is an error.
///
/// ```
/// use pytree_std::treelize::mode::{NoMissing, Provide};
/// assert_eq!(Provide::<i32>::provide(&mut NoMissing), None);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoMissing;

/// A `missing` value, cloned into every slot that a tree lacks.
///
/// ```
/// use pytree_std::treelize::mode::{MissingValue, Provide};
/// assert_eq!(MissingValue(1).provide(), Some(1));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MissingValue<L>(pub L);

/// A `missing` generator, called once per slot that a tree lacks (so every
/// slot gets a fresh value, treevalue's `missing=lambda: []`).
///
/// ```
/// use pytree_std::treelize::mode::{MissingWith, Provide};
/// let mut calls = 0;
/// let mut fill = MissingWith(|| { calls += 1; Vec::<i32>::new() });
/// assert_eq!(fill.provide(), Some(vec![]));
/// assert_eq!(fill.provide(), Some(vec![]));
/// assert_eq!(calls, 2);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct MissingWith<G>(pub G);

/// What fills a slot that a tree lacks, for leaves of type `L`.
///
/// ```
/// use pytree_std::treelize::mode::{MissingValue, Provide};
/// let mut p = MissingValue(String::from("-"));
/// assert_eq!(Provide::<String>::provide(&mut p).as_deref(), Some("-"));
/// ```
pub trait Provide<L> {
    /// Whether a value is available at all (false for [`NoMissing`]).
    const GIVEN: bool;
    /// A value for one missing slot.
    fn provide(&mut self) -> Option<L>;
}

impl<L> Provide<L> for NoMissing {
    const GIVEN: bool = false;
    fn provide(&mut self) -> Option<L> {
        None
    }
}

impl<L: Clone> Provide<L> for MissingValue<L> {
    const GIVEN: bool = true;
    fn provide(&mut self) -> Option<L> {
        Some(self.0.clone())
    }
}

impl<L, G: FnMut() -> L> Provide<L> for MissingWith<G> {
    const GIVEN: bool = true;
    fn provide(&mut self) -> Option<L> {
        Some((self.0)())
    }
}

/// Which `missing` providers a mode accepts: every mode accepts
/// [`NoMissing`]; only [`Outer`] and [`Left`] accept a value or a generator
/// (strict mode fails on a missing key and inner mode drops it, so a
/// `missing` there would never be used: treevalue warns, Rust refuses).
///
/// ```
/// use pytree_std::treelize::mode::{Accepts, MissingValue, NoMissing, Outer, Strict};
/// fn accepts<M: Accepts<P>, P>() {}
/// accepts::<Strict, NoMissing>();
/// accepts::<Outer, MissingValue<i32>>();
/// ```
///
/// ```compile_fail
/// use pytree_std::treelize::mode::{Accepts, MissingValue, Strict};
/// fn accepts<M: Accepts<P>, P>() {}
/// accepts::<Strict, MissingValue<i32>>();
/// ```
#[diagnostic::on_unimplemented(
    message = "`missing` applies only to the outer and left modes, not to `{Self}`",
    label = "this mode never uses a `missing` value",
    note = "strict mode fails on a missing key and inner mode drops it; choose `mode::Outer` or `mode::Left`, or drop `missing`"
)]
pub trait Accepts<P> {}

impl<M: TreelizeMode> Accepts<NoMissing> for M {}
impl<L> Accepts<MissingValue<L>> for Outer {}
impl<L> Accepts<MissingValue<L>> for Left {}
impl<G> Accepts<MissingWith<G>> for Outer {}
impl<G> Accepts<MissingWith<G>> for Left {}
