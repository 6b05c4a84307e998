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
        $crate::impls::shaped::one_leaf_pytree!(
            [] $t => $t, lend = |x| x, lend_mut = |x| x, same = |_, _| true,
            signature = |_| pytree_core::Signature::scalar($dtype),
            into_leaf = |x| x, from_leaf = Ok, from_leaf_or_panic = |x| x,
            uniform = Some(1), leaf_is_self = true,
        );
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
                    return Err($crate::impls::shaped::signature_error(
                        $signature(slot),
                        $signature(&value),
                    ));
                }
                Ok(std::mem::replace(slot, value))
            }
        });
        $crate::impls::shaped::one_leaf_pytree!(
            [] $t => $t, lend = |x| x, lend_mut = |x| x, same = $same, signature = $signature,
            into_leaf = |x| x, from_leaf = Ok, from_leaf_or_panic = |x| x, leaf_is_self = true,
        );
    };
}
