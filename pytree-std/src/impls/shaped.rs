//! What every leaf type with a shape shares (ndarray arrays, nalgebra
//! matrices, `AnyArray`, candle tensors, and the `half` scalars written
//! with the same macros): the signature checks and the macros that write
//! their `Leaf` and `Flatten`/`Unflatten` impls.

use pytree_core::{Error, ErrorKind, Signature};

/// The error for two leaves whose signatures (shape, dtype, device)
/// differ: `expected` is the first tree's (or the slot's), `found` the
/// other's.
#[cold]
pub(crate) fn signature_error(expected: Signature, found: Signature) -> Error {
    Error::new(ErrorKind::SignatureMismatch { expected, found })
}

/// For `zip_check` of leaves with shapes: `same` compares two leaves
/// without allocating; only on a mismatch are both signatures built, for
/// the error about the first other tree (1-based) that differs.
#[inline]
pub(crate) fn check_same_signature<L: ?Sized, const N: usize>(
    leaf: &L,
    others: [&L; N],
    same: impl Fn(&L, &L) -> bool,
    signature: impl Fn(&L) -> Signature,
) -> Result<(), Error> {
    match others.iter().position(|o| !same(leaf, o)) {
        None => Ok(()),
        Some(j) => Err(signature_error(signature(leaf), signature(others[j])).in_tree(j + 1)),
    }
}

/// `Leaf<Std>` for an owned array type lent as views (`$view<'a, ..>`,
/// `$view_mut<'a, ..>`, made by its methods `$lend` / `$lend_mut`): its
/// signature is its dtype and shape (`signature` of a view's `shape()`);
/// `assign` swaps the value's elements into the view (`swap`, no copy, no
/// `Clone` bound) and returns the old ones in the value; a value of
/// another shape is an error, and the view is unchanged.
#[cfg(any(feature = "ndarray", feature = "nalgebra"))]
macro_rules! array_leaf {
    (
        $(#[$doc:meta])*
        [$($gen:tt)*] $t:ty,
        $view:ident<$($va:ty),*> = $lend:ident, $view_mut:ident<$($vma:ty),*> = $lend_mut:ident,
        signature = $signature:expr, swap = |$slot:ident, $value:ident| $swap:expr $(,)?
    ) => {
        $(#[$doc])*
        impl<$($gen)*> pytree_core::Leaf<$crate::std_namespace::Std> for $t {
            type Ref<'a> = $view<'a, $($va),*>;
            type Mut<'a> = $view_mut<'a, $($vma),*>;
            const HAS_SHAPE: bool = true;

            #[inline]
            fn lend(&self) -> Self::Ref<'_> {
                self.$lend()
            }
            #[inline]
            fn lend_mut(&mut self) -> Self::Mut<'_> {
                self.$lend_mut()
            }
            fn signature(leaf: &Self::Ref<'_>) -> Option<pytree_core::Signature> {
                Some($signature(leaf.shape()))
            }
            fn assign(mut $slot: Self::Mut<'_>, mut $value: Self) -> Result<Self, pytree_core::Error> {
                if $slot.shape() != $value.shape() {
                    return Err($crate::impls::shaped::signature_error(
                        $signature($slot.shape()),
                        $signature($value.shape()),
                    ));
                }
                $swap;
                Ok($value)
            }
        }
    };
}
#[cfg(any(feature = "ndarray", feature = "nalgebra"))]
pub(crate) use array_leaf;

