//! The two traits every pytree implements: [`Flatten`] (walk the value) and
//! [`Unflatten`] (rebuild it from a TreeDef and leaves). `#[derive(PyTree)]`
//! writes both; `pytree-std` implements them for std containers and
//! primitive leaves.
//!
//! `Ns` is the *namespace*: a marker type that says which registry of impls
//! is meant (optree's namespaces). It also makes impls for foreign types
//! legal in `pytree-std` under the orphan rule: `impl Flatten<Std> for
//! half::f16` is allowed there because `Std`, its std namespace marker, is
//! local to that crate.

pub(crate) mod defaults;
pub(crate) mod elements;
pub(crate) mod unwind;
pub(crate) mod walks;

use alloc::vec::Vec;

use crate::error::Error;
use crate::leaf::{Leaf, LeafMut, LeafRef};
use crate::paths::key_path::{ErasableKey, KeyRef};
use crate::sources::source::Source;
use crate::traits::visit::{LeavesOnly, Sink, Visit, VisitMut};
use unwind::Unwinding;

/// A value that is a pytree: containers whose non-container parts are leaves
/// of one type, [`Flatten::Leaf`].
///
/// The methods walk the value in pre-order; the free functions of
/// `pytree_std` (`flatten`, `leaves`, `map`, ...) are built on them. Implement
/// it with `#[derive(PyTree)]`; a hand-written impl writes the three walks
/// ([`flatten_into`](Flatten::flatten_into), [`visit`](Flatten::visit),
/// [`visit_mut`](Flatten::visit_mut): report the node, then each child
/// between `enter` and `exit`), and [`Unflatten::unflatten_from`] to be
/// rebuilt. Everything else is provided, built from those four: the checks
/// and in-place updates of several trees here
/// ([`zip_check`](Flatten::zip_check),
/// [`zip_mut_prechecked`](Flatten::zip_mut_prechecked)), and the methods
/// that build a new value in [`Unflatten`]
/// ([`map_leaves`](Unflatten::map_leaves),
/// [`zip_with_prechecked`](Unflatten::zip_with_prechecked)). The derive and
/// the containers override them with walks that build nothing.
///
/// ```
/// use pytree_std::{Flatten, Std};
/// let t = (1.0f32, vec![2.0f32, 3.0]);
/// let mut n = 0;
/// pytree_std::leaves(&t).into_iter().for_each(|_| n += 1);
/// assert_eq!(n, 3);
/// fn leaf_type<T: Flatten<Std, Leaf = f32>>(_: &T) {}
/// leaf_type(&t);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a pytree in namespace `{Ns}`",
    label = "not a pytree",
    note = "derive `PyTree` for it, mark the type `#[pytree(leaf)]` if it is a leaf, or mark the field `#[pytree(static)]` if it is configuration",
    note = "for a type from another crate: enable pytree-std's feature for it if there is one (`ndarray`, `candle`, `half`, `nalgebra`), declare it a leaf of your own namespace (`pytree_std::namespace!(pub struct MyNs; leaves = [Type])`, then `#[pytree(namespace = MyNs)]`), or wrap it in a newtype marked `#[pytree(leaf)]`"
)]
pub trait Flatten<Ns>: Sized {
    /// The type of every leaf. The walks by reference lend it as
    /// [`Leaf::Ref`] / [`Leaf::Mut`] (`&L` / `&mut L` for scalars, views
    /// for arrays).
    type Leaf: Leaf<Ns>;

    /// Walks the value by move, handing every leaf to `sink`.
    ///
    /// ```
    /// use pytree_std::{Flatten, Sink, Std};
    /// struct Collect(Vec<i32>);
    /// impl Sink<i32> for Collect { fn leaf(&mut self, x: i32) { self.0.push(x) } }
    /// let mut c = Collect(Vec::new());
    /// Flatten::<Std>::flatten_into((1, [2, 3]), &mut c);
    /// assert_eq!(c.0, [1, 2, 3]);
    /// ```
    fn flatten_into<S: Sink<Self::Leaf>>(self, sink: &mut S);

