//! # pytree-benches
//!
//! The trees, hand-written baselines and helpers that the criterion
//! benchmarks (`benches/anchors.rs`) and the allocation and deep-tree tests
//! share. Not published.
//!
//! ## Contents
//! - `shapes`: the five anchor trees T1..T5 of `shared/anchors` (and T4 as
//!   a `HashMap`), with their leaf counts.
//! - `hand`: T1's operations written by hand, the floor for each benchmark.

pub mod hand;
pub mod shapes;
