//! A minimal `flatten_with_path` for the benchmarks: a [`Visit`] that keeps
//! the current key path from `enter`/`exit`, pairs a copy of it with every
//! leaf reference and builds the TreeDef on the way (JAX's
//! `tree_flatten_with_path`). The library's own `flatten_with_path` is being
//! written on another branch; the benchmark switches to it when it lands.

use pytree_std::{
    Flatten, KeyEntry, KeyPath, KeyRef, NodeRef, StaticValue, Std, TreeDef, TreeDefBuilder, Visit,
};

/// Collects `(path, leaf)` pairs and the TreeDef.
struct PathCollector<'a, L> {
    path: Vec<KeyEntry>,
    out: Vec<(KeyPath, &'a L)>,
    def: TreeDefBuilder,
}

impl<'a, L> PathCollector<'a, L> {
    fn push(&mut self, leaf: &'a L) {
        self.out
            .push((KeyPath::from_entries(self.path.clone()), leaf));
    }
}

impl<'a, L> Visit<'a, L> for PathCollector<'a, L> {
    fn leaf(&mut self, leaf: &'a L) {
        self.def.leaf();
        self.push(leaf);
    }
    fn leaf_slice(&mut self, leaves: &'a [L]) {
        self.def.leaves(leaves.len());
        self.out.reserve(leaves.len());
        for (i, leaf) in leaves.iter().enumerate() {
            self.path.push(KeyEntry::Index(i));
            self.push(leaf);
            self.path.pop();
        }
    }
    fn node(&mut self, node: NodeRef<'_>) {
        self.def.node(node);
    }
    fn map_keys<F: FnOnce() -> StaticValue>(&mut self, keys: F) {
        self.def.map_keys(keys());
    }
    fn enter(&mut self, key: KeyRef<'_>) {
        self.path.push(key.to_owned_entry());
    }
    fn exit(&mut self) {
        self.path.pop();
    }
}

/// Every leaf by reference with its key path, in pre-order, and the TreeDef.
///
/// ```
/// let t = (1.0, vec![2.0]);
/// let (pairs, def) = pytree_benches::flatten_with_path(&t);
/// let shown: Vec<String> = pairs.iter().map(|(p, x)| format!("{p}={x}")).collect();
/// assert_eq!(shown, ["[0]=1", "[1][0]=2"]);
/// assert_eq!(def, pytree_std::structure(&t));
/// ```
pub fn flatten_with_path<T: Flatten<Std>>(tree: &T) -> (Vec<(KeyPath, &T::Leaf)>, TreeDef) {
    let mut v = PathCollector {
        path: Vec::new(),
        out: Vec::new(),
        def: TreeDefBuilder::new(),
    };
    tree.visit(&mut v);
    (v.out, v.def.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{hand, shapes};

    #[test]
    fn paths_of_t1_equal_the_hand_written_ones() {
        let t = shapes::t1();
        let (pairs, def) = flatten_with_path(&t);
        assert_eq!(pairs, hand::leaves_with_path(&t));
        assert_eq!(def, pytree_std::structure(&t));
    }

    #[test]
    fn map_entries_are_keyed_by_their_key() {
        let t = shapes::t4();
        let (pairs, _) = flatten_with_path(&t);
        assert_eq!(pairs.len(), shapes::T4_LEAVES);
        assert_eq!(pairs[7].0.to_string(), "[\"k00007\"]");
        assert_eq!(*pairs[7].1, 7.0);
    }
}
