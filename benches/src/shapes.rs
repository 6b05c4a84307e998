//! The five anchor trees of `benches/anchors/bench_anchors.py`, built in Rust
//! with `f64` leaves (Python floats are doubles). Leaves are distinct values
//! from a counter, as in the Python script, and every builder is
//! deterministic, so two calls give two equal, separately allocated trees.

use std::collections::{BTreeMap, HashMap};

use pytree_std::PyTree;

/// A weight alone (`embed`).
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct W {
    /// The weight.
    pub w: f64,
}

/// A weight and a bias (`q`, `k`, `v`, `o`, `fc1`, `fc2`).
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct Wb {
    /// The weight.
    pub w: f64,
    /// The bias.
    pub b: f64,
}

/// A layer norm's gain and bias (`ln1`, `ln2`, `final_ln`).
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct Gb {
    /// The gain.
    pub g: f64,
    /// The bias.
    pub b: f64,
}

/// Attention projections.
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct Attn {
    /// Query.
    pub q: Wb,
    /// Key.
    pub k: Wb,
    /// Value.
    pub v: Wb,
    /// Output.
    pub o: Wb,
}

/// The feed-forward block.
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct Mlp {
    /// First linear map.
    pub fc1: Wb,
    /// Second linear map.
    pub fc2: Wb,
}

/// One transformer layer: 16 leaves.
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct Layer {
    /// Attention.
    pub attn: Attn,
    /// Feed-forward.
    pub mlp: Mlp,
    /// First layer norm.
    pub ln1: Gb,
    /// Second layer norm.
    pub ln2: Gb,
}

/// T1 "transformer": 48 layers, 771 leaves, 532 internal nodes.
///
/// ```
/// let def = pytree_std::structure(&pytree_benches::shapes::t1());
/// assert_eq!(def.num_leaves(), pytree_benches::shapes::T1_LEAVES);
/// ```
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct Transformer {
    /// The embedding.
    pub embed: W,
    /// The layers.
    pub layers: Vec<Layer>,
    /// The final layer norm.
    pub final_ln: Gb,
}

/// Leaves of T1.
pub const T1_LEAVES: usize = 771;
/// Nodes of T1 (leaves included), as the anchor README counts them.
pub const T1_NODES: usize = 1303;

/// Builds T1; its leaves are 1.0, 2.0, ... in declaration order (the
/// Python script's `_Counter`), laid out by [`crate::hand::t1::build`].
///
/// ```
/// let t = pytree_benches::shapes::t1();
/// assert_eq!((t.embed.w, t.final_ln.b), (1.0, 771.0));
/// ```
pub fn t1() -> Transformer {
    crate::hand::t1::build(48, (1..=T1_LEAVES).map(|i| i as f64))
}

/// Leaves of T2.
pub const T2_LEAVES: usize = 100_000;

/// T2 "wide": 100 000 floats in a `Vec`.
///
/// ```
/// assert_eq!(pytree_benches::shapes::t2().len(), 100_000);
/// ```
pub fn t2() -> Vec<f64> {
    (0..T2_LEAVES).map(|i| i as f64).collect()
}

/// T3 "deep": a leaf and the next level, 500 times, ending in a leaf
/// (Python's nested 2-tuples `(x, (x, (..., x)))`), recursive through `Box`.
///
/// ```
/// use pytree_benches::shapes::{deep, Deep};
/// assert_eq!(deep(1), Deep::Level(0.0, Box::new(Deep::End(1.0))));
/// ```
#[derive(PyTree, Clone, Debug, PartialEq)]
pub enum Deep {
    /// A leaf and the next level.
    Level(f64, Box<Deep>),
    /// The last leaf.
    End(f64),
}

/// Levels of T3.
pub const T3_DEPTH: usize = 500;
/// Leaves of T3.
pub const T3_LEAVES: usize = T3_DEPTH + 1;

/// Builds a chain of `depth` levels (iteratively, so any depth builds).
///
/// ```
/// let def = pytree_std::structure(&pytree_benches::shapes::deep(3));
/// assert_eq!(def.num_leaves(), 4);
/// ```
pub fn deep(depth: usize) -> Deep {
    let mut node = Deep::End(depth as f64);
    for i in (0..depth).rev() {
        node = Deep::Level(i as f64, Box::new(node));
    }
    node
}

