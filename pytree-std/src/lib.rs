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
//! At the root, what most code needs:
//! - the operations users call most, fixed to the standard namespace
//!   [`Std`]: [`flatten`], [`unflatten`], [`structure`], [`leaves`],
//!   [`leaves_mut`], [`map`], [`map_n`], [`zip_mut`], [`for_each`],
//!   [`for_each_mut`], [`flatten_with_path`], [`map_with_path`];
//! - the traits [`PyTree`] (the bound to write), [`Flatten`],
//!   [`Unflatten`], [`Leaf`] (how a leaf is lent: [`LeafRef`],
//!   [`LeafMut`]), `#[derive(PyTree)]` (see `pytree-derive` for its
//!   attributes), [`impl_leaf!`];
//! - [`TreeDef`], [`KeyPath`], [`Error`], [`ErrorKind`], [`Std`];
//! - [`Tree`] and [`tree!`]: a pytree whose shape is known only at run
//!   time (module [`tree`](mod@tree)).
//!
//! Every other operation lives in the module of its family, each a plain
//! function written and documented once, whose body is one call to the
//! engine in `pytree-core` (`pytree_core::ops::<family>::<fn>`, reachable
//! here as [`generic`]):
//! - [`basic`]: the root's one-tree operations and [`map_into`](basic::map_into),
//!   [`try_map`](basic::try_map), [`try_for_each_mut`](basic::try_for_each_mut);
//! - [`multi`]: several trees of one type, [`map2`](multi::map2),
//!   [`map_n`], [`zip_mut`], [`zip_mut_n`](multi::zip_mut_n), their `try_`
//!   forms, [`check_same_structure`](multi::check_same_structure);
//! - [`paths`]: key paths (`*_with_path`, over several trees too), by path
//!   ([`get`](paths::get), [`set`](paths::set), [`update`](paths::update),
//!   [`set_subtree`](paths::set_subtree)), by leaf index
//!   ([`leaf_at`](paths::leaf_at), ...); [`KeyStr`](paths::KeyStr) writes
//!   a path in JAX's `keystr` styles, [`paths::KeyEntry`] is one
//!   step of a path;
//! - [`reduce`]: [`fold`](reduce::fold), [`sum`](reduce::sum),
//!   [`max`](reduce::max), [`num_leaves`](reduce::num_leaves), ...;
//! - [`filter`](mod@filter): [`partition`](filter::partition),
//!   [`filter`](filter::filter), [`combine`](filter::combine) and their
//!   fill forms;
//! - [`prefix`]: prefix trees (JAX's `in_axes`), [`Subtree`](prefix::Subtree);
//! - [`transpose`](mod@transpose): [`transpose`](transpose::transpose),
//!   [`subside`](transpose::subside) / [`rise`](transpose::rise),
//!   [`pair_leaves`](transpose::pair_leaves) /
//!   [`unpair_leaves`](transpose::unpair_leaves),
//!   [`unflatten_pairs`](transpose::unflatten_pairs);
//! - [`treelize`]: [`Treelize`](treelize::Treelize), a function of leaves
//!   applied to trees, with treevalue's [`mode`](treelize::mode)s;
//! - `parallel` (feature `rayon`): `par_for_each_mut`, `par_zip_mut`,
//!   `par_zip_mut_n`, `try_par_zip_mut_n`, `par_map`, leaves split across
//!   threads by element count.
//!
//! And beside them:
//! - [`tree_equal`](mod@tree_equal): [`tree_equal`](tree_equal::tree_equal)
//!   with a [`Tolerance`](tree_equal::Tolerance) for leaves that are
//!   [`ApproxEq`](tree_equal::ApproxEq).
//! - [`summary`](mod@summary): what a tree of tensors holds,
//!   [`signatures`](summary::signatures) (a [`Tree`] of each leaf's dtype
//!   and shape) and [`summary`](summary::summary) (a table of leaves and
//!   subtrees with element and byte counts).
//! - [`ravel`](mod@ravel): [`ravel`](ravel::ravel) /
//!   [`Unravel`](ravel::Unravel), the leaves laid end to end in one flat
//!   buffer and back (JAX's `ravel_pytree`).
//! - Impls for `Vec`, `VecDeque`, `[T; N]`, tuples up to 12, `BTreeMap`,
//!   `HashMap`, `IndexMap` (insertion-ordered), `Option`, `Rc`, `Arc`
//!   (pytree-core's, for every namespace with `StdContainers`:
//!   [`std_containers!`]) and the
//!   primitive leaf types (module `impls`); a namespace of your own in one
//!   declaration: [`namespace!`], its operations through [`generic`].
//! - Foreign leaf types behind features: `ndarray` (arrays of any rank,
//!   one leaf type `ArrayD<A>` lent as views; `AnyArray`, module
//!   `any_array`, for arrays of several dtypes in one tree), `candle` (`Tensor`),
//!   `half` (`f16`, `bf16`), `nalgebra` (`DMatrix`, `DVector`, one leaf
//!   type `DMatrix<T>`); each crate is re-exported under its name.
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

