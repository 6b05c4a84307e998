//! The operations that hand each leaf over with its [`KeyPath`] (JAX's
//! `tree_flatten_with_path`, `tree_leaves_with_path`, `tree_map_with_path`):
//! `flatten_with_path`, `leaves_with_path`, `map_with_path`,
//! `for_each_with_path`, `for_each_mut_with_path`.
//!
//! One `PathTracker` per walk keeps the current path; a leaf's path is
//! lent to the callback (`&KeyPath`) and cloned only where the result keeps
//! it (`flatten_with_path`, `leaves_with_path`: one clone per leaf, as JAX
//! builds one key tuple per leaf). Every path knows its kind
//! ([`KeyPath::kind`]).

use alloc::vec::Vec;

use crate::error::Error;
use crate::leaf::{LeafMut, LeafRef};
use crate::ops::tracker::follow_path;
use crate::ops::tracker::PathTracker;
use crate::ops::unflatten;
use crate::paths::key_path::KeyPath;
use crate::static_data::StaticValue;
use crate::traits::flatten::{Flatten, Unflatten};
use crate::traits::visit::visit_either;
use crate::traits::visit::Sink;
use crate::treedef::node::NodeRef;
use crate::treedef::{TreeDef, TreeDefBuilder};

/// Builds the TreeDef and hands each leaf by value to `f` with its path.
struct PathSink<F> {
    tracker: PathTracker,
    def: TreeDefBuilder,
    f: F,
}

impl<L, F: FnMut(&KeyPath, L)> Sink<L> for PathSink<F> {
    #[inline]
    fn leaf(&mut self, leaf: L) {
        self.def.leaf();
        (self.f)(self.tracker.path(), leaf);
    }
    #[inline]
    fn leaf_vec(&mut self, leaves: Vec<L>) {
        self.def.leaves(leaves.len());
        for (i, leaf) in leaves.into_iter().enumerate() {
            let f = &mut self.f;
            self.tracker.with_index(i, |path| f(path, leaf));
        }
    }
    #[inline]
    fn node(&mut self, node: NodeRef<'_>) {
        self.tracker.node(&node);
        self.def.node(node);
    }
    fn map_keys<K: FnOnce() -> StaticValue>(&mut self, keys: K) {
        self.def.map_keys(keys());
    }
    follow_path!(tracker);
}

/// Walks a tree by value, calling `f(path, leaf)` in pre-order; returns the
/// TreeDef.
pub(crate) fn flatten_walk<Ns, T, F>(tree: T, f: F) -> TreeDef
where
    T: Flatten<Ns>,
    F: FnMut(&KeyPath, T::Leaf),
{
    let mut sink = PathSink {
        tracker: PathTracker::new(),
        def: TreeDefBuilder::new(),
        f,
    };
    tree.flatten_into(&mut sink);
    sink.def.build()
}

/// Hands each leaf by reference to `f` with its path.
struct PathVisitor<F> {
    tracker: PathTracker,
    f: F,
}

impl<F> PathVisitor<F> {
    fn new(f: F) -> Self {
        let tracker = PathTracker::new();
        PathVisitor { tracker, f }
    }
}

visit_either!(impl<R, F: FnMut(&KeyPath, R)> for PathVisitor<F> {
    #[inline]
    fn leaf(&mut self, leaf: R) {
        (self.f)(self.tracker.path(), leaf);
    }
    #[inline]
    fn leaf_run<I: ExactSizeIterator<Item = R>>(&mut self, leaves: I) {
        for (i, leaf) in leaves.enumerate() {
            let f = &mut self.f;
            self.tracker.with_index(i, |path| f(path, leaf));
        }
    }
    #[inline]
    fn node(&mut self, node: NodeRef<'_>) {
        self.tracker.node(&node);
    }
    follow_path!(tracker);
});

