//! Primitive leaf types: every integer and float type, `bool`, `char`,
//! `String`.

use crate::Std;

pytree_core::impl_leaf!(Std =>
    i8, i16, i32, i64, i128, isize,
    u8, u16, u32, u64, u128, usize,
    f32, f64, bool, char, String,
);
