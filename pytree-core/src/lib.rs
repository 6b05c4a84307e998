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
//! namespace to its std namespace marker `pytree_std::Std`, implements
//! the traits for std types and foreign tensor types, and documents each
//! operation once, with its signature
//! (`pytree_std::flatten`, `pytree_std::walk::map_n`, ...). The engine
//! functions are public here, in module [`ops`] (one module per family),
//! for a namespace of your own and for code generic over namespaces:
//! `pytree_core::ops::basic::flatten::<MyNs, _>(x)`, also reachable as
//! `pytree_std::generic`.
//!
//! ## Contents, from the ground up
//! The modules stand in six layers; each imports only from the layers
//! below it (ARCHITECTURE.md draws them), and lib.rs alone names items
//! through the crate root.
//! 1. **Paths, errors and leaves**, what every other layer names:
//!    [`StaticValue`] and [`Static`], type-erased static data and map keys
//!    (`static_data.rs`); [`Signature`] and [`DType`], what a leaf says
//!    about itself (`signature.rs`); `paths/`: [`KeyPath`], [`KeyEntry`],
//!    [`KeyRef`] (`key_path.rs`) and [`KeyStr`], a path as a string in
//!    JAX's `keystr` styles (`key_str.rs`); [`Error`], [`ErrorKind`],
//!    [`LeafFnError`], [`IntoLeafFnError`] (`error.rs`); `leaf/`: [`Leaf`],
//!    [`LeafRef`], [`LeafMut`], [`PlainLeaf`], [`impl_leaf!`], and
//!    [`LeafAs`], a leaf type that stands as another in one tree
//!    (`#[pytree(leaf_type = L)]`, `leaf_as.rs`).
//! 2. **The TreeDef** (`treedef/`): [`TreeDef`], [`TreeDefBuilder`],
//!    [`TreeDefLimits`], the structure as 16-byte records; one node as a
//!    walk reports it, [`NodeRef`], and as a reader owns it, [`NodeView`]
//!    (`node.rs`); lined up, composed and compared ([`TreeDef::diff`],
//!    [`TreeDef::is_prefix_of`], [`TreeDef::compose`], `relations.rs`; the
//!    alignment engine and treevalue's [`Mode`](mode::Mode), `align.rs`),
//!    built and read node by node (`nodes.rs`: [`TreeDef::tuple`],
//!    [`TreeDef::from_node`], [`TreeDef::root_node`], [`TreeDef::child`],
//!    [`TreeDef::fold`], [`TreeDef::transform`], ...); what the derive
//!    records about a struct, [`Schema`], [`FieldSchema`], [`FieldStyle`]
//!    (`schema.rs`); how a TreeDef and its nodes read in text
//!    (`display.rs`).
//! 3. **Reading a TreeDef back** (`sources/`): [`Source`], what
//!    `Unflatten` reads from (`source.rs`); [`DefSource`] checks every
//!    record (`def_source.rs`); a TreeDef that passed those checks for a
//!    type remembers it and is read again as that type without them
//!    (`trusted.rs`).
//! 4. **The traits** (`traits/`): [`Flatten`] and [`Unflatten`]
//!    (`flatten/mod.rs`), with the helpers their provided methods call in
//!    child modules: the walks that the provided methods and every
//!    operation are built from (`flatten/walks.rs`: flatten, unflatten,
//!    structure, leaves, num_leaves), the provided methods
//!    (`flatten/defaults.rs`, `flatten/elements.rs`), and what a walk
//!    stopped by a panic or an error holds, dropped by a walk too
//!    (`flatten/unwind.rs`); the walk callbacks [`Sink`], [`Visit`],
//!    [`VisitMut`] (`visit.rs`); walks that continue on a
//!    heap-allocated stack segment when the stack runs low, with the `std`
//!    feature (`deep_recursion.rs`); `Box<T>` for
//!    every namespace (`boxed.rs`); the callbacks through which a field's
//!    leaves stand as the struct's `leaf_type` (`leaf_as.rs`).
//! 5. **The operations** ([`ops`]), one public module per family:
//!    `basic` (flatten, unflatten, structure, leaves, map, for_each),
//!    `fallible` (the `try_` forms), `with_path`, `at_path`, `by_index`,
//!    `reduce`, `partition` (with [`CombineSource`]) and `fill`, `multi`
//!    (several trees of one type, every mismatch reported, `zip_mut_n`) and
//!    `multi_path`, `prefix` ([`Subtree`]), `transpose`; internal: `graft`
//!    (results that are subtrees take the place of leaves) and `tracker`
//!    (the path a walk is at).
//! 6. **Containers, treelize, serde**: `containers/`, the std containers
//!    (`Vec`, `VecDeque`, arrays, tuples, `Option`, `Rc`/`Arc`,
//!    `BTreeMap`, `HashMap`, `IndexMap`) for every namespace that
//!    implements [`StdContainers`], one module per family; `treelize/`:
//!    [`Treelize`], treevalue's `func_treelize`, and its [`mode`]s; with
//!    the `serde` feature, `Serialize`/`Deserialize` for [`TreeDef`]
//!    (`serde_impl/`; needs `std` for its table of deserialized schemas);
//!    `__private`, what the derive's code and `impl_leaf!` name.
#![no_std]
#![warn(missing_docs)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

// 1. Paths, errors and leaves.
mod error;
mod leaf;
mod paths;
mod signature;
mod static_data;

// 2. The TreeDef.
mod treedef;

// 3. Reading a TreeDef back.
mod sources;

// 4. The traits.
mod traits;

// 5. The operations.
pub mod ops;

// 6. Containers, treelize, serde, and the derive's support.
#[doc(hidden)]
pub mod __private;
mod containers;
#[cfg(feature = "serde")]
mod serde_impl;
mod treelize;

// 1.
pub use error::{Error, ErrorKind, IntoLeafFnError, LeafFnError};
pub use leaf::leaf_as::LeafAs;
pub use leaf::{Leaf, LeafMut, LeafRef, PlainLeaf};
pub use paths::key_path::{ErasableKey, KeyEntry, KeyPath, KeyRef};
pub use paths::key_str::KeyStr;
pub use signature::{DType, Signature};
pub use static_data::{Static, StaticValue};

// 2.
pub use treedef::node::{NodeRef, NodeView};
pub use treedef::schema::{FieldSchema, FieldStyle, Schema};
pub use treedef::{TreeDef, TreeDefBuilder, TreeDefLimits};

// 3.
pub use sources::def_source::DefSource;
pub use sources::source::Source;

// 4.
pub use traits::flatten::{Flatten, Unflatten};
#[doc(hidden)]
pub use traits::visit::Stored;
pub use traits::visit::{Sink, Visit, VisitMut};

// 5.
pub use ops::partition::CombineSource;
pub use ops::prefix::Subtree;

// 6.
pub use containers::StdContainers;
pub use treelize::{mode, Treelize};