/// `pytree_std::paths::flatten_with_path` for any namespace `Ns` (documented
/// there; [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// use pytree_std::PyTree;
/// #[derive(PyTree)]
/// struct Linear { w: f32, b: f32 }
/// let (pairs, def) = pytree_core::ops::with_path::flatten_with_path::<pytree_std::Std, _>(vec![Linear { w: 1.0, b: 2.0 }]);
/// assert_eq!(pairs[1].0.to_string(), "[0].b");
/// assert_eq!(pairs[1].1, 2.0);
/// assert_eq!(def.num_leaves(), 2);
/// ```
pub fn flatten_with_path<Ns, T: Flatten<Ns>>(tree: T) -> (Vec<(KeyPath, T::Leaf)>, TreeDef) {
    let mut out = Vec::new();
    let def = flatten_walk::<Ns, T, _>(tree, |path, leaf| out.push((path.clone(), leaf)));
    (out, def)
}

/// `pytree_std::paths::leaves_with_path` for any namespace `Ns` (documented
/// there; [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// let t = (1, Some(2));
/// let shown: Vec<String> = pytree_core::ops::with_path::leaves_with_path::<pytree_std::Std, _>(&t)
///     .into_iter()
///     .map(|(path, x)| format!("{path}: {x}"))
///     .collect();
/// assert_eq!(shown, ["[0]: 1", "[1]: 2"]);
/// ```
pub fn leaves_with_path<Ns, T: Flatten<Ns>>(tree: &T) -> Vec<(KeyPath, LeafRef<'_, Ns, T::Leaf>)> {
    let mut out = Vec::new();
    for_each_with_path::<Ns, T, _>(tree, |path, leaf| out.push((path.clone(), leaf)));
    out
}

/// `pytree_std::paths::map_with_path` for any namespace `Ns` (documented there;
/// [`ops`](crate::ops) says how to name `Ns`).
///
/// ```
/// use pytree_std::KeyPath;
/// let t: (String, Vec<String>) =
///     pytree_core::ops::with_path::map_with_path::<pytree_std::Std, _, _, _>((1, vec![2]), |path: &KeyPath, x: i32| format!("{path}={x}"))?;
/// assert_eq!(t, ("[0]=1".to_string(), vec!["[1][0]=2".to_string()]));
/// # Ok::<(), pytree_std::Error>(())
/// ```
pub fn map_with_path<Ns, T, U, F>(tree: T, mut f: F) -> Result<U, Error>
where
    T: Flatten<Ns>,
    U: Unflatten<Ns>,
    F: FnMut(&KeyPath, T::Leaf) -> U::Leaf,
{
    let mut out = Vec::new();
    let def = flatten_walk::<Ns, T, _>(tree, |path, leaf| out.push(f(path, leaf)));
    unflatten::<Ns, U, _>(&def, out)
}

/// Calls `f` on each leaf with its key path, for any namespace `Ns`
/// ([`ops`](crate::ops) says how to name `Ns`; pytree-std's door is
/// `pytree_std::paths::for_each_with_path`).
///
/// ```
/// let mut paths = Vec::new();
/// pytree_core::ops::with_path::for_each_with_path::<pytree_std::Std, _, _>(&vec![(1, 2)], |path, _| paths.push(path.to_string()));
/// assert_eq!(paths, ["[0][0]", "[0][1]"]);
/// ```
pub fn for_each_with_path<'a, Ns, T, F>(tree: &'a T, f: F)
where
    T: Flatten<Ns>,
    F: FnMut(&KeyPath, LeafRef<'a, Ns, T::Leaf>),
{
    tree.visit(&mut PathVisitor::new(f));
}

/// The engine of `pytree_std::paths::zip_mut_with_path` (with no other trees),
/// for any namespace `Ns` (documented there; [`ops`](crate::ops) says how to
/// name `Ns`).
///
/// ```
/// let mut t = (1.0f32, vec![1.0f32, 1.0]);
/// pytree_core::ops::with_path::for_each_mut_with_path::<pytree_std::Std, _, _>(&mut t, |path, x| *x *= path.len() as f32);
/// assert_eq!(t, (1.0, vec![2.0, 2.0]));
/// ```
pub fn for_each_mut_with_path<'a, Ns, T, F>(tree: &'a mut T, f: F)
where
    T: Flatten<Ns>,
    F: FnMut(&KeyPath, LeafMut<'a, Ns, T::Leaf>),
{
    tree.visit_mut(&mut PathVisitor::new(f));
}