    /// Walks the value by reference, lending each leaf as
    /// [`LeafRef`] for the borrow of the value.
    ///
    /// ```
    /// use pytree_std::{Flatten, KeyRef, Std, Visit};
    /// /// Records the depth of each leaf.
    /// struct Depths { depth: usize, out: Vec<usize> }
    /// impl Visit<&u8> for Depths {
    ///     fn leaf(&mut self, _: &u8) { self.out.push(self.depth) }
    ///     fn enter(&mut self, _: KeyRef<'_>) { self.depth += 1 }
    ///     fn exit(&mut self) { self.depth -= 1 }
    /// }
    /// let mut v = Depths { depth: 0, out: vec![] };
    /// Flatten::<Std>::visit(&(1u8, vec![2u8]), &mut v);
    /// assert_eq!(v.out, [1, 2]);
    /// ```
    fn visit<'a, V: Visit<LeafRef<'a, Ns, Self::Leaf>>>(&'a self, visitor: &mut V);

    /// Walks the value by mutable reference, lending each leaf as
    /// [`LeafMut`] for the whole borrow of the value (leaves are disjoint).
    ///
    /// ```
    /// use pytree_std::{Flatten, Std, VisitMut};
    /// struct Negate;
    /// impl VisitMut<&mut i32> for Negate { fn leaf(&mut self, x: &mut i32) { *x = -*x } }
    /// let mut t = vec![(1, 2)];
    /// Flatten::<Std>::visit_mut(&mut t, &mut Negate);
    /// assert_eq!(t, [(-1, -2)]);
    /// ```
    fn visit_mut<'a, V: VisitMut<LeafMut<'a, Ns, Self::Leaf>>>(&'a mut self, visitor: &mut V);

    /// Checks that `self` and `others` can be zipped: sequence lengths, map
    /// keys, `Option` holes, enum variants and static fields match. The
    /// error names the first mismatch's path and its tree (1-based in
    /// `others`). Nothing is built and nothing is allocated on success.
    ///
    /// ```
    /// use pytree_std::{Flatten, Std};
    /// let a = (1, vec![2]);
    /// assert!(Flatten::<Std>::zip_check(&a, [&(10, vec![20])]).is_ok());
    /// let err = Flatten::<Std>::zip_check(&a, [&(10, vec![])]).unwrap_err();
    /// assert_eq!(err.to_string(), "tree 1 at [1]: sequence length mismatch: expected 1, found 0");
    /// ```
    ///
    /// Provided: the default compares the trees' structures (built with
    /// [`visit`](Flatten::visit)) and, for leaves with a shape, their
    /// signatures; the error names the first place that differs. The
    /// derive and the std containers override it with a walk that builds
    /// nothing.
    #[inline]
    fn zip_check<const N: usize>(&self, others: [&Self; N]) -> Result<(), Error> {
        defaults::zip_check::<Ns, Self, N>(self, others)
    }

    /// Updates `self` in place from `others`, leaf by leaf, for trees that
    /// passed [`zip_check`](Flatten::zip_check). It never panics: where
    /// another tree differs from `self` anyway (the check was skipped),
    /// that part of `self` is left as it is.
    ///
    /// ```
    /// use pytree_std::{Flatten, Std};
    /// let mut p = vec![1.0f64, 2.0];
    /// let g = vec![0.5, 0.5];
    /// p.zip_check([&g]).unwrap();
    /// Flatten::<Std>::zip_mut_prechecked(&mut p, [&g], &mut |x, [g]| *x -= g);
    /// assert_eq!(p, [0.5, 1.5]);
    /// ```
    ///
    /// Provided: the default collects the other trees' leaves with
    /// [`visit`](Flatten::visit), then walks `self` with
    /// [`visit_mut`](Flatten::visit_mut), and leaves `self` as it is when
    /// a tree has another number of leaves. The derive and the std
    /// containers override it with a walk that collects nothing.
    #[inline]
    fn zip_mut_prechecked<'a, const N: usize, F>(&'a mut self, others: [&'a Self; N], f: &mut F)
    where
        F: FnMut(LeafMut<'a, Ns, Self::Leaf>, [LeafRef<'a, Ns, Self::Leaf>; N]),
    {
        defaults::zip_mut_prechecked::<Ns, Self, N, F>(self, others, f)
    }

    /// Updates `self` in place from `others`, leaf by leaf:
    /// `f(&mut leaf_of_self, [leaf_of_other; N])`. Same checks as
    /// [`zip_with`](Unflatten::zip_with), all made before the first update:
    /// on error, `self` is unchanged.
    ///
    /// ```
    /// use pytree_std::{Flatten, Std};
    /// let mut p = vec![1.0f64, 2.0];
    /// Flatten::<Std>::zip_mut(&mut p, [&vec![0.5, 0.5]], &mut |x, [g]| *x -= g).unwrap();
    /// assert_eq!(p, [0.5, 1.5]);
    /// assert!(Flatten::<Std>::zip_mut(&mut p, [&vec![1.0]], &mut |x, [g]| *x -= g).is_err());
    /// assert_eq!(p, [0.5, 1.5]);
    /// ```
    #[inline]
    fn zip_mut<'a, const N: usize, F>(
        &'a mut self,
        others: [&'a Self; N],
        f: &mut F,
    ) -> Result<(), Error>
    where
        F: FnMut(LeafMut<'a, Ns, Self::Leaf>, [LeafRef<'a, Ns, Self::Leaf>; N]),
    {
        self.zip_check(others)?;
        self.zip_mut_prechecked(others, f);
        Ok(())
    }

    /// `Some(n)` when every value of the type has the same structure, `n`
    /// leaves, and nothing that can differ between two values (no length,
    /// variant, `Option` hole, map key, static data or leaf signature): a
    /// scalar leaf is `Some(1)`; a struct or tuple of such, the sum; an
    /// array `[T; N]`, `N` times `T`'s; a box, its content's. `None`
    /// otherwise (sequences, options, enums, arrays of ndarray). Containers
    /// skip the [`zip_check`](Flatten::zip_check) walk over such elements
    /// and size the buffers that collect leaves from it.
    #[doc(hidden)]
    const UNIFORM_LEAVES: Option<usize> = None;

    /// A lower bound of the number of leaves, in time proportional to the
    /// type's own fields (not its elements, never through a box or an
    /// option, so deep recursive values cost nothing): exact for values of
    /// uniform types, and for structs and sequences of them (a `Vec<Layer>`
    /// of uniform layers is its length times a layer's). The operations
    /// that collect leaves size their buffers from it.
    #[doc(hidden)]
    #[inline]
    fn leaf_count_hint(&self) -> usize {
        Self::UNIFORM_LEAVES.unwrap_or(0)
    }

    /// Flattens the elements of a sequence. Leaf types override it to hand
    /// the whole `Vec` over at once. After the first element the sink may
    /// reserve room for the others like it ([`Sink::reserve_like`]).
    #[doc(hidden)]
    #[inline]
    fn flatten_vec<S: Sink<Self::Leaf>>(items: Vec<Self>, sink: &mut S) {
        let rest = items.len().saturating_sub(1);
        // The elements not handed on yet are held in a guard, so that a
        // sink that panics drops deep elements with a walk (`unwind.rs`);
        // taken back (empty) at the end, it costs nothing.
        // The iterator is held (not the collection): what it has not yet
        // yielded is what a panic leaves to drop.
        let iter = items.into_iter();
        let mut items = Unwinding::elements::<Ns>(iter);
        let Some(first) = items.get_mut().next() else {
            drop(items.take());
            return;
        };
        let before = sink.stored();
        sink.enter(KeyRef::Index(0));
        first.flatten_into(sink);
        sink.exit();
        if let Some(each) = Self::UNIFORM_LEAVES {
            if rest > 0 {
                if let Some(out) = sink.repeat_like(before, rest, each) {
                    // The records of the rest are written: only their leaves.
                    let start = out.len();
                    let mut leaves = LeavesOnly::new(out);
                    // Uniform elements have a fixed, finite structure
                    // (no `Option` or sequence that could recurse), so
                    // their drop is shallow: no guard needed here.
                    for item in items.take() {
                        item.flatten_into(&mut leaves);
                    }
                    drop(leaves);
                    let pushed = out.len() - start;
                    assert!(
                        Some(pushed) == each.checked_mul(rest),
                        "a Flatten impl's UNIFORM_LEAVES is wrong: {rest} elements gave {pushed} leaves, not {each} each"
                    );
                    return;
                }
            }
        }
        sink.reserve_like(before, rest);
        unwind::flatten_elements::<Ns, _, _>(items, 1, sink);
    }

    /// Visits the values of a map, each under its key, in leaf order.
    /// Leaf types override it (one [`Visit::leaf_entries`] call).
    #[doc(hidden)]
    #[inline]
    fn visit_entries<'a, K, I, V>(entries: I, visitor: &mut V)
    where
        K: ErasableKey + 'a,
        I: ExactSizeIterator<Item = (&'a K, &'a Self)>,
        V: Visit<LeafRef<'a, Ns, Self::Leaf>>,
        Self: 'a,
    {
        for (k, v) in entries {
            visitor.enter(KeyRef::Key(k));
            v.visit(visitor);
            visitor.exit();
        }
    }

    /// Visits the elements of a sequence. Leaf types override it.
    #[doc(hidden)]
    #[inline]
    fn visit_slice<'a, V: Visit<LeafRef<'a, Ns, Self::Leaf>>>(items: &'a [Self], visitor: &mut V) {
        for (i, item) in items.iter().enumerate() {
            visitor.enter(KeyRef::Index(i));
            item.visit(visitor);
            visitor.exit();
        }
    }

    /// Visits the elements of a sequence mutably. Leaf types override it.
    #[doc(hidden)]
    #[inline]
    fn visit_slice_mut<'a, V: VisitMut<LeafMut<'a, Ns, Self::Leaf>>>(
        items: &'a mut [Self],
        visitor: &mut V,
    ) {
        for (i, item) in items.iter_mut().enumerate() {
            visitor.enter(KeyRef::Index(i));
            item.visit_mut(visitor);
            visitor.exit();
        }
    }
}

/// A pytree that can be rebuilt from a [`TreeDef`](crate::TreeDef) and its
/// leaves, and so can be mapped into a new value.
///
/// A hand-written impl writes [`unflatten_from`](Unflatten::unflatten_from);
/// [`map_leaves`](Unflatten::map_leaves),
/// [`zip_with_prechecked`](Unflatten::zip_with_prechecked) and
/// [`zip_with`](Unflatten::zip_with) are provided.
///
/// Unflattening builds values directly (struct literals), never through a
/// user constructor, so JAX's "custom pytrees and initialization" gotcha
/// (an `__init__` that validates or transforms its arguments running on
/// placeholder leaves) cannot happen here.
///
/// An implementation must read a given TreeDef the same way whatever the
/// values of the leaves (derived and std impls do): after one read of a
/// TreeDef as a type has checked every record, [`unflatten`](crate::ops::basic::unflatten)
/// trusts that TreeDef for that type and skips the checks. An impl that
/// breaks this gets errors or a wrongly shaped value, never undefined
/// behaviour. Readers that take any structure through
/// [`Source::any_node`] are always checked.
///
/// ```
/// let (leaves, def) = pytree_std::flatten((1u8, Some(2u8)));
/// let back: (u8, Option<u8>) = pytree_std::unflatten(&def, leaves).unwrap();
/// assert_eq!(back, (1, Some(2)));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a pytree that can be rebuilt in namespace `{Ns}`",
    label = "not a rebuildable pytree (`Unflatten`)",
    note = "derive `PyTree` for it, or mark the type `#[pytree(leaf)]` if it is a leaf",
    note = "for a type from another crate: enable pytree-std's feature for it if there is one (`ndarray`, `candle`, `half`, `nalgebra`), declare it a leaf of your own namespace (`pytree_std::namespace!(pub struct MyNs; leaves = [Type])`, then `#[pytree(namespace = MyNs)]`), or wrap it in a newtype marked `#[pytree(leaf)]`"
)]
pub trait Unflatten<Ns>: Flatten<Ns> {
    /// Rebuilds a value, reading nodes and leaves from `source` in pre-order.
    ///
    /// ```
    /// use pytree_std::{DefSource, Std, Unflatten};
    /// let def = pytree_std::structure(&Some(0u8));
    /// let mut src = DefSource::new(&def, std::iter::once(5u8));
    /// assert_eq!(<Option<u8> as Unflatten<Std>>::unflatten_from(&mut src).unwrap(), Some(5));
    /// ```
    fn unflatten_from<S: Source<Self::Leaf>>(source: &mut S) -> Result<Self, Error>;

