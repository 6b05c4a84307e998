//! The key paths of a TreeDef's leaves, read from the structure alone
//! (optree's `PyTreeSpec.paths()`): where leaf `i` sits, without the tree.

use alloc::vec::Vec;

use super::align::ChildKeys;
use super::decode::SkipTable;
use super::{Decoder, Item, TreeDef};
use crate::paths::key_path::{KeyEntry, KeyPath};

/// A node whose children are being named.
struct Frame {
    keys: ChildKeys,
    next: usize,
    len: usize,
    /// Length of the path at the node itself.
    path_len: usize,
}

impl TreeDef {
    /// The key path of every leaf, in leaf order (optree's
    /// `treespec.paths()`), computed from the structure alone. A key path
    /// built from a TreeDef carries no kind ([`KeyPath::kind`] is
    /// `"param"`); the paths of a tree's own walk do.
    ///
    /// ```
    /// use pytree_std::PyTree;
    /// #[derive(PyTree)]
    /// struct Linear { w: f32, b: Vec<f32> }
    /// let def = pytree_std::structure(&Linear { w: 0.0, b: vec![0.0, 0.0] });
    /// let paths: Vec<String> = def.leaf_paths()?.iter().map(|p| p.to_string()).collect();
    /// assert_eq!(paths, [".w", ".b[0]", ".b[1]"]);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    ///
    /// The result holds one path per leaf, and a document of a few bytes
    /// may claim billions of leaves: when the paths would need more memory
    /// than the [output budget](crate::TreeDefLimits::output_budget)
    /// (counted from the leaves and the depth, before anything is
    /// allocated), the result is an error naming it.
    /// [`leaf_path`](Self::leaf_path) finds one path.
    pub fn leaf_paths(&self) -> Result<Vec<KeyPath>, crate::error::Error> {
        // At most two entries (a variant and a field) per level.
        let per_leaf = 2usize
            .checked_mul(self.node_depth())
            .and_then(|n| n.checked_mul(core::mem::size_of::<KeyEntry>()))
            .and_then(|n| n.checked_add(core::mem::size_of::<KeyPath>()));
        let bytes = per_leaf.and_then(|p| super::budget::mul_add(self.num_leaves(), p, 0));
        super::budget::check_output(self, "the leaf paths of this TreeDef", bytes)?;
        let mut out = Vec::with_capacity(self.num_leaves());
        self.walk_leaf_paths(|path| {
            out.push(KeyPath::from_entries(path.to_vec()));
            true
        });
        Ok(out)
    }

    /// The key path of leaf `i` (in leaf order), or `None` past the last
    /// leaf. Runs of leaves are passed in one step and subtrees that hold
    /// no wanted leaf are jumped over (a `SkipTable`), so the cost is the
    /// records, not `i` (a document may claim 10^18 leaves).
    ///
    /// ```
    /// let def = pytree_std::structure(&(1, vec![2, 3]));
    /// assert_eq!(def.leaf_path(2).map(|p| p.to_string()), Some("[1][1]".to_string()));
    /// assert_eq!(def.leaf_path(3), None);
    /// ```
    pub fn leaf_path(&self, i: usize) -> Option<KeyPath> {
        if i >= self.num_leaves() {
            return None;
        }
        let table = SkipTable::new(self);
        let mut decoder = Decoder::new(self);
        let mut path: Vec<KeyEntry> = Vec::new();
        // Leaves still to pass inside the subtree the decoder stands at.
        let mut left = i;
        loop {
            let (node, statics) = match decoder.next_item() {
                Some(Item::Node(node, statics)) => (node, statics),
                Some(Item::Leaf) => return Some(KeyPath::from_entries(path)),
                None => return None,
            };
            let keys = ChildKeys::of(node, statics);
            let mut j = 0;
            loop {
                if j >= node.arity() {
                    return None;
                }
                let run = decoder.leaves_ahead().min(node.arity() - j);
                if run > 0 {
                    if left < run {
                        keys.push(j + left, &mut path);
                        return Some(KeyPath::from_entries(path));
                    }
                    decoder.skip_leaves(run);
                    left -= run;
                    j += run;
                    continue;
                }
                let mut probe = decoder.clone();
                let inside = table.skip(&mut probe);
                if left < inside {
                    keys.push(j, &mut path);
                    break;
                }
                decoder = probe;
                left -= inside;
                j += 1;
            }
        }
    }

    fn walk_leaf_paths(&self, mut f: impl FnMut(&[KeyEntry]) -> bool) {
        let mut decoder = Decoder::new(self);
        let mut path: Vec<KeyEntry> = Vec::new();
        let mut stack: Vec<Frame> = Vec::new();
        let mut at_root = true;
        loop {
            if !at_root {
                // Move to the next child of the innermost unfinished node.
                loop {
                    let Some(top) = stack.last_mut() else {
                        return;
                    };
                    path.truncate(top.path_len);
                    if top.next < top.len {
                        top.keys.push(top.next, &mut path);
                        top.next += 1;
                        break;
                    }
                    stack.pop();
                }
            }
            at_root = false;
            match decoder.next_item() {
                None => return,
                Some(Item::Leaf) => {
                    if !f(&path) {
                        return;
                    }
                }
                Some(Item::Node(node, statics)) => stack.push(Frame {
                    keys: ChildKeys::of(node, statics),
                    next: 0,
                    len: node.arity(),
                    path_len: path.len(),
                }),
            }
        }
    }
}