pub mod basic;
#[cfg(feature = "safetensors")]
pub mod checkpoint;
pub mod custom;
#[cfg(any(feature = "ndarray", feature = "candle"))]
pub mod ensemble;
pub mod filter;
#[cfg(feature = "serde")]
mod finite;
mod impls;
pub mod multi;
#[cfg(feature = "rayon")]
pub mod parallel;
pub mod paths;
pub mod prefix;
pub mod ravel;
pub mod reduce;
#[cfg(feature = "serde")]
pub mod serialized;
mod std_namespace;
pub mod summary;
pub mod transpose;
pub mod tree;
pub mod tree_equal;
pub mod treelize;

/// The engine of every operation, generic over the namespace: `pytree-core`'s
/// module `ops`, re-exported. The functions of this crate's family modules
/// are these fixed to [`Std`]; with a namespace of your own (see
/// [`namespace!`]), call these with it named.
///
/// ```
/// pytree_std::namespace!(pub struct Coarse; leaves = [Vec<f32>]);
/// let (leaves, def) = pytree_std::generic::basic::flatten::<Coarse, _>((vec![1.0f32, 2.0], vec![3.0f32]));
/// assert_eq!(leaves, [vec![1.0, 2.0], vec![3.0]]); // a Vec<f32> is one leaf in Coarse
/// assert_eq!(def.to_string(), "(*, *)");
/// ```
pub use pytree_core::ops as generic;

// The operations users call most, fixed to `Std` (each written in the
// module of its family).
pub use basic::{flatten, for_each, for_each_mut, leaves, leaves_mut, map, structure, unflatten};
pub use multi::{map_n, zip_mut};
pub use paths::{flatten_with_path, map_with_path};

pub use pytree_core::TreeDefLimits;
pub use pytree_core::{
    impl_leaf, DType, Error, ErrorKind, Flatten, KeyPath, Leaf, LeafAs, LeafFnErr, LeafFnError,
    LeafMut, LeafRef, NodeView, PlainLeaf, Signature, Static, TreeDef, Unflatten,
};
pub use pytree_derive::PyTree;
pub use std_namespace::{PyTree, Std};
pub use tree::Tree;

// What generated code (`#[derive(PyTree)]`, `impl_leaf!`, `std_containers!`)
// names by absolute path from this crate's root; users reach the
// same items through `custom`.
#[doc(hidden)]
pub use custom::{
    CombineSource, DefSource, ErasableKey, FieldSchema, FieldStyle, KeyRef, NodeRef, Schema, Sink,
    Source, StaticValue, TreeDefBuilder, Visit, VisitMut,
};
// Gives the compiler a visible path to pytree-core's items, so its
// messages name them briefly (`Treelize::<..>::missing`, not a path
// through pytree-core's private modules; see ui-tests/tests/treelize/).
#[doc(hidden)]
pub use pytree_core as __core;
#[doc(hidden)]
pub use pytree_core::__private;
#[doc(hidden)]
pub use pytree_core::KeyEntry;

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
