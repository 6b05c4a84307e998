//! The traits a pytree implements and the callbacks its walks call.
//!
//! - `flatten`: [`Flatten`](crate::Flatten), [`Unflatten`](crate::Unflatten).
//! - `visit`: [`Sink`](crate::Sink), [`Visit`](crate::Visit),
//!   [`VisitMut`](crate::VisitMut).
//! - `defaults`: the provided `zip_check`, `zip_mut_prechecked`,
//!   `map_leaves` and `zip_with_prechecked` of a hand-written node, built
//!   from its walks and the basic operations (the one import of this
//!   crate that runs up a layer: see lib.rs).
//! - `elements`: the elements of a sequence, each built straight into its
//!   `Vec` (the provided `Unflatten::unflatten_vec`).
//! - `unwind`: what a consuming walk stopped halfway holds, dropped by a
//!   walk.
//! - `deep_recursion`: walks that continue on a heap stack segment when the
//!   stack runs low.
//! - `boxed`: `Box<T>` for every namespace (a fundamental type, so the
//!   impls are legal here and nowhere else).
//! - `leaf_as`: the callbacks through which a field's leaves stand as the
//!   leaves of a `#[pytree(leaf_type = L)]` struct ([`LeafAs`](crate::LeafAs)).

pub(crate) mod boxed;
pub(crate) mod deep_recursion;
pub(crate) mod defaults;
pub(crate) mod elements;
pub(crate) mod flatten;
pub(crate) mod leaf_as;
pub(crate) mod unwind;
pub(crate) mod visit;
pub(crate) mod walks;
