//! The impls for std types, one module per family: containers
//! (sequences, maps, `Option`, tuples, `Rc`/`Arc`) are written once as
//! macros over a namespace, expanded here for `Std` and by
//! [`std_containers!`](crate::std_containers) for a user namespace; leaf
//! types (primitives, and the foreign types behind features) are `Std`'s.

mod leaves;
mod maps;
mod option;
mod sequences;
mod shared;
mod tuples;

pub(crate) use pytree_core::__private::all_some;
pub(crate) use pytree_core::__private::check_lengths;

/// Every std container impl for namespace `$ns`: `Vec`, `VecDeque`,
/// arrays, tuples of 1 to 12, `BTreeMap`, `HashMap`, `Option`, `Rc`,
/// `Arc` (`Box` is every namespace's already). With
/// [`impl_leaf!`](crate::impl_leaf) for its leaf types, a user namespace
/// is complete: see [`namespace!`](crate::namespace).
///
/// ```
/// use pytree_std::{Flatten, Visit};
/// pub struct Coarse;
/// pytree_std::std_containers!(Coarse);
/// pytree_std::impl_leaf!(Coarse => f64);
/// struct Sum(f64);
/// impl Visit<&f64> for Sum { fn leaf(&mut self, x: &f64) { self.0 += x } }
/// let mut sum = Sum(0.0);
/// Flatten::<Coarse>::visit(&vec![(Some(1.0f64), 2.0f64)], &mut sum);
/// assert_eq!(sum.0, 3.0);
/// ```
#[macro_export]
macro_rules! std_containers {
    ($ns:ty) => {
        $crate::__pytree_sequences!($ns);
        $crate::__pytree_maps!($ns);
        $crate::__pytree_option!($ns);
        $crate::__pytree_tuples!($ns);
        $crate::__pytree_shared!($ns);
    };
}

std_containers!(crate::Std);

/// Declares a namespace of your own: the marker type, every std container
/// ([`std_containers!`](crate::std_containers)), and your leaf types
/// ([`impl_leaf!`](crate::impl_leaf), lent by reference). A leaf type from
/// a crate this one does not ship (a `tch::Tensor`) needs no newtype: the
/// orphan rule allows `impl Flatten<YourNs> for tch::Tensor` because the
/// namespace is yours. Derive for it with `#[pytree(namespace = YourNs)]`.
///
/// ```
/// use std::num::Wrapping; // stands for a tensor type of another crate
/// use pytree_std::PyTree;
///
/// pytree_std::namespace!(pub struct Ring; leaves = [Wrapping<u8>]);
///
/// #[derive(PyTree, Debug, PartialEq)]
/// #[pytree(namespace = Ring)]
/// struct Layer { w: Vec<Wrapping<u8>>, b: Option<Wrapping<u8>> }
///
/// let layer = Layer { w: vec![Wrapping(250), Wrapping(3)], b: Some(Wrapping(7)) };
/// let (leaves, def) = pytree_core::flatten::<Ring, _>(layer);
/// assert_eq!(leaves.len(), 3);
/// assert_eq!(def.to_string(), "Layer { w: [*, *], b: Some(*) }");
/// ```
#[macro_export]
macro_rules! namespace {
    ($(#[$meta:meta])* $vis:vis struct $name:ident $(; leaves = [$($leaf:ty),+ $(,)?])? $(;)?) => {
        $(#[$meta])*
        $vis struct $name;
        $crate::std_containers!($name);
        $( $crate::impl_leaf!($name => $($leaf),+); )?
    };
}
