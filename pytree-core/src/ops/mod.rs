//! The engine of every operation, generic over the namespace `Ns`: each
//! function here is `pytree_std`'s function of the same name (documented
//! there, with `Ns` the std namespace marker `pytree_std::Std`) for any
//! namespace. Call one with the namespace named, e.g.
//! `pytree_core::ops::basic::flatten::<MyNs, _>(tree)`; `pytree_std`
//! re-exports this module as `pytree_std::generic`, so a user of a
//! namespace of their own needs no dependency on this crate.
//!
//! ```
//! let (leaves, def) = pytree_core::ops::basic::flatten::<pytree_std::Std, _>(vec![1, 2]);
//! assert_eq!(leaves, [1, 2]);
//! assert_eq!(def.to_string(), "[*, *]");
//! ```
//!
//! One module per family (`pytree_std`'s families, `walk`, `paths`,
//! `reductions`, `split`, `nested`, each take from several of them):
//! - [`basic`]: flatten, unflatten, structure, leaves, map, for_each;
//! - [`fallible`]: the forms whose closure returns a `Result`;
//! - [`multi`]: several trees of one type, every mismatch reported;
//! - [`with_path`], [`multi_path`], [`at_path`], [`by_index`]: key paths;
//! - [`reduce`]; [`partition`] and [`fill`]; [`transpose`];
//! - [`prefix`]: prefix trees and [`Subtree`](crate::Subtree);
//! - `graft` (internal): results that are subtrees take the place of
//!   leaves; `tracker` (internal): the path a walk is at, kept as it goes.

pub mod at_path;
pub mod basic;
pub mod by_index;
pub mod fallible;
pub mod fill;
pub(crate) mod graft;
pub mod multi;
pub mod multi_path;
pub mod partition;
pub mod prefix;
pub mod reduce;
pub(crate) mod tracker;
pub mod transpose;
pub mod with_path;

pub(crate) use basic::*;
