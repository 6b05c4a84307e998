//! The traits a pytree implements and the callbacks its walks call.
//!
//! - `flatten`: [`Flatten`](crate::Flatten), [`Unflatten`](crate::Unflatten),
//!   [`Source`](crate::Source) and [`NodeView`](crate::NodeView).
//! - `visit`: [`Sink`](crate::Sink), [`Visit`](crate::Visit),
//!   [`VisitMut`](crate::VisitMut) and [`NodeRef`](crate::NodeRef).
//! - `defaults`: the provided `zip_check` and `zip_mut_prechecked` of a
//!   hand-written node, built from its walks.
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
pub(crate) mod source;
pub(crate) mod unwind;
pub(crate) mod visit;
