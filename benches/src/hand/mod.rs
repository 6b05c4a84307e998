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

/// The test every tree's module shares: its hand-written `map`, `map2`
/// and `sgd` compute what the library's `map`, `map_n` and `zip_mut` do,
/// on the anchor tree `$tree()`.
#[cfg(test)]
macro_rules! map_map2_and_sgd_test {
    ($tree:expr) => {
        #[test]
        fn hand_written_map_map2_and_sgd_equal_the_librarys() {
            let t = $tree;
            assert_eq!(map(t(), |x| x * 3.0), pytree_std::map(t(), |x| x * 3.0));
            let (a, b) = (t(), pytree_std::map(t(), |x| x + 1.0));
            let lib = pytree_std::walk::map_n(&a, [&b], |x, [y]| x - y).unwrap();
            assert_eq!(map2(&a, &b, |x, y| x - y), lib);
            let (mut p, mut q) = (t(), t());
            sgd(&mut p, &b, 0.01);
            pytree_std::zip_mut([&mut q], [&b], |[p], [g]| *p -= 0.01 * g).unwrap();
            assert_eq!(p, q);
            assert_ne!(p, t());
        }
    };
}

/// The test the modules of T3 to T5 share: their hand-written `flatten`,
/// `leaves` and `flatten_with_path` give what the library's do on the
/// anchor tree `$tree()` (of type `$ty`), which the library's `unflatten`
/// rebuilds.
#[cfg(test)]
macro_rules! flatten_leaves_and_paths_test {
    ($tree:expr, $ty:ty) => {
        #[test]
        fn hand_written_flatten_leaves_and_paths_equal_the_librarys() {
            let t = $tree;
            let (lib, def) = pytree_std::flatten(t());
            assert_eq!(flatten(t()).0, lib);
            let rebuilt: $ty = pytree_std::unflatten(&def, lib.iter().copied()).unwrap();
            assert_eq!(rebuilt, t());
            let tree = t();
            assert_eq!(leaves(&tree), pytree_std::leaves(&tree));
            assert_eq!(flatten_with_path(t()), pytree_std::flatten_with_path(t()).0);
        }
    };
}

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