/// `Flatten` and `Unflatten` for a type that is one leaf with a shape (an
/// array, a matrix, an `AnyArray`, a candle tensor): `lend` / `lend_mut`
/// lend `$x` as its leaf type's views, `same` compares two values without
/// allocating and `signature` describes one for `zip_check`'s error;
/// `into_leaf`, `from_leaf` (for `unflatten`, fallible) and
/// `from_leaf_or_panic` (for the infallible walks, which have nothing to
/// build: see the ndarray and nalgebra module docs) convert between it and
/// its leaf type. `leaf_is_self` adds the leaf runs of a type that is its
/// own leaf; `uniform` sets `UNIFORM_LEAVES` (a scalar: `Some(1)`). A value
/// of another signature than the first tree's (the check was skipped) is
/// left as it is by `zip_mut_prechecked` and replaced by the first tree's
/// in `zip_with_prechecked`: `f` never sees signatures that differ.
macro_rules! one_leaf_pytree {
    (
        $(#[$doc:meta])*
        [$($gen:tt)*] $ty:ty => $leaf:ty,
        lend = |$x:ident| $lend:expr, lend_mut = |$y:ident| $lend_mut:expr,
        same = $same:expr, signature = $signature:expr,
        into_leaf = $into_leaf:expr, from_leaf = $from_leaf:expr,
        from_leaf_or_panic = $or_panic:expr
        $(, uniform = $uniform:expr)? $(, leaf_is_self = $self_leaf:tt)? $(,)?
    ) => {
        $(#[$doc])*
        impl<$($gen)*> pytree_core::Flatten<$crate::std_namespace::Std> for $ty {
            type Leaf = $leaf;
            $(const UNIFORM_LEAVES: Option<usize> = $uniform;)?
            #[inline]
            fn flatten_into<S: pytree_core::Sink<$leaf>>(self, sink: &mut S) {
                let into_leaf: fn(Self) -> $leaf = $into_leaf;
                sink.leaf(into_leaf(self))
            }
            /// One leaf (not uniform unless said: shapes can differ).
            #[inline]
            fn leaf_count_hint(&self) -> usize {
                1
            }
            #[inline]
            fn visit<'a, V>(&'a self, visitor: &mut V)
            where
                V: pytree_core::Visit<pytree_core::LeafRef<'a, $crate::std_namespace::Std, $leaf>>,
            {
                let $x = self;
                visitor.leaf($lend)
            }
            #[inline]
            fn visit_mut<'a, V>(&'a mut self, visitor: &mut V)
            where
                V: pytree_core::VisitMut<pytree_core::LeafMut<'a, $crate::std_namespace::Std, $leaf>>,
            {
                let $y = self;
                visitor.leaf($lend_mut)
            }
            #[inline]
            fn zip_check<const N: usize>(&self, others: [&Self; N]) -> Result<(), pytree_core::Error> {
                let same: fn(&Self, &Self) -> bool = $same;
                let signature: fn(&Self) -> pytree_core::Signature = $signature;
                $crate::impls::shaped::check_same_signature(self, others, same, signature)
            }
            #[inline]
            fn zip_mut_prechecked<'a, const N: usize, F>(&'a mut self, others: [&'a Self; N], f: &mut F)
            where
                F: FnMut(
                    pytree_core::LeafMut<'a, $crate::std_namespace::Std, $leaf>,
                    [pytree_core::LeafRef<'a, $crate::std_namespace::Std, $leaf>; N],
                ),
            {
                let same: fn(&Self, &Self) -> bool = $same;
                if others.iter().all(|o| same(self, o)) {
                    let $y = self;
                    f($lend_mut, others.map(|$x| $lend))
                }
            }
            #[inline]
            fn visit_slice<'a, V>(items: &'a [Self], visitor: &mut V)
            where
                V: pytree_core::Visit<pytree_core::LeafRef<'a, $crate::std_namespace::Std, $leaf>>,
            {
                visitor.leaf_run(items.iter().map(|$x| $lend))
            }
            #[inline]
            fn visit_slice_mut<'a, V>(items: &'a mut [Self], visitor: &mut V)
            where
                V: pytree_core::VisitMut<pytree_core::LeafMut<'a, $crate::std_namespace::Std, $leaf>>,
            {
                visitor.leaf_run(items.iter_mut().map(|$y| $lend_mut))
            }
            $(
                #[inline]
                fn flatten_vec<S: pytree_core::Sink<Self>>(items: Vec<Self>, sink: &mut S) {
                    let _ = $self_leaf;
                    sink.leaf_vec(items)
                }
            )?
        }

        $(#[$doc])*
        impl<$($gen)*> pytree_core::Unflatten<$crate::std_namespace::Std> for $ty {
            #[inline]
            fn unflatten_from<S: pytree_core::Source<$leaf>>(source: &mut S) -> Result<Self, pytree_core::Error> {
                let from_leaf: fn($leaf) -> Result<Self, pytree_core::Error> = $from_leaf;
                from_leaf(source.leaf()?)
            }
            #[inline]
            #[track_caller]
            fn map_leaves<F: FnMut($leaf) -> $leaf>(self, f: &mut F) -> Self {
                let into_leaf: fn(Self) -> $leaf = $into_leaf;
                let or_panic: fn($leaf) -> Self = $or_panic;
                or_panic(f(into_leaf(self)))
            }
            #[inline]
            #[track_caller]
            fn zip_with_prechecked<'a, const N: usize, F>(&'a self, others: [&'a Self; N], f: &mut F) -> Self
            where
                F: FnMut(
                    pytree_core::LeafRef<'a, $crate::std_namespace::Std, $leaf>,
                    [pytree_core::LeafRef<'a, $crate::std_namespace::Std, $leaf>; N],
                ) -> $leaf,
            {
                let same: fn(&Self, &Self) -> bool = $same;
                let or_panic: fn($leaf) -> Self = $or_panic;
                let others = others.map(|o| if same(self, o) { o } else { self });
                let $x = self;
                or_panic(f($lend, others.map(|$x| $lend)))
            }
            $(
                #[inline]
                fn unflatten_vec<S: pytree_core::Source<Self>>(
                    len: usize,
                    source: &mut S,
                ) -> Result<Vec<Self>, pytree_core::Error> {
                    let _ = $self_leaf;
                    source.leaf_vec(len)
                }
            )?
        }
    };
}
pub(crate) use one_leaf_pytree;
