//! The traits a pytree implements and the callbacks its walks call
//! (lib.rs, layer 4, lists the files). `flatten.rs` holds `Flatten` and
//! `Unflatten`; the provided methods' bodies call helpers generic over
//! them (`defaults`, `elements`, `unwind`, `walks`), which name the traits
//! back: the one loop of imports in this crate, inside this folder.

pub(crate) mod boxed;
pub(crate) mod deep_recursion;
pub(crate) mod defaults;
pub(crate) mod elements;
pub(crate) mod flatten;
pub(crate) mod leaf_as;
pub(crate) mod unwind;
pub(crate) mod visit;
pub(crate) mod walks;
