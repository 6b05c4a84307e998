//! The traits a pytree implements and the callbacks its walks call
//! (lib.rs, layer 4, lists the files). `flatten/` holds `Flatten` and
//! `Unflatten` (`mod.rs`) and, as its child modules, the helpers their
//! provided methods call (`defaults`, `elements`, `unwind`, `walks`),
//! which are generic over the traits and so name their parent.

pub(crate) mod boxed;
pub(crate) mod deep_recursion;
pub(crate) mod flatten;
pub(crate) mod leaf_as;
pub(crate) mod visit;
