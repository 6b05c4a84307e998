//! # pytree-benches
//!
//! The trees, hand-written baselines and helpers that the criterion
//! benchmarks (`benches/anchors.rs`) and the allocation and deep-tree tests
//! share. Not published.
//!
//! ## Contents
//! - `shapes`: the five anchor trees T1..T5 of `anchors/` (and T4 as
//!   a `HashMap`), with their leaf counts.
//! - `gpt2`: GPT-2 small's parameter shapes as a derived pytree of ndarray
//!   arrays, and the Adam step written by hand over them (the baseline of
//!   `benches/adam_gpt2.rs`), with a STREAM-style triad for the
//!   memory-bandwidth floor.
//! - `hand`: the operations written by hand, one module per tree (T1, T3,
//!   T4 as `BTreeMap` and `HashMap`, T5): the floor for each benchmark.

pub mod gpt2;
pub mod hand;
pub mod shapes;