/// Builds T3.
///
/// ```
/// let def = pytree_std::structure(&pytree_benches::shapes::t3());
/// assert_eq!(def.num_leaves(), pytree_benches::shapes::T3_LEAVES);
/// ```
pub fn t3() -> Deep {
    deep(T3_DEPTH)
}

/// Leaves of T4.
pub const T4_LEAVES: usize = 10_000;

fn t4_entries() -> impl Iterator<Item = (String, f64)> {
    (0..T4_LEAVES).map(|i| (format!("k{i:05}"), i as f64))
}

/// T4 "dict10k": keys `k00000`..`k09999`.
///
/// ```
/// assert_eq!(pytree_benches::shapes::t4()["k00042"], 42.0);
/// ```
pub fn t4() -> BTreeMap<String, f64> {
    t4_entries().collect()
}

/// T4 as a `HashMap` (flattened in sorted key order, like the BTreeMap).
///
/// ```
/// use pytree_benches::shapes::{t4, t4_hash};
/// assert_eq!(pytree_std::flatten(t4_hash()).0, pytree_std::flatten(t4()).0);
/// ```
pub fn t4_hash() -> HashMap<String, f64> {
    t4_entries().collect()
}

/// The dict of T5.
#[derive(PyTree, Clone, Debug, PartialEq)]
pub struct Small {
    /// `a`.
    pub a: f64,
    /// `b`.
    pub b: Vec<f64>,
}

/// Leaves of T5.
pub const T5_LEAVES: usize = 4;

/// T5 "small": `({a: 1.0, b: [2.0, 3.0]}, 4.0)`.
///
/// ```
/// assert_eq!(pytree_std::flatten(pytree_benches::shapes::t5()).0, [1.0, 2.0, 3.0, 4.0]);
/// ```
pub fn t5() -> (Small, f64) {
    (
        Small {
            a: 1.0,
            b: vec![2.0, 3.0],
        },
        4.0,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_anchor_tree_has_the_python_scripts_leaf_count() {
        assert_eq!(pytree_std::structure(&t1()).num_leaves(), T1_LEAVES);
        assert_eq!(pytree_std::structure(&t2()).num_leaves(), T2_LEAVES);
        assert_eq!(pytree_std::structure(&t3()).num_leaves(), T3_LEAVES);
        assert_eq!(pytree_std::structure(&t4()).num_leaves(), T4_LEAVES);
        assert_eq!(pytree_std::structure(&t4_hash()).num_leaves(), T4_LEAVES);
        assert_eq!(pytree_std::structure(&t5()).num_leaves(), T5_LEAVES);
    }

    #[test]
    fn t1_has_the_python_scripts_node_count_and_distinct_leaves() {
        let def = pytree_std::structure(&t1());
        assert_eq!(def.num_nodes(), T1_NODES);
        let (leaves, _) = pytree_std::flatten(t1());
        let expected: Vec<f64> = (1..=T1_LEAVES).map(|i| i as f64).collect();
        assert_eq!(leaves, expected);
    }

    #[test]
    fn every_anchor_treedef_takes_at_most_sixteen_bytes_per_node() {
        // Records are 16 bytes, at most one per node; a map's keys add one
        // 16-byte handle to the statics table.
        fn per_node<T: pytree_std::Flatten<pytree_std::Std> + Clone>(t: &T) -> f64 {
            let def = pytree_std::structure(t);
            assert_eq!(def, pytree_std::flatten(t.clone()).1);
            def.heap_bytes() as f64 / def.num_nodes() as f64
        }
        assert!(per_node(&t1()) <= 16.0);
        assert!(per_node(&t2()) <= 16.0);
        assert!(per_node(&t3()) <= 16.0);
        assert!(per_node(&t4()) <= 16.0);
        assert!(per_node(&t5()) <= 16.0);
    }

    #[test]
    fn t3_is_five_hundred_levels_ending_in_a_leaf() {
        let def = pytree_std::structure(&t3());
        assert!(def
            .to_string()
            .starts_with("Deep::Level(*, Deep::Level(*, "));
        let closing = ")".repeat(T3_DEPTH);
        assert!(def.to_string().ends_with(&format!("Deep::End(*){closing}")));
        assert_eq!(def.num_nodes(), 2 * T3_DEPTH + 2);
    }
}