    /// Replaces every leaf by `f(leaf)`, keeping the structure.
    ///
    /// ```
    /// use pytree_std::{Std, Unflatten};
    /// let t = Unflatten::<Std>::map_leaves(vec![Some(1), None], &mut |x| x + 1);
    /// assert_eq!(t, [Some(2), None]);
    /// ```
    ///
    /// Provided: the default flattens the value, maps the leaves and
    /// rebuilds it with [`unflatten_from`](Unflatten::unflatten_from) (one
    /// TreeDef built). The derive and the std containers override it with a
    /// walk that builds no TreeDef and allocates nothing beyond what the
    /// value holds.
    ///
    /// # Panics
    ///
    /// The default panics if `unflatten_from` cannot read back what the
    /// type's own [`Flatten::flatten_into`] wrote: a bug in those two
    /// impls, never a property of the leaves or of `f`.
    #[inline]
    fn map_leaves<F: FnMut(Self::Leaf) -> Self::Leaf>(self, f: &mut F) -> Self {
        defaults::map_leaves::<Ns, Self, F>(self, f)
    }

    /// Builds a new value of the same structure from `self` and `others`,
    /// leaf by leaf: `f(leaf_of_self, [leaf_of_other; N])`, for trees that
    /// passed [`zip_check`](Flatten::zip_check). It returns the value itself,
    /// not a `Result`, so a derived struct is built in place as a
    /// hand-written one is.
    ///
    /// Where a tree differs from `self` anyway (the check was skipped),
    /// `self`'s part stands in for that tree's (the default: `self`'s
    /// leaves stand in for all of that tree's), so the result has `self`'s
    /// structure. Call [`zip_with`](Unflatten::zip_with), which checks
    /// first, unless the check has just been made.
    ///
    /// ```
    /// use pytree_std::{Flatten, Std, Unflatten};
    /// let (a, b) = ((1, vec![2]), (10, vec![20]));
    /// a.zip_check([&b]).unwrap();
    /// let t = Unflatten::<Std>::zip_with_prechecked(&a, [&b], &mut |x, [y]| x + y);
    /// assert_eq!(t, (11, vec![22]));
    /// ```
    ///
    /// Provided: the default lends the leaves of every tree with
    /// [`visit`](Flatten::visit), calls `f` on them in order and rebuilds
    /// the value from `self`'s structure with
    /// [`unflatten_from`](Unflatten::unflatten_from). The derive and the std
    /// containers override it with a walk that builds no TreeDef.
    ///
    /// # Panics
    ///
    /// As [`map_leaves`](Unflatten::map_leaves): the default panics only if
    /// the type's `unflatten_from` cannot read back its own `flatten_into`.
    #[inline]
    fn zip_with_prechecked<'a, const N: usize, F>(
        &'a self,
        others: [&'a Self; N],
        f: &mut F,
    ) -> Self
    where
        F: FnMut(LeafRef<'a, Ns, Self::Leaf>, [LeafRef<'a, Ns, Self::Leaf>; N]) -> Self::Leaf,
    {
        defaults::zip_with_prechecked::<Ns, Self, N, F>(self, others, f)
    }

    /// Builds a new value of the same structure from `self` and `others`,
    /// leaf by leaf: `f(leaf_of_self, [leaf_of_other; N])`. Sequence lengths,
    /// map keys, `Option` holes, enum variants and static fields must match,
    /// else the error names the path and the tree (1-based in `others`).
    /// It is [`zip_check`](Flatten::zip_check) then
    /// [`zip_with_prechecked`](Unflatten::zip_with_prechecked).
    ///
    /// ```
    /// use pytree_std::{Std, Unflatten};
    /// let a = (1, vec![2]);
    /// let t = Unflatten::<Std>::zip_with(&a, [&(10, vec![20])], &mut |x, [y]| x + y).unwrap();
    /// assert_eq!(t, (11, vec![22]));
    /// assert!(Unflatten::<Std>::zip_with(&a, [&(10, vec![])], &mut |x, [y]| x + y).is_err());
    /// ```
    #[inline]
    fn zip_with<'a, const N: usize, F>(
        &'a self,
        others: [&'a Self; N],
        f: &mut F,
    ) -> Result<Self, Error>
    where
        F: FnMut(LeafRef<'a, Ns, Self::Leaf>, [LeafRef<'a, Ns, Self::Leaf>; N]) -> Self::Leaf,
    {
        self.zip_check(others)?;
        Ok(self.zip_with_prechecked(others, f))
    }

    /// Rebuilds the `len` elements of a sequence, each written straight
    /// into the `Vec` (`traits/elements.rs`).
    /// Leaf types override it to take the leaves at once.
    #[doc(hidden)]
    #[inline]
    fn unflatten_vec<S: Source<Self::Leaf>>(
        len: usize,
        source: &mut S,
    ) -> Result<Vec<Self>, Error> {
        elements::unflatten_elements::<Ns, Self, S>(len, source)
    }
}

