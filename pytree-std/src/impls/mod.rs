//! The `Std` namespace's impls, one module per family of std types.

mod leaves;
mod maps;
mod option;
mod sequences;
mod shared;
mod tuples;

pub(crate) use pytree_core::__private::all_some;
pub(crate) use pytree_core::__private::check_lengths;
