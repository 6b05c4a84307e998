//! # pytree
//!
//! JAX-style pytrees for Rust, derive first. A pytree is a value made of
//! containers (structs, `Vec`, tuples, maps, `Option`, enums) whose
//! non-container parts are *leaves*. `#[derive(PyTree)]` makes your own
//! structs and enums pytrees; this crate does the rest: flatten any tree to
//! `(leaves, TreeDef)` and back, print, compare and hash a [`TreeDef`], map
//! functions over one or several trees, update leaves in place.
//!
//! ```
//! use pytree_std::{PyTree, TreeDef};
//!
//! #[derive(PyTree, Clone, Debug, PartialEq)]
//! struct Linear<T> { w: T, b: T }
//!
//! #[derive(Clone, Debug, PartialEq, Eq, Hash)]
//! enum Activation { Relu, Tanh }
//!
//! #[derive(PyTree, Clone, Debug, PartialEq)]
//! struct Mlp<T> {
//!     layers: Vec<Linear<T>>,
//!     #[pytree(static)]
//!     activation: Activation,
//! }
//!
//! let mlp = Mlp { layers: vec![Linear { w: 1.0f32, b: 2.0 }], activation: Activation::Relu };
//! let (leaves, def): (Vec<f32>, TreeDef) = pytree_std::flatten(mlp.clone());
//! assert_eq!(leaves, [1.0, 2.0]);
//! assert_eq!(def.to_string(), "Mlp { layers: [Linear { w: *, b: * }], activation: Relu }");
//! let back: Mlp<f32> = pytree_std::unflatten(&def, leaves)?;
//! assert_eq!(back, mlp);
//! # Ok::<(), pytree_std::Error>(())
//! ```
//!
//! ## Contents
//! - [`Std`], the standard namespace, and [`PyTree`], the trait to name in
//!   bounds (module `namespace`); [`Flatten`], [`Unflatten`], [`Leaf`]
//!   (how a leaf is lent: [`LeafRef`], [`LeafMut`]), [`TreeDef`],
//!   [`KeyPath`], [`Error`]: re-exported from `pytree-core`.
//! - `#[derive(PyTree)]` (re-exported from `pytree-derive`; see its docs
//!   for the attributes).
//! - The operations, fixed to `Std` (each written once, in the table of
//!   module `ops`, expanded here):
//!   - flatten and rebuild: [`flatten`], [`unflatten`], [`structure`],
//!     [`leaves`], [`leaves_mut`];
//!   - maps: [`map`], [`map_into`], [`map2`], [`map_n`], [`for_each`],
//!     [`for_each_mut`]; in place from other trees: [`zip_mut`],
//!     [`zip_mut_n`] (several trees updated in one pass);
//!     [`check_same_structure`];
//!   - fallible leaf functions: [`try_map`], [`try_map2`], [`try_map_n`],
//!     [`try_zip_mut`], [`try_zip_mut_n`], [`try_for_each_mut`];
//!   - key paths ([`KeyPath`], written in JAX's `keystr` styles with
//!     [`KeyStr`] and read back by [`TreeDef::parse_key_path`]):
//!     [`flatten_with_path`], [`leaves_with_path`], [`map_with_path`],
//!     [`for_each_with_path`], [`for_each_mut_with_path`], and over several
//!     trees [`map_with_path_n`], [`for_each_with_path_n`],
//!     [`zip_mut_with_path`]; by path: [`get`], [`set`], [`set_subtree`],
//!     [`update`]; by position in leaf order: [`leaf_at`], [`leaf_at_mut`],
//!     [`leaf_path_at`];
//!   - reductions: [`fold`], [`reduce`], [`all`], [`any`], [`count`],
//!     [`sum`], [`min`], [`max`], [`num_leaves`];
//!   - filter: [`partition`], [`filter`], [`combine`], [`combine_n`]; with
//!     fill values instead of `None` holes, [`partition_fill`],
//!     [`filter_fill`], and [`replace_nones`];
//!   - prefix trees: [`flatten_up_to`], [`broadcast_prefix`],
//!     [`broadcast`], [`map_prefix`], [`map_with_prefix`];
//!     [`flatten_one_level`]; [`broadcast_common`];
//!   - [`Treelize`]: a function of leaves applied to trees, with
//!     treevalue's [`mode`]s, `missing` and `inherit`;
//!   - transposes: [`stack`], [`unstack`], [`zip`], [`unzip`], [`rise`],
//!     [`transpose`].
//! - [`tree_equal`] with [`Tolerance`] and [`ApproxEq`] (module
//!   `tree_equal`).
//! - What a tree of tensors holds: [`signatures`] (a [`Tree`] of each
//!   leaf's dtype and shape) and [`summary`] (a table of leaves and
//!   subtrees with element and byte counts) (module `summary`).
//! - [`ravel`] / [`Unravel`]: the leaves laid end to end in one flat
//!   buffer and back (JAX's `ravel_pytree`; module `ravel`).
//! - With the `rayon` feature: `par_for_each_mut`, `par_zip_mut`,
//!   `par_zip_mut_n`, `try_par_zip_mut_n`, `par_map`, leaves split across
//!   threads by element count (module `parallel`).
//! - Impls for `Vec`, `VecDeque`, `[T; N]`, tuples up to 12, `BTreeMap`,
//!   `HashMap`, `IndexMap` (insertion-ordered), `Option`, `Rc`, `Arc`
//!   (written once over a namespace: [`std_containers!`]) and the
//!   primitive leaf types (module `impls`); a namespace of your own in one
//!   declaration: [`namespace!`], with its operations by [`ops_for!`].
//! - Foreign leaf types behind features: `ndarray` (arrays of any rank,
//!   one leaf type `ArrayD<A>` lent as views; `AnyArray`, module
//!   `any_array`, for arrays of several dtypes in one tree), `candle` (`Tensor`),
//!   `half` (`f16`, `bf16`), `nalgebra` (`DMatrix`, `DVector`, one leaf
//!   type `DMatrix<T>`); each crate is re-exported under its name.
//! - [`Tree`] and [`tree!`]: a pytree whose shape is known only at run
//!   time (JSON configs, checkpoints, metrics), with access by path,
//!   ascii display, arithmetic and conversion to and from typed pytrees
//!   (module [`tree`](mod@tree)).
//! - With the `serde` feature: serde for [`Tree`] and [`TreeDef`], and for
//!   any pytree as its TreeDef and leaves (module `serialized`).
//! - With the `ndarray` or `candle` feature: ensembles (module
//!   `ensemble`), `N` trees of arrays or tensors stacked along a new
//!   leading axis into one tree (`stack_leaves`) and back
//!   (`unstack_leaves`), for any leaf type that is `Stackable`.
//! - With the `safetensors` feature: checkpoints, any pytree of tensor
//!   leaves saved to and loaded from a `.safetensors` file, tensors named
//!   by key path (`layers.0.w`), loaded by type, against a template or in
//!   place, partially and with renamed prefixes (module `checkpoint`).
//! - Module [`custom`]: what implementing the traits by hand needs (the
//!   walk callbacks, sources, schemas, static values, `TreeDefBuilder`).

