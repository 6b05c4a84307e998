//! The floor: each anchor tree's operations written by hand, as a user
//! would write them without the library, one module per tree. The
//! benchmarks time each beside the library call (`<tree>/<op>/hand`); the
//! tests and doc examples check that both compute the same thing.
//!
//! A hand-written version returns what the library returns minus the
//! TreeDef: where the library's output has a TreeDef, it keeps instead what
//! a user needs to rebuild the tree (T1: nothing, the layer count is
//! known; T3: the depth; T4: the keys; T5: the length of `b`). Where the
//! Rust type forces work (a `Box` per level, an owned `String` per key),
//! the hand-written version does that work too: its time is the floor for
//! any library that produces that type.
//!
//! For T2 (`Vec<f64>`) the floor is the plain `Vec` loop, written inline
//! in `benches/anchors.rs`.

pub mod t1;
pub mod t3;
pub mod t4;
pub mod t4_hash;
pub mod t5;

// T1's functions lived here before the per-tree modules; the allocation
// tests (`tests/tests/allocations.rs`) still call them by these names.
pub use t1::{
    build, leaves_owned, leaves_ref, leaves_ref_sized, leaves_with_path, map, map2, map2_result,
    sgd,
};