/// Writes [`Flatten::zip_mut_prechecked`] in an impl, its signature once
/// for every container: `zip_mut_method!(N, |this, others, f| body)`,
/// `N` the name of the number of other trees, `this` bound to `self`.
macro_rules! zip_mut_method {
    ($n:ident, |$this:ident, $others:ident, $f:ident| $body:expr) => {
        #[inline]
        fn zip_mut_prechecked<'a, const $n: usize, F>(
            &'a mut self,
            $others: [&'a Self; $n],
            $f: &mut F,
        ) where
            F: FnMut(
                $crate::leaf::LeafMut<'a, Ns, Self::Leaf>,
                [$crate::leaf::LeafRef<'a, Ns, Self::Leaf>; $n],
            ),
        {
            let $this = self;
            $body
        }
    };
}

/// Writes [`Unflatten::zip_with_prechecked`] in an impl, as
/// [`zip_mut_method!`] writes `zip_mut_prechecked`.
macro_rules! zip_with_method {
    ($n:ident, |$this:ident, $others:ident, $f:ident| $body:expr) => {
        #[inline]
        fn zip_with_prechecked<'a, const $n: usize, F>(
            &'a self,
            $others: [&'a Self; $n],
            $f: &mut F,
        ) -> Self
        where
            F: FnMut(
                $crate::leaf::LeafRef<'a, Ns, Self::Leaf>,
                [$crate::leaf::LeafRef<'a, Ns, Self::Leaf>; $n],
            ) -> Self::Leaf,
        {
            let $this = self;
            $body
        }
    };
}
pub(crate) use {zip_mut_method, zip_with_method};
