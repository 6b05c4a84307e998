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
//!   [`leaves_mut`], [`map`], [`map_n`], [`zip_mut`], [`for_each_mut`],
//!   [`flatten_with_path`], [`map_with_path`];
//! - the traits [`PyTree`] (the bound to write), [`Flatten`],
//!   [`Unflatten`], [`Leaf`] (how a leaf is lent: [`LeafRef`],
//!   [`LeafMut`]), `#[derive(PyTree)]` (see `pytree-derive` for its
//!   attributes), [`impl_leaf!`];
//! - [`TreeDef`], [`KeyPath`], [`Error`], [`ErrorKind`], [`Std`];
//! - [`Tree`] and [`tree!`]: a pytree whose shape is known only at run
//!   time (module [`tree`](mod@tree)).
//!
//! Every other operation lives in the module of its family, each a plain
//! function written and documented once, whose body calls the engine in
//! `pytree-core` (`pytree_core::ops::<family>::<fn>`, reachable here as
//! [`generic`]). One function per capability, its variants as arguments:
//! several trees are one form (`map_n(&a, [&b], |x, [y]| ..)`,
//! `zip_mut([&mut p], [&g], |[p], [g]| ..)`), a closure that returns a
//! `Result` makes a walk fallible ([`LeafFnOutput`](walk::LeafFnOutput)),
//! a leaf is found by key path or by index alike
//! ([`LeafAddress`](paths::LeafAddress)):
//! - [`walk`]: the root's walks and [`map_into`](walk::map_into) (another
//!   leaf type), [`drop_deep`](walk::drop_deep);
//! - [`paths`]: key paths, one `*_with_path` form per walk (a tree's
//!   leaves read with their paths lent:
//!   [`for_each_with_path`](paths::for_each_with_path); several trees:
//!   [`zip_mut_with_path`](paths::zip_mut_with_path)), a leaf
//!   read, updated or replaced at its path or index
//!   ([`get`](paths::get), [`update`](paths::update), [`set`](paths::set)),
//!   a subtree replaced ([`set_subtree`](paths::set_subtree));
//!   [`KeyStr`](paths::KeyStr) writes a path in JAX's `keystr` styles,
//!   [`paths::KeyEntry`] is one step of a path;
//! - [`reductions`]: [`fold`](reductions::fold), and a table of the
//!   reductions written with it (sum, max, all, any, ...);
//! - [`split`]: [`partition`](split::partition) and
//!   [`combine`](split::combine), with fill values
//!   [`partition_fill`](split::partition_fill), and
//!   [`replace_nones`](split::replace_nones);
//! - [`nested`]: a tree as an outer tree of inner trees, prefix trees
//!   (JAX's `in_axes`, [`Subtree`](nested::Subtree)) and transposes
//!   ([`transpose`](nested::transpose), [`subside`](nested::subside) /
//!   [`rise`](nested::rise));
//! - [`treelize`]: [`Treelize`](treelize::Treelize), a function of leaves
//!   applied to trees, with treevalue's [`mode`](treelize::mode)s;
//! - `parallel` (feature `rayon`): `par_zip_mut` (the arguments of
//!   [`zip_mut`]) and `par_map`, leaves split across threads by element
//!   count.
//!
//! And beside them:
//! - [`elements`]: what the leaves hold, element by element:
//!   [`ravel`](elements::ravel) / [`Unravel`](elements::Unravel) (JAX's
//!   `ravel_pytree`), [`tree_equal`](elements::tree_equal) with a
//!   [`Tolerance`](elements::Tolerance), [`signatures`](elements::signatures)
//!   and [`summary`](elements::summary) (dtypes, shapes, element and byte
//!   counts).
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
//!   type `DMatrix<T>`), `burn` (any burn module as a pytree of its float
//!   parameters, `BurnModule`, whose leaves are `BurnTensor`s: burn
//!   tensors of any rank); each crate is re-exported under its name.
//! - With the `serde` feature: serde for [`Tree`] and [`TreeDef`], and for
//!   any pytree as its TreeDef and leaves (module `serialized`).
//! - With the `ndarray` or `candle` feature: ensembles (module
//!   `ensemble`), `N` trees of arrays or tensors stacked along a new
//!   leading axis into one tree (`stack_leaves`) and back
//!   (`unstack_leaves`), for any leaf type that is `Stackable`.
//! - [`leaf_bytes`]: a leaf as little-endian bytes with a dtype and
//!   shape, for code that moves leaves between processes or to files:
//!   [`ByteLeaf`] (implemented for every tensor-like leaf type, each with
//!   its own feature), [`ByteTensor`], [`Element`].
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
pub mod elements;
#[cfg(any(feature = "ndarray", feature = "candle", feature = "burn"))]
pub mod ensemble;
#[cfg(feature = "serde")]
mod finite;
mod impls;
pub mod leaf_bytes;
pub mod nested;
#[cfg(feature = "rayon")]
pub mod parallel;
pub mod paths;
pub mod reductions;
#[cfg(feature = "serde")]
pub mod serialized;
pub mod split;
mod std_namespace;
pub mod tree;
pub mod treelize;
pub mod walk;

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
pub use paths::{flatten_with_path, map_with_path};
pub use walk::{
    flatten, for_each_mut, leaves, leaves_mut, map, map_n, structure, unflatten, zip_mut,
};

pub use leaf_bytes::{ByteLeaf, ByteTensor, Element};
pub use pytree_core::TreeDefLimits;
pub use pytree_core::{
    impl_leaf, DType, Error, ErrorKind, Flatten, IntoLeafFnError, KeyPath, Leaf, LeafAs,
    LeafFnError, LeafMut, LeafRef, NodeView, PlainLeaf, Signature, Static, TreeDef, Unflatten,
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

#[cfg(feature = "ndarray")]
pub use any_array::{AnyArray, AnyArrayView, AnyArrayViewMut, AnyElement};
/// The `burn` crate (feature `burn`), re-exported so that a user's
/// modules and tensors are the ones this crate implements the traits for.
#[cfg(feature = "burn")]
pub use burn;
/// The `candle-core` crate (feature `candle`), re-exported so that a user's
/// `Tensor` is the one this crate implements the traits for.
#[cfg(feature = "candle")]
pub use candle_core;
/// The `half` crate (feature `half`, or `ndarray` for `AnyArray`'s
/// f16 / bf16 variants), re-exported: with `half`, `f16` and `bf16` are
/// leaves.
#[cfg(any(feature = "half", feature = "ndarray"))]
pub use half;
#[cfg(feature = "ndarray")]
pub use impls::any_array;
#[cfg(feature = "burn")]
pub use impls::{BurnModule, BurnTensor};
/// The `indexmap` crate, re-exported: `IndexMap` is an insertion-ordered
/// map node (always available; `Tree` is built on it).
pub use indexmap;
/// The `nalgebra` crate (feature `nalgebra`), re-exported so that a user's
/// matrices are the ones this crate implements the traits for.
#[cfg(feature = "nalgebra")]
pub use nalgebra;
/// The `ndarray` crate (feature `ndarray`), re-exported so that a user's
/// arrays are the ones this crate implements the traits for.
#[cfg(feature = "ndarray")]
pub use ndarray;