#![warn(missing_docs)]

#[cfg(feature = "safetensors")]
pub mod checkpoint;
pub mod custom;
#[cfg(any(feature = "ndarray", feature = "candle"))]
pub mod ensemble;
#[cfg(feature = "serde")]
mod finite;
mod impls;
mod namespace;
mod ops;
#[cfg(feature = "rayon")]
mod parallel;
mod ravel;
#[cfg(feature = "serde")]
pub mod serialized;
mod summary;
pub mod tree;
mod tree_equal;

pub use namespace::{PyTree, Std};
#[cfg(feature = "rayon")]
pub use parallel::{par_for_each_mut, par_map, par_zip_mut, par_zip_mut_n, try_par_zip_mut_n};
pub use pytree_core::TreeDefLimits;
pub use pytree_core::{
    impl_leaf, mode, DType, Error, ErrorKind, Flatten, KeyEntry, KeyPath, KeyStr, Leaf, LeafFnErr,
    LeafFnError, LeafMut, LeafRef, NodeView, PlainLeaf, Signature, Static, Subtree, TreeDef,
    Unflatten,
};
pub use pytree_derive::PyTree;
pub use ravel::{ravel, Ravel, Unravel};
pub use summary::{signatures, summary, Summary, SummaryRow};
pub use tree::Tree;
pub use tree_equal::{tree_equal, ApproxEq, Tolerance};

// The operations (`flatten`, `map2`, `zip_mut`, ...), fixed to `Std`, with
// their documentation: the table is in module `ops`.
crate::__pytree_ops!(docs, crate::Std);

// What generated code (`#[derive(PyTree)]`, `impl_leaf!`, `std_containers!`,
// `ops_for!`) names by absolute path from this crate's root; users reach the
// same items through `custom`.
#[doc(hidden)]
pub use custom::{
    CombineSource, DefSource, ErasableKey, FieldSchema, FieldStyle, KeyRef, NodeRef, Schema, Sink,
    Source, StaticValue, TreeDefBuilder, Visit, VisitMut,
};
#[doc(hidden)]
pub use pytree_core as __core;
#[doc(hidden)]
pub use pytree_core::__private;

/// The `candle-core` crate (feature `candle`), re-exported so that a user's
/// `Tensor` is the one this crate implements the traits for.
#[cfg(feature = "candle")]
pub use candle_core;
/// The `half` crate (feature `half`, or `ndarray` for `AnyArray`'s
/// f16 / bf16 variants), re-exported: with `half`, `f16` and `bf16` are
/// leaves.
#[cfg(any(feature = "half", feature = "ndarray"))]
pub use half;
/// The `indexmap` crate, re-exported: `IndexMap` is an insertion-ordered
/// map node (always available; `Tree` is built on it).
pub use indexmap;
/// The `nalgebra` crate (feature `nalgebra`), re-exported so that a user's
/// matrices are the ones this crate implements the traits for.
#[cfg(feature = "nalgebra")]
pub use nalgebra;
#[cfg(feature = "ndarray")]
pub mod any_array;
#[cfg(feature = "ndarray")]
pub use any_array::{AnyArray, AnyArrayView, AnyArrayViewMut, AnyElement};
/// The `ndarray` crate (feature `ndarray`), re-exported so that a user's
/// arrays are the ones this crate implements the traits for.
#[cfg(feature = "ndarray")]
pub use ndarray;

/// The README's examples, run as doctests so they stay true. Its tensor
/// and checkpoint examples need the `ndarray`, `candle` and `safetensors`
/// features, which `cargo test --workspace` turns on (the `tests` crate
/// enables every feature of this crate).
#[cfg(all(
    doctest,
    feature = "ndarray",
    feature = "candle",
    feature = "safetensors"
))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
