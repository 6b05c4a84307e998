//! # pytree-core
//!
//! The core of pytree: JAX-style pytrees for Rust. A pytree is a value made
//! of containers (structs, sequences, tuples, maps, `Option`, enums) whose
//! non-container parts are *leaves*; flattening splits it into its leaves
//! and a [`TreeDef`], and unflattening puts them back together.
//!
//! This crate is `no_std` (with `alloc`) and defines the traits, the
//! TreeDef, and the engine of every operation, generic over a *namespace*
//! (optree's namespaces; a marker type that says which registry of impls
//! is meant, and that makes impls for foreign types legal in the crate that
//! owns the marker). Users depend on `pytree-std`, which fixes the
//! namespace to `Std`, implements the traits for std types and foreign
//! tensor types, and documents each operation once, with its signature
//! (`pytree_std::flatten`, ...; its `ops_for!` gives a namespace of your
//! own the same functions). The engine functions here are public for that
//! expansion and for code generic over namespaces, and hidden from these
//! docs.
//!
//! ## Contents
//! - [`Flatten`], [`Unflatten`], [`Source`]: the traits, and [`NodeView`],
//!   what a generic reader sees (module `flatten`).
//! - [`Leaf`], [`LeafRef`], [`LeafMut`], [`PlainLeaf`], [`impl_leaf!`]: how
//!   a leaf type is lent by the walks by reference (module `leaf`);
//!   [`Signature`] and [`DType`]: what a leaf says about itself (module
//!   `signature`).
//! - [`Sink`], [`Visit`], [`VisitMut`], [`NodeRef`]: the walk callbacks
//!   (module `visit`).
//! - [`TreeDef`], [`TreeDefBuilder`], [`NodeKind`]: the structure
//!   (module `treedef`); [`DefSource`] reads it back (module `source`),
//!   checking every record; a TreeDef that passed those checks for a type
//!   remembers it (`treedef/checked.rs`) and is read again as that type
//!   without them (module `trusted_source`).
//! - [`Schema`], [`FieldSchema`], [`FieldStyle`]: what the derive records
//!   about a struct (module `schema`).
//! - [`StaticValue`], [`Static`]: type-erased meta data (module `static_data`).
//! - [`KeyPath`], [`KeyEntry`], [`KeyRef`]: places in a tree (module `key_path`);
//!   [`KeyStr`]: a path as a string in JAX's `keystr` styles (module
//!   `key_str`), read back by [`TreeDef::parse_key_path`].
//! - [`Error`], [`ErrorKind`], [`LeafFnError`] (module `error`).
//! - The engine of the operations, one module per family: `ops` (flatten,
//!   unflatten, structure, leaves, map, for_each), `fallible` (the `try_`
//!   forms), `with_path` (on the path tracker of `path_tracker`),
//!   `at_path`, `by_index`, `reduce`, `partition` (with [`CombineSource`])
//!   and `fill`, `multi` (several trees of one type, every mismatch
//!   reported, `zip_mut_n`) and `multi_path`, `prefix` ([`Subtree`]),
//!   `transpose`; results that are subtrees take the place of leaves
//!   (module `graft`).
//! - [`Treelize`] (module `treelize`) and its [`mode`]s (module `mode`):
//!   treevalue's `func_treelize`.
//! - TreeDefs are lined up, composed and compared in module `treedef`
//!   ([`TreeDef::diff`], [`TreeDef::is_prefix_of`], [`TreeDef::compose`];
//!   strict prefixes, suffixes and the common suffix in `treedef/relations.rs`);
//!   built and read node by node in `treedef/nodes.rs` ([`TreeDef::tuple`],
//!   [`TreeDef::dict`], [`TreeDef::from_node`], [`TreeDef::child`],
//!   [`TreeDef::one_level`], [`TreeDef::walk`], [`TreeDef::transform`], ...).
//! - `Box<T>` impls for every namespace (module `fundamental`).
//! - With the `serde` feature: `Serialize`/`Deserialize` for [`TreeDef`]
//!   (module `serde_impl`; needs `std` for its table of deserialized
//!   schemas).
//! - Deep recursion: walks continue on a heap-allocated stack segment when
//!   the stack runs low, with the `std` feature (module `stack`).
#![no_std]
#![warn(missing_docs)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod at_path;
mod by_index;
mod error;
mod fallible;
mod fill;
mod flatten;
mod fundamental;
mod graft;
mod key_path;
mod key_str;
mod leaf;
pub mod mode;
mod multi;
mod multi_path;
mod ops;
mod partition;
mod path_tracker;
mod prefix;
mod reduce;
mod schema;
#[cfg(feature = "serde")]
mod serde_impl;
mod signature;
mod source;
mod stack;
mod static_data;
mod transpose;
mod treedef;
mod treelize;
mod trusted_source;
mod visit;
mod with_path;

#[doc(hidden)]
pub mod __private;

pub use at_path::{get, set, set_subtree, update};
pub use by_index::{leaf_at, leaf_at_mut, leaf_path_at};
pub use error::{Error, ErrorKind, LeafFnError};
pub use fallible::{try_for_each_mut, try_map, try_map_n, try_zip_mut, LeafFnErr};
pub use fill::{filter_fill, partition_fill, replace_nones};
pub use flatten::{Flatten, NodeView, Source, Unflatten};
pub use key_path::{ErasableKey, KeyEntry, KeyPath, KeyRef};
pub use key_str::KeyStr;
pub use leaf::{Leaf, LeafMut, LeafRef, PlainLeaf};
pub use multi::{check_same_structure, map_n, try_zip_mut_n, zip_mut, zip_mut_n};
pub use multi_path::{for_each_with_path_n, map_with_path_n, zip_mut_with_path};
pub use ops::{
    flatten, for_each, for_each_mut, leaves, leaves_mut, map, map_into, structure, unflatten,
};
pub use partition::{combine, filter, partition, CombineSource};
pub use prefix::{
    broadcast, broadcast_common, broadcast_prefix, flatten_one_level, flatten_up_to, map_prefix,
    map_with_prefix, Subtree,
};
pub use reduce::{all, any, count, fold, max, min, num_leaves, reduce, sum};
pub use schema::{FieldSchema, FieldStyle, Schema};
pub use signature::{DType, Signature};
pub use source::DefSource;
pub use static_data::{Static, StaticValue};
pub use transpose::{rise, stack, transpose, unstack, unzip, zip};
pub use treedef::{NodeKind, TreeDef, TreeDefBuilder};
pub use treelize::Treelize;
pub use visit::{NodeRef, Sink, Visit, VisitMut};
pub use with_path::{
    flatten_with_path, for_each_mut_with_path, for_each_with_path, leaves_with_path, map_with_path,
};
