//! The engine of every operation, generic over the namespace; pytree-std's
//! ops table documents each one once and fixes the namespace.
//!
//! One module per family:
//! - `basic`: flatten, unflatten, structure, leaves, map, for_each;
//! - `fallible`: the `try_` forms;
//! - `with_path` (on the tracker of `crate::paths`), `at_path`, `by_index`;
//! - `reduce`; `partition` and `fill`;
//! - `multi` (several trees of one type, every mismatch reported,
//!   `zip_mut_n`) and `multi_path`;
//! - `prefix` (prefix trees and [`Subtree`](crate::Subtree)), `transpose`;
//! - `graft`: results that are subtrees take the place of leaves.

pub(crate) mod at_path;
pub(crate) mod basic;
pub(crate) mod by_index;
pub(crate) mod fallible;
pub(crate) mod fill;
pub(crate) mod graft;
pub(crate) mod multi;
pub(crate) mod multi_path;
pub(crate) mod partition;
pub(crate) mod prefix;
pub(crate) mod reduce;
pub(crate) mod transpose;
pub(crate) mod with_path;

pub use basic::*;
