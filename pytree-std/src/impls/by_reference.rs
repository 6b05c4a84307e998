//! `leaf_by_reference!`: [`impl_leaf!`](pytree_core::impl_leaf) for the
//! foreign leaf types of this crate's features, with their own signatures.
//! `impl_leaf!` describes a type by [`DType::of`](pytree_core::DType::of),
//! which knows only Rust's primitives; these types say what they are:
//!
//! - `scalar T => dtype`: a scalar leaf (`half::f16`), a 0-d signature of
//!   that dtype; no shape, so multi-tree checks cost nothing.
//! - `shaped T, signature = f, same = g`: a leaf with a shape (a candle
//!   `Tensor`) lent by reference: `f(&T) -> Signature`, `g(&T, &T)` true
//!   when two leaves have the same signature (compared without
//!   allocating). `zip_check` compares them, and `assign` (`set`,
//!   `set_subtree`) refuses a value of another signature.

macro_rules! leaf_by_reference {
    (scalar $t:ty => $dtype:expr) => {
        $crate::std_namespace::lent_by_reference!(@impl <> $t {
            #[inline]
            fn signature(_leaf: &&Self) -> Option<pytree_core::Signature> {
                Some(pytree_core::Signature::scalar($dtype))
            }
            #[inline]
            fn assign(slot: &mut Self, value: Self) -> Result<Self, pytree_core::Error> {
                Ok(std::mem::replace(slot, value))
            }
        });
        leaf_by_reference!(@walks $t, uniform = Some(1), check = |_leaf: &$t, _others| Ok(()),
            same = |_: &$t, _: &$t| true);
    };
    (shaped $t:ty, signature = $signature:path, same = $same:path) => {
        $crate::std_namespace::lent_by_reference!(@impl <> $t {
            const HAS_SHAPE: bool = true;
            #[inline]
            fn signature(leaf: &&Self) -> Option<pytree_core::Signature> {
                Some($signature(leaf))
            }
            /// Replaces the leaf by one of the same signature; another
            /// signature is an error and nothing changes.
            #[inline]
            fn assign(slot: &mut Self, value: Self) -> Result<Self, pytree_core::Error> {
                if !$same(slot, &value) {
                    return Err($crate::impls::signature_error(
                        $signature(slot),
                        $signature(&value),
                    ));
                }
                Ok(std::mem::replace(slot, value))
            }
        });
        leaf_by_reference!(@walks $t, uniform = None, check = |leaf: &$t, others| {
            $crate::impls::check_same_signature(leaf, others, $same, $signature)
        }, same = $same);
    };
    (@walks $t:ty, uniform = $uniform:expr, check = $check:expr, same = $same:expr) => {
        impl pytree_core::Flatten<$crate::std_namespace::Std> for $t {
            type Leaf = $t;
            // Scalars: `Some(1)`. Shaped leaves: `None`, their signatures
            // can differ, so containers must run their `zip_check`.
            const UNIFORM_LEAVES: Option<usize> = $uniform;
            #[inline]
            fn leaf_count_hint(&self) -> usize {
                1
            }
            #[inline]
            fn flatten_into<S: pytree_core::Sink<Self>>(self, sink: &mut S) {
                sink.leaf(self)
            }
            #[inline]
            fn visit<'a, V: pytree_core::Visit<&'a Self>>(&'a self, visitor: &mut V) {
                visitor.leaf(self)
            }
            #[inline]
            fn visit_mut<'a, V: pytree_core::VisitMut<&'a mut Self>>(&'a mut self, visitor: &mut V) {
                visitor.leaf(self)
            }
            #[inline]
            fn zip_check<const N: usize>(&self, others: [&Self; N]) -> Result<(), pytree_core::Error> {
                ($check)(self, others)
            }
            #[inline]
            fn zip_mut_prechecked<'a, const N: usize, F>(&'a mut self, others: [&'a Self; N], f: &mut F)
            where
                F: FnMut(&'a mut Self, [&'a Self; N]),
            {
                // A leaf of another signature (the check was skipped): left
                // as it is.
                if others.iter().all(|o| ($same)(self, o)) {
                    f(self, others)
                }
            }
            #[inline]
            fn flatten_vec<S: pytree_core::Sink<Self>>(items: Vec<Self>, sink: &mut S) {
                sink.leaf_vec(items)
            }
            #[inline]
            fn visit_slice<'a, V: pytree_core::Visit<&'a Self>>(items: &'a [Self], visitor: &mut V) {
                visitor.leaf_run(items.iter())
            }
            #[inline]
            fn visit_slice_mut<'a, V: pytree_core::VisitMut<&'a mut Self>>(
                items: &'a mut [Self],
                visitor: &mut V,
            ) {
                visitor.leaf_run(items.iter_mut())
            }
        }
        impl pytree_core::Unflatten<$crate::std_namespace::Std> for $t {
            #[inline]
            fn unflatten_from<S: pytree_core::Source<Self>>(source: &mut S) -> Result<Self, pytree_core::Error> {
                source.leaf()
            }
            #[inline]
            fn unflatten_vec<S: pytree_core::Source<Self>>(
                len: usize,
                source: &mut S,
            ) -> Result<Vec<Self>, pytree_core::Error> {
                source.leaf_vec(len)
            }
            #[inline]
            fn map_leaves<F: FnMut(Self) -> Self>(self, f: &mut F) -> Self {
                f(self)
            }
            #[inline]
            fn zip_with_prechecked<'a, const N: usize, F>(&'a self, others: [&'a Self; N], f: &mut F) -> Self
            where
                F: FnMut(&'a Self, [&'a Self; N]) -> Self,
            {
                // A leaf of another signature (the check was skipped) is
                // replaced by `self`: `f` never sees signatures that differ.
                f(self, others.map(|o| if ($same)(self, o) { o } else { self }))
            }
        }
    };
}
