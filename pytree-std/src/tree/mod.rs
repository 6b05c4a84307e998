//! [`Tree`]: a pytree whose shape is known only at run time (configs and
//! checkpoints loaded from JSON, batches of named tensors, metrics
//! dictionaries): treevalue's `TreeValue` for Rust.
//!
//! A node is a leaf, a sequence, a map with string keys, or `None`.
//!
//! Decisions, each with its reason:
//! - **Maps keep insertion order.** A tree read from a document keeps the
//!   document's order, and a typed model converted with
//!   [`Tree::from_pytree`] keeps its field order, so both flatten to the
//!   leaves in the order a reader expects (optree's choice for ordered
//!   dicts). JAX's sorted order is one call away: [`Tree::sort_keys`].
//!   Equality and the multi-tree maps (`zip_with`, arithmetic) match map
//!   entries *by key*, as Python dicts and treevalue do, so two maps with
//!   the same entries in another order are equal; only flattening order
//!   (and so the TreeDef) follows insertion order.
//! - **Subtrees are shared.** Sequences and maps sit behind an `Arc`, so
//!   `clone` is O(1) whatever the size, and a subtree taken out of a tree
//!   (`t["x"].clone()`) shares its storage, as treevalue's do. Values keep
//!   value semantics: writing through `subtree_mut`, `insert`, `remove` or
//!   `for_each_mut` copies the shared containers on the way down
//!   (`Arc::make_mut`), which is why consuming and mutating operations need
//!   `L: Clone`. Reading, printing and comparing do not.
//! - **`Send + Sync` when `L` is** (it holds `L`s and `Arc`s, nothing else).
//! - **No recursion.** Every walk (flatten, unflatten, display, compare,
//!   drop, conversion) uses an explicit stack, so a tree 100 000 levels
//!   deep works; `Display` stops printing below a depth (see
//!   [`Tree::display_depth`]).
//!
//! With the `serde` feature, a tree (de)serializes as the document it looks
//! like: object ↔ map (document order), array ↔ sequence, `null` ↔ `None`,
//! scalar ↔ leaf (`L` read from the scalar), so `Tree<serde_json::Value>`
//! reads any JSON document; errors name the path; trees deeper than
//! `MAX_SERDE_DEPTH` (127, what serde_json reads back) are refused.
//!
//! Contents: the type and its accessors (`node`), `tree!` (`macros`),
//! paths and access by path (`path`), the one walk of a tree, by `&`, by
//! `&mut` or by value, as a stream of events (`cursor`), iteration with
//! paths (`iter`), the walks built on it and the few that are not
//! (`walk`), the pytree impls (`pytree`), conversion from
//! and to typed pytrees (`convert`), printing (`display`), arithmetic
//! (`arith`), and serde (`serde`, behind the `serde` feature).

mod arith;
mod convert;
mod cursor;
mod display;
mod iter;
mod macros;
mod node;
mod path;
mod pytree;
#[cfg(feature = "serde")]
mod serde_impl;
mod walk;

pub use convert::key_string;
pub use display::DisplayDepth;
pub use iter::{IntoIter, Iter};
pub use node::{MapRef, Tree, View};
pub use path::{Step, TreePath};
#[cfg(feature = "serde")]
pub use serde_impl::MAX_SERDE_DEPTH;
