//! What you need to implement the traits by hand (JAX's "custom pytree
//! nodes"), as serde's `ser` and `de` modules hold what a `Serialize` impl
//! needs: the walk callbacks a [`Flatten`](crate::Flatten) impl reports to
//! ([`Sink`], [`Visit`], [`VisitMut`], with [`NodeRef`] and [`KeyRef`]),
//! what an [`Unflatten`](crate::Unflatten) impl reads from ([`Source`],
//! [`DefSource`], [`CombineSource`]), what the derive records about a
//! struct ([`Schema`], [`FieldSchema`], [`FieldStyle`]), type-erased static
//! data ([`StaticValue`], [`ErasableKey`]) and [`TreeDefBuilder`].
//! `#[derive(PyTree)]` and [`impl_leaf!`](crate::impl_leaf) write all of
//! this for you.
//!
//! ```
//! use pytree_std::custom::{NodeRef, Sink};
//! use pytree_std::{Flatten, Std};
//! /// Counts the nodes a walk reports.
//! struct Nodes(usize);
//! impl Sink<u8> for Nodes {
//!     fn leaf(&mut self, _: u8) {}
//!     fn node(&mut self, _: NodeRef<'_>) { self.0 += 1 }
//! }
//! let mut n = Nodes(0);
//! Flatten::<Std>::flatten_into(vec![Some(1u8), None], &mut n);
//! assert_eq!(n.0, 3);
//! ```

pub use pytree_core::{
    CombineSource, DefSource, ErasableKey, FieldSchema, FieldStyle, KeyRef, NodeRef, Schema, Sink,
    Source, StaticValue, TreeDefBuilder, Visit, VisitMut,
};
