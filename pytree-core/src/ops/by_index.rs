//! Leaves by their position in leaf order (pre-order), without flattening:
//! `leaf_at`, `leaf_at_mut` and `leaf_path_at` walk the tree by reference
//! and keep only leaf `i` (a sequence of leaves is indexed directly). The
//! structure alone answers the same for paths:
//! [`TreeDef::leaf_path`](crate::TreeDef::leaf_path) and
//! [`TreeDef::leaf_paths`](crate::TreeDef::leaf_paths) (optree's
//! `treespec.paths()`).

use alloc::format;

use crate::error::Error;
use crate::leaf::{LeafMut, LeafRef};
use crate::ops::tracker::follow_path;
use crate::ops::tracker::PathTracker;
use crate::paths::key_path::KeyPath;
use crate::traits::flatten::Flatten;
use crate::traits::visit::{visit_either, Visit};
use crate::treedef::node::NodeRef;

/// Keeps leaf `index` of a walk, and counts the leaves.
struct Nth<R> {
    index: usize,
    seen: usize,
    found: Option<R>,
}

impl<R> Nth<R> {
    fn new(index: usize) -> Self {
        Nth {
            index,
            seen: 0,
            found: None,
        }
    }

    #[inline]
    fn leaf(&mut self, leaf: R) {
        if self.seen == self.index {
            self.found = Some(leaf);
        }
        self.seen += 1;
    }

    #[inline]
    fn run<I: ExactSizeIterator<Item = R>>(&mut self, mut leaves: I) {
        let n = leaves.len();
        if self.found.is_none() && self.index >= self.seen && self.index - self.seen < n {
            self.found = leaves.nth(self.index - self.seen);
        }
        self.seen += n;
    }

    /// The leaf, or the error naming the index and the number of leaves.
    fn result(self) -> Result<R, Error> {
        let (index, seen) = (self.index, self.seen);
        self.found.ok_or_else(|| out_of_range(index, seen))
    }
}

#[cold]
fn out_of_range(index: usize, num_leaves: usize) -> Error {
    Error::custom(format!(
        "no leaf at index {index}: expected an index below {num_leaves}, the number of leaves"
    ))
}

visit_either!(impl<R> for Nth<R> {
    #[inline]
    fn leaf(&mut self, leaf: R) {
        Nth::leaf(self, leaf);
    }
    #[inline]
    fn leaf_run<I: ExactSizeIterator<Item = R>>(&mut self, leaves: I) {
        self.run(leaves);
    }
});

/// The engine of `pytree_std::paths::get` (by index), for any namespace `Ns`
/// (documented there; [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// use pytree_std::{tree, Tree};
/// let t: Tree<i32> = tree! { "a" => 1, "x" => { "c" => 2, "d" => 3 } };
/// assert_eq!(pytree_core::ops::by_index::leaf_at::<pytree_std::Std, _>(&t, 2)?, &3);
/// assert!(pytree_core::ops::by_index::leaf_at::<pytree_std::Std, _>(&t, 3).is_err());
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn leaf_at<Ns, T: Flatten<Ns>>(
    tree: &T,
    index: usize,
) -> Result<LeafRef<'_, Ns, T::Leaf>, Error> {
    let mut v = Nth::new(index);
    tree.visit(&mut v);
    v.result()
}

/// The engine of `pytree_std::paths::update` (by index), for any namespace `Ns`
/// (documented there; [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// let mut t = (1.0f32, vec![2.0f32, 3.0]);
/// *pytree_core::ops::by_index::leaf_at_mut::<pytree_std::Std, _>(&mut t, 2)? = 30.0;
/// assert_eq!(t, (1.0, vec![2.0, 30.0]));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn leaf_at_mut<Ns, T: Flatten<Ns>>(
    tree: &mut T,
    index: usize,
) -> Result<LeafMut<'_, Ns, T::Leaf>, Error> {
    let mut v = Nth::new(index);
    tree.visit_mut(&mut v);
    v.result()
}

/// Keeps the path of leaf `index`.
struct NthPath {
    tracker: PathTracker,
    nth: Nth<KeyPath>,
}

impl<R> Visit<R> for NthPath {
    #[inline]
    fn leaf(&mut self, _leaf: R) {
        if self.nth.seen == self.nth.index {
            self.nth.found = Some(self.tracker.path().clone());
        }
        self.nth.seen += 1;
    }
    #[inline]
    fn leaf_run<I: ExactSizeIterator<Item = R>>(&mut self, leaves: I) {
        let n = leaves.len();
        let (index, seen) = (self.nth.index, self.nth.seen);
        if index >= seen && index - seen < n {
            let path = self.tracker.with_index(index - seen, KeyPath::clone);
            self.nth.found = Some(path);
        }
        self.nth.seen += n;
    }
    #[inline]
    fn node(&mut self, node: NodeRef<'_>) {
        self.tracker.node(&node);
    }
    follow_path!(tracker);
}

/// The key path of the leaf at flat index `i`, for any namespace `Ns`
/// ([`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// let t = (1, vec![2, 3]);
/// assert_eq!(pytree_core::ops::by_index::leaf_path_at::<pytree_std::Std, _>(&t, 2)?.to_string(), "[1][1]");
/// assert_eq!(pytree_std::structure(&t).leaf_path(2), Some(pytree_core::ops::by_index::leaf_path_at::<pytree_std::Std, _>(&t, 2)?));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn leaf_path_at<Ns, T: Flatten<Ns>>(tree: &T, index: usize) -> Result<KeyPath, Error> {
    let mut v = NthPath {
        tracker: PathTracker::new(),
        nth: Nth::new(index),
    };
    tree.visit(&mut v);
    v.nth.result()
}
