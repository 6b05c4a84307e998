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
//! (`pytree_std::flatten`, `pytree_std::multi::map2`, ...). The engine
//! functions are public here, in module [`ops`] (one module per family),
//! for a namespace of your own and for code generic over namespaces:
//! `pytree_core::ops::basic::flatten::<MyNs, _>(x)`, also reachable as
//! `pytree_std::generic`.
//!
//! ## Contents
//! The folders are the architecture:
//! - `traits/`: [`Flatten`], [`Unflatten`], [`Source`] and [`NodeView`],
//!   what a generic reader sees (`flatten.rs`); the walk callbacks
//!   [`Sink`], [`Visit`], [`VisitMut`] and [`NodeRef`], a node as a walk
//!   lends it (`visit.rs`); `Box<T>` for every namespace (`boxed.rs`);
//!   the callbacks through which a field's leaves stand as the struct's
//!   `leaf_type` (`leaf_as.rs`).
//! - `containers/`: the std containers (`Vec`, `VecDeque`, arrays, tuples,
//!   `Option`, `Rc`/`Arc`, `BTreeMap`, `HashMap`, `IndexMap`) for every
//!   namespace that implements [`StdContainers`], one module per family.
//! - `leaf/`: [`Leaf`], [`LeafRef`], [`LeafMut`], [`PlainLeaf`],
//!   [`impl_leaf!`], how a leaf type is lent by the walks; [`Signature`]
//!   and [`DType`], what a leaf says about itself (`signature.rs`);
//!   [`LeafAs`], a leaf type that stands as another in one tree
//!   (`#[pytree(leaf_type = L)]`, `leaf_as.rs`).
//! - `treedef/`: [`TreeDef`], [`TreeDefBuilder`], [`TreeDefLimits`], the
//!   structure as 16-byte records; lined up, composed and compared
//!   ([`TreeDef::diff`], [`TreeDef::is_prefix_of`], [`TreeDef::compose`],
//!   `relations.rs`), built and read node by node (`nodes.rs`:
//!   [`TreeDef::tuple`], [`TreeDef::from_node`], [`TreeDef::root_node`],
//!   [`TreeDef::child`], [`TreeDef::fold`], [`TreeDef::transform`], ...);
//!   what the derive records about a struct, [`Schema`], [`FieldSchema`],
//!   [`FieldStyle`] (`schema.rs`); type-erased meta data, [`StaticValue`]
//!   and [`Static`] (`static_data.rs`).
//! - `sources/`: reading a TreeDef back into a value: [`DefSource`] checks
//!   every record (`def_source.rs`); a TreeDef that passed those checks for
//!   a type remembers it and is read again as that type without them
//!   (`trusted.rs`).
//! - `paths/`: [`KeyPath`], [`KeyEntry`], [`KeyRef`] (`key_path.rs`);
//!   [`KeyStr`], a path as a string in JAX's `keystr` styles, read back by
//!   [`TreeDef::parse_key_path`] (`key_str.rs`); the path a walk is at
//!   (`tracker.rs`).
//! - [`ops`]: the engine of the operations, one public module per family:
//!   `basic` (flatten, unflatten, structure, leaves, map, for_each),
//!   `fallible` (the `try_` forms), `with_path`, `at_path`, `by_index`,
//!   `reduce`, `partition` (with [`CombineSource`]) and `fill`, `multi`
//!   (several trees of one type, every mismatch reported, `zip_mut_n`) and
//!   `multi_path`, `prefix` ([`Subtree`]), `transpose`; `graft` (internal):
//!   results that are subtrees take the place of leaves.
//! - `treelize/`: [`Treelize`], treevalue's `func_treelize`, and its
//!   [`mode`]s.
//! - [`Error`], [`ErrorKind`], [`LeafFnError`] (`error.rs`).
//! - With the `serde` feature: `Serialize`/`Deserialize` for [`TreeDef`]
//!   (`serde_impl/`; needs `std` for its table of deserialized schemas).
//! - Deep recursion: walks continue on a heap-allocated stack segment when
//!   the stack runs low, with the `std` feature (`deep_recursion.rs`);
//!   what a walk stopped by a panic or an error holds is dropped by a walk
//!   too (`unwind.rs`).
#![no_std]
#![warn(missing_docs)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod containers;
mod deep_recursion;
mod error;
mod leaf;
pub mod ops;
mod paths;
#[cfg(feature = "serde")]
mod serde_impl;
mod sources;
mod traits;
mod treedef;
mod treelize;
mod unwind;

#[doc(hidden)]
pub mod __private;

pub use containers::StdContainers;
pub use error::{Error, ErrorKind, LeafFnError};
pub use leaf::leaf_as::LeafAs;
pub use leaf::signature::{DType, Signature};
pub use leaf::{Leaf, LeafMut, LeafRef, PlainLeaf};
pub use ops::fallible::IntoLeafFnError;
pub use ops::partition::CombineSource;
pub use ops::prefix::Subtree;
pub use paths::key_path::{ErasableKey, KeyEntry, KeyPath, KeyRef};
pub use paths::key_str::KeyStr;
pub use sources::def_source::DefSource;
pub use traits::flatten::{Flatten, NodeView, Source, Unflatten};
#[doc(hidden)]
pub use traits::visit::Stored;
pub use traits::visit::{NodeRef, Sink, Visit, VisitMut};
pub use treedef::schema::{FieldSchema, FieldStyle, Schema};
pub use treedef::static_data::{Static, StaticValue};
pub use treedef::{TreeDef, TreeDefBuilder, TreeDefLimits};
pub use treelize::{mode, Treelize};
