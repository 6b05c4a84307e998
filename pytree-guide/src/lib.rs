//! # The pytree guide
//!
//! The reference that the front page (README.md) leaves out, one chapter
//! per module. Each chapter is a markdown file under `docs/guide/`,
//! included here as the module's documentation, so that every Rust code
//! block in it is compiled and run by `cargo test --workspace` (as a
//! doctest of this crate, which depends on pytree-std, pytree-optim and
//! pytree-dist with the features the examples need). The README's own
//! examples run here too.
//!
//! ```
//! use pytree_std::PyTree;
//!
//! #[derive(PyTree, Clone, Debug, PartialEq)]
//! struct Linear { w: Vec<f32>, b: f32 }
//!
//! let doubled = pytree_std::map(Linear { w: vec![1.0, 2.0], b: 3.0 }, |x| 2.0 * x);
//! assert_eq!(doubled, Linear { w: vec![2.0, 4.0], b: 6.0 });
//! ```
//!
//! ## Chapters
//! - [`derive`](mod@derive): `#[derive(PyTree)]`'s attributes, and which Rust types
//!   are nodes and which are leaves;
//! - [`operations`]: every operation, beside its JAX, optree, treevalue
//!   and equinox name; trees with no leaves;
//! - [`dynamic_trees`]: `Tree<L>`, a pytree whose shape is known at run
//!   time;
//! - [`leaves`]: ndarray, candle and nalgebra leaves, what each leaf type
//!   supports, pytree-std's features;
//! - [`optimizers`]: pytree-optim (optax for Rust);
//! - [`candle`]: candle models of variables, trained in place;
//! - [`burn`]: burn modules as pytrees, trained with pytree-optim;
//! - [`checkpoints`]: `.safetensors` files by key path, Hugging Face's
//!   included;
//! - [`distributed`]: pytree-dist, data-parallel training over MPI;
//! - [`python_differences`]: what Python decides at run time, and the Rust
//!   routes for it.

#![warn(missing_docs)]

#[doc = include_str!("../../docs/guide/derive.md")]
pub mod derive {}

#[doc = include_str!("../../docs/guide/operations.md")]
pub mod operations {}

#[doc = include_str!("../../docs/guide/dynamic-trees.md")]
pub mod dynamic_trees {}

#[doc = include_str!("../../docs/guide/leaves.md")]
pub mod leaves {}

#[doc = include_str!("../../docs/guide/optimizers.md")]
pub mod optimizers {}

#[doc = include_str!("../../docs/guide/candle.md")]
pub mod candle {}

#[doc = include_str!("../../docs/guide/burn.md")]
pub mod burn {}

#[doc = include_str!("../../docs/guide/checkpoints.md")]
pub mod checkpoints {}

#[doc = include_str!("../../docs/guide/distributed.md")]
pub mod distributed {}

#[doc = include_str!("../../docs/guide/python-differences.md")]
pub mod python_differences {}

/// The README's examples, run as doctests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
