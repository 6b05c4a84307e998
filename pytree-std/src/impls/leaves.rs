//! Primitive leaf types: every integer and float type, `bool`, `char`,
//! `String`.

use crate::Std;

pytree_core::impl_leaf!(Std =>
    i8, i16, i32, i64, i128, isize,
    u8, u16, u32, u64, u128, usize,
    f32, f64, bool, char, String,
);

/// Containers that may themselves be the leaves of a runtime-shaped tree
/// (`stack` of trees gives a `Tree<Vec<L>>`; a partition a
/// `Tree<Option<L>>`), lent by reference. This says only how such a leaf
/// is lent: as a typed value, a `Vec<T>` is still a sequence node. The
/// tree module gives `Tree<L>` itself the same impl with this macro.
macro_rules! lent_by_reference {
    ($(<$($p:ident),*> $t:ty),* $(,)?) => {$(
        impl<$($p: 'static),*> pytree_core::Leaf<Std> for $t {
            type Ref<'a> = &'a $t;
            type Mut<'a> = &'a mut $t;
            #[inline(always)]
            fn lend(&self) -> &Self {
                self
            }
            #[inline(always)]
            fn lend_mut(&mut self) -> &mut Self {
                self
            }
            #[inline]
            fn assign(slot: &mut Self, value: Self) -> Result<Self, pytree_core::Error> {
                Ok(std::mem::replace(slot, value))
            }
        }
    )*};
}

lent_by_reference!(
    <T> Vec<T>,
    <T> std::collections::VecDeque<T>,
    <T> Option<T>,
    <A, B> (A, B),
    <A, B, C> (A, B, C),
    <K, V> std::collections::BTreeMap<K, V>,
    <K, V> std::collections::HashMap<K, V>,
    <> pytree_core::Signature,
    <> pytree_core::DType,
    <> pytree_core::KeyPath,
);

pub(crate) use lent_by_reference;
