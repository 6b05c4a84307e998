//! Primitive leaf types: every integer and float type, `bool`, `char`,
//! `String`.

use crate::std_namespace::Std;

pytree_core::impl_leaf!(Std =>
    i8, i16, i32, i64, i128, isize,
    u8, u16, u32, u64, u128, usize,
    f32, f64, bool, char, String,
);

// Containers that may themselves be the leaves of a runtime-shaped tree
// (`stack` of trees gives a `Tree<Vec<L>>`; a partition a
// `Tree<Option<L>>`), lent by reference. This says only how such a leaf
// is lent: as a typed value, a `Vec<T>` is still a sequence node.
crate::std_namespace::lent_by_reference!(
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
