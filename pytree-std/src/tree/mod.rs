//! [`Tree`]: a pytree whose shape is known only at run time (configs and
//! checkpoints loaded from JSON, batches of named tensors, metrics
//! dictionaries): treevalue's `TreeValue` for Rust.
//!
//! A node is a leaf, a sequence, a map with string keys, or `None`.
//!
//! Decisions, each with its reason:
//! - **Maps keep insertion order.** A tree read from a document keeps the
//!   document's order, and a typed model converted with
//!   [`Tree::from_pytree`] keeps its field order, so both flatten to the
//!   leaves in the order a reader expects (optree's choice for ordered
//!   dicts). JAX's sorted order is one call away: [`Tree::sort_keys`].
//!   Equality and the multi-tree maps (`zip_with`, arithmetic) match map
//!   entries *by key*, as Python dicts and treevalue do, so two maps with
//!   the same entries in another order are equal; only flattening order
//!   (and so the TreeDef) follows insertion order.
//! - **Subtrees are shared.** Sequences and maps sit behind an `Arc`, so
//!   `clone` is O(1) whatever the size, and a subtree taken out of a tree
//!   (`t["x"].clone()`) shares its storage, as treevalue's do. Values keep
//!   value semantics: writing through `subtree_mut`, `insert`, `remove` or
//!   `for_each_mut` copies the shared containers on the way down
//!   (`Arc::make_mut`), which is why consuming and mutating operations need
//!   `L: Clone`. Reading, printing and comparing do not.
//! - **`Send + Sync` when `L` is** (it holds `L`s and `Arc`s, nothing else).
//! - **No recursion.** Every walk (flatten, unflatten, display, compare,
//!   drop, conversion) uses an explicit stack, so a tree 100 000 levels
//!   deep works; `Display` stops printing below a depth (see
//!   [`Tree::display_depth`]).
//!
//! With the `serde` feature, a tree (de)serializes as the document it looks
//! like: object ↔ map (document order), array ↔ sequence, `null` ↔ `None`,
//! scalar ↔ leaf (`L` read from the scalar), so `Tree<serde_json::Value>`
//! reads any JSON document; errors name the path; trees deeper than
//! `MAX_SERDE_DEPTH` (127, what serde_json reads back) are refused.
//!
//! Contents: the type and its accessors (this file), `tree!` (`macros`),
//! paths and access by path (`path`), the one walk of a tree, by `&`, by
//! `&mut` or by value, as a stream of events (`cursor`), iteration with
//! paths (`iter`), the walks built on it and the few that are not
//! (`walk`), the pytree impls (`pytree`), conversion from
//! and to typed pytrees (`convert`), printing (`display`), arithmetic
//! (`arith`), and serde (`serde`, behind the `serde` feature).

mod arith;
mod convert;
mod cursor;
mod display;
mod iter;
mod macros;
mod path;
mod pytree;
#[cfg(feature = "serde")]
mod serde_impl;
mod walk;

use std::fmt;
use std::sync::Arc;

use indexmap::IndexMap;
use pytree_core::{Error, KeyEntry};

pub use convert::key_string;
pub use display::DisplayDepth;
pub use iter::{IntoIter, Iter};
pub use path::{Step, TreePath};
#[cfg(feature = "serde")]
pub use serde_impl::MAX_SERDE_DEPTH;

/// The storage of one map node.
type Map<L> = IndexMap<String, Tree<L>>;

/// A runtime-shaped pytree: a leaf, a sequence, a map with string keys
/// (insertion-ordered), or `None`. See the [module docs](self) for the
/// decisions (key order, sharing, threads, deep trees).
///
/// ```
/// use pytree_std::{tree, Tree};
/// let t: Tree<i32> = tree! { "a" => 2, "b" => 30, "x" => { "c" => 4, "d" => 9 } };
/// assert_eq!(t["x"]["c"], Tree::leaf(4));
/// assert_eq!(t.subtree("x/d").and_then(Tree::as_leaf), Some(&9));
/// let doubled = &t * 2;
/// assert_eq!(format!("{doubled:?}"), r#"{"a": 4, "b": 60, "x": {"c": 8, "d": 18}}"#);
/// assert_eq!(doubled.to_string(), "\
/// ├── a --> 4
/// ├── b --> 60
/// └── x
///     ├── c --> 8
///     └── d --> 18");
/// ```
pub struct Tree<L> {
    node: Node<L>,
}

/// The private representation; containers are shared (see the module docs).
pub(crate) enum Node<L> {
    Leaf(L),
    Seq(Arc<Vec<Tree<L>>>),
    Map(Arc<Map<L>>),
    None,
}

/// A borrowed view of a tree's root, for `match`.
///
/// ```
/// use pytree_std::{tree, tree::View, Tree};
/// let t: Tree<i32> = tree!([1, 2]);
/// match t.view() {
///     View::Seq(items) => assert_eq!(items.len(), 2),
///     _ => unreachable!(),
/// }
/// ```
pub enum View<'a, L> {
    /// A leaf.
    Leaf(&'a L),
    /// A sequence's elements.
    Seq(&'a [Tree<L>]),
    /// A map's entries, in insertion order.
    Map(MapRef<'a, L>),
    /// `None`.
    None,
}

/// A borrowed map node: its entries in insertion order.
///
/// ```
/// use pytree_std::{tree, Tree};
/// let t: Tree<i32> = tree! { "b" => 1, "a" => 2 };
/// let m = t.as_map().unwrap();
/// assert_eq!(m.keys().collect::<Vec<_>>(), ["b", "a"]);
/// assert_eq!(m.get("a"), Some(&Tree::leaf(2)));
/// assert_eq!(m.len(), 2);
/// ```
pub struct MapRef<'a, L>(&'a Map<L>);

impl<L> Clone for MapRef<'_, L> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<L> Copy for MapRef<'_, L> {}

impl<'a, L> MapRef<'a, L> {
    /// Number of entries.
    ///
    /// ```
    /// assert_eq!(pytree_std::tree!{ "a" => 1 }.as_map().unwrap().len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when the map has no entries.
    ///
    /// ```
    /// assert!(pytree_std::Tree::<i32>::default().as_map().unwrap().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The subtree under `key` (one key, as `BTreeMap::get`; a path
    /// from a tree is [`Tree::subtree`]).
    ///
    /// ```
    /// let t = pytree_std::tree!{ "a" => 1 };
    /// assert!(t.as_map().unwrap().get("b").is_none());
    /// ```
    pub fn get(&self, key: &str) -> Option<&'a Tree<L>> {
        self.0.get(key)
    }

    /// The keys, in insertion order.
    ///
    /// ```
    /// let t = pytree_std::tree!{ "a" => 1, "b" => 2 };
    /// assert_eq!(t.as_map().unwrap().keys().collect::<Vec<_>>(), ["a", "b"]);
    /// ```
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &'a str> + 'a {
        self.0.keys().map(String::as_str)
    }

    /// The entries, in insertion order.
    ///
    /// ```
    /// let t = pytree_std::tree!{ "a" => 1 };
    /// let (k, v) = t.as_map().unwrap().iter().next().unwrap();
    /// assert_eq!((k, v.as_leaf()), ("a", Some(&1)));
    /// ```
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&'a str, &'a Tree<L>)> + 'a {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }
}

impl<L> Tree<L> {
    /// A leaf.
    ///
    /// ```
    /// assert!(pytree_std::Tree::leaf(1.5).is_leaf());
    /// ```
    pub fn leaf(value: L) -> Self {
        Tree {
            node: Node::Leaf(value),
        }
    }

    /// The `None` node: structure without leaves (as JAX's `None`).
    ///
    /// ```
    /// assert!(pytree_std::Tree::<f32>::none().is_none());
    /// ```
    pub fn none() -> Self {
        Tree { node: Node::None }
    }

    /// A sequence of these subtrees.
    ///
    /// ```
    /// use pytree_std::Tree;
    /// let t = Tree::seq([Tree::leaf(1), Tree::none()]);
    /// assert_eq!(format!("{t:?}"), "[1, None]");
    /// ```
    pub fn seq(items: impl IntoIterator<Item = Tree<L>>) -> Self {
        Tree {
            node: Node::Seq(Arc::new(items.into_iter().collect())),
        }
    }

    /// A map of these entries, in the given order.
    ///
    /// # Panics
    /// On a repeated key, as a literal with a repeated key is a mistake in
    /// the program; use [`try_dict`](Tree::try_dict) for keys that come
    /// from data.
    ///
    /// ```
    /// use pytree_std::Tree;
    /// let t = Tree::dict([("w", Tree::leaf(1.0)), ("b", Tree::leaf(0.0))]);
    /// assert_eq!(format!("{t:?}"), r#"{"w": 1.0, "b": 0.0}"#);
    /// ```
    pub fn dict<K: Into<String>>(entries: impl IntoIterator<Item = (K, Tree<L>)>) -> Self {
        match Self::try_dict(entries) {
            Ok(t) => t,
            Err(e) => panic!("Tree::dict: {e}"),
        }
    }

    /// A map of these entries; a repeated key is an error naming it (no
    /// entry is dropped).
    ///
    /// ```
    /// use pytree_std::Tree;
    /// let err = Tree::try_dict([("a", Tree::leaf(1)), ("a", Tree::leaf(2))]).unwrap_err();
    /// assert_eq!(err.to_string(), r#"at ["a"]: the key "a" appears twice"#);
    /// ```
    pub fn try_dict<K: Into<String>>(
        entries: impl IntoIterator<Item = (K, Tree<L>)>,
    ) -> Result<Self, Error> {
        let entries = entries.into_iter();
        let mut map = Map::with_capacity(entries.size_hint().0);
        for (k, v) in entries {
            let k = k.into();
            if map.contains_key(&k) {
                return Err(
                    Error::custom(format!("the key {k:?} appears twice")).at(KeyEntry::key(k))
                );
            }
            map.insert(k, v);
        }
        Ok(Tree {
            node: Node::Map(Arc::new(map)),
        })
    }

    pub(crate) fn from_node(node: Node<L>) -> Self {
        Tree { node }
    }

    pub(crate) fn node(&self) -> &Node<L> {
        &self.node
    }

    /// Takes the node out. The shell left holds `None`, which owns
    /// nothing, so its `Drop` is skipped (walks by value take millions of
    /// nodes out).
    #[inline]
    pub(crate) fn into_node(self) -> Node<L> {
        let mut shell = std::mem::ManuallyDrop::new(self);
        std::mem::replace(&mut shell.node, Node::None)
    }

    /// True for a leaf.
    ///
    /// ```
    /// assert!(!pytree_std::Tree::<u8>::none().is_leaf());
    /// ```
    pub fn is_leaf(&self) -> bool {
        matches!(self.node, Node::Leaf(_))
    }

    /// True for a sequence.
    ///
    /// ```
    /// assert!(pytree_std::tree!([1, 2]).is_seq());
    /// ```
    pub fn is_seq(&self) -> bool {
        matches!(self.node, Node::Seq(_))
    }

    /// True for a map.
    ///
    /// ```
    /// assert!(pytree_std::tree!{ "a" => 1 }.is_map());
    /// ```
    pub fn is_map(&self) -> bool {
        matches!(self.node, Node::Map(_))
    }

    /// True for `None`.
    ///
    /// ```
    /// let t: pytree_std::Tree<i32> = pytree_std::tree!(None);
    /// assert!(t.is_none());
    /// ```
    pub fn is_none(&self) -> bool {
        matches!(self.node, Node::None)
    }

    /// The root as a [`View`], for `match`.
    ///
    /// ```
    /// use pytree_std::tree::View;
    /// assert!(matches!(pytree_std::Tree::leaf(3).view(), View::Leaf(&3)));
    /// ```
    pub fn view(&self) -> View<'_, L> {
        match &self.node {
            Node::Leaf(x) => View::Leaf(x),
            Node::Seq(items) => View::Seq(items),
            Node::Map(map) => View::Map(MapRef(map)),
            Node::None => View::None,
        }
    }

    /// The leaf, if the root is one.
    ///
    /// ```
    /// assert_eq!(pytree_std::Tree::leaf(3).as_leaf(), Some(&3));
    /// ```
    pub fn as_leaf(&self) -> Option<&L> {
        match &self.node {
            Node::Leaf(x) => Some(x),
            _ => None,
        }
    }

    /// The leaf, mutably, if the root is one.
    ///
    /// ```
    /// let mut t = pytree_std::Tree::leaf(3);
    /// *t.as_leaf_mut().unwrap() += 1;
    /// assert_eq!(t.as_leaf(), Some(&4));
    /// ```
    pub fn as_leaf_mut(&mut self) -> Option<&mut L> {
        match &mut self.node {
            Node::Leaf(x) => Some(x),
            _ => None,
        }
    }

    /// The leaf by value, or the tree back if the root is not a leaf.
    ///
    /// ```
    /// assert_eq!(pytree_std::Tree::leaf(3).into_leaf().ok(), Some(3));
    /// ```
    pub fn into_leaf(self) -> Result<L, Self> {
        match self.into_node() {
            Node::Leaf(x) => Ok(x),
            other => Err(Tree::from_node(other)),
        }
    }

    /// The elements, if the root is a sequence.
    ///
    /// ```
    /// let t = pytree_std::tree!([1, 2]);
    /// assert_eq!(t.as_seq().map(<[_]>::len), Some(2));
    /// ```
    pub fn as_seq(&self) -> Option<&[Tree<L>]> {
        match &self.node {
            Node::Seq(items) => Some(items),
            _ => None,
        }
    }

    /// The entries, if the root is a map.
    ///
    /// ```
    /// assert!(pytree_std::tree!([1]).as_map().is_none());
    /// ```
    pub fn as_map(&self) -> Option<MapRef<'_, L>> {
        match &self.node {
            Node::Map(map) => Some(MapRef(map)),
            _ => None,
        }
    }

    /// Number of children of the root (0 for a leaf or `None`).
    ///
    /// ```
    /// assert_eq!(pytree_std::tree!{ "a" => 1, "b" => [2, 3] }.len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        match &self.node {
            Node::Seq(items) => items.len(),
            Node::Map(map) => map.len(),
            Node::Leaf(_) | Node::None => 0,
        }
    }

    /// True when the root has no children.
    ///
    /// ```
    /// assert!(pytree_std::Tree::leaf(1).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of leaves (iterative).
    ///
    /// ```
    /// assert_eq!(pytree_std::tree!{ "a" => 1, "b" => [2, 3], "c" => None }.num_leaves(), 3);
    /// ```
    pub fn num_leaves(&self) -> usize {
        walk::num_leaves(self)
    }

    /// The number of levels: 0 for a leaf or `None`, 1 + the deepest child
    /// for a container (iterative).
    ///
    /// ```
    /// assert_eq!(pytree_std::tree!{ "x" => { "c" => 4 } }.depth(), 2);
    /// ```
    pub fn depth(&self) -> usize {
        walk::depth(self)
    }

    /// True when both trees hold the same containers (the same `Arc`s) or
    /// are both `None`: an O(1) check of sharing, not of equality.
    ///
    /// ```
    /// let t = pytree_std::tree!{ "a" => 1 };
    /// assert!(t.shares_storage_with(&t.clone()));
    /// assert!(!t.shares_storage_with(&pytree_std::tree!{ "a" => 1 }));
    /// ```
    pub fn shares_storage_with(&self, other: &Tree<L>) -> bool {
        match (&self.node, &other.node) {
            (Node::Seq(a), Node::Seq(b)) => Arc::ptr_eq(a, b),
            (Node::Map(a), Node::Map(b)) => Arc::ptr_eq(a, b),
            (Node::None, Node::None) => true,
            _ => false,
        }
    }
}

impl<L: Clone> Tree<L> {
    /// The elements, mutably, if the root is a sequence (copied first if
    /// shared).
    ///
    /// ```
    /// use pytree_std::{tree, Tree};
    /// let mut t: Tree<i32> = tree!([1]);
    /// t.as_seq_mut().unwrap().push(Tree::leaf(2));
    /// assert_eq!(t, tree!([1, 2]));
    /// ```
    pub fn as_seq_mut(&mut self) -> Option<&mut Vec<Tree<L>>> {
        match &mut self.node {
            Node::Seq(items) => Some(Arc::make_mut(items)),
            _ => None,
        }
    }

    /// Sorts every map's keys (JAX's order for dicts), at every level.
    ///
    /// ```
    /// use pytree_std::tree;
    /// let mut t = tree! { "b" => 1, "a" => { "d" => 2, "c" => 3 } };
    /// t.sort_keys();
    /// assert_eq!(format!("{t:?}"), r#"{"a": {"c": 3, "d": 2}, "b": 1}"#);
    /// ```
    pub fn sort_keys(&mut self) {
        // Not a cursor walk: a map is sorted before its children are
        // walked, while a cursor holds it borrowed from its `Enter` on.
        let mut stack: Vec<&mut Tree<L>> = vec![self];
        while let Some(t) = stack.pop() {
            match &mut t.node {
                Node::Seq(items) => stack.extend(Arc::make_mut(items).iter_mut()),
                Node::Map(map) => {
                    let map = Arc::make_mut(map);
                    map.sort_unstable_keys();
                    stack.extend(map.values_mut());
                }
                Node::Leaf(_) | Node::None => {}
            }
        }
    }

    /// Applies `f` to every leaf, keeping the structure; the leaf type may
    /// change (iterative).
    ///
    /// ```
    /// let t = pytree_std::tree!{ "a" => 1, "b" => [2, 3] };
    /// let s = t.map(|x| x.to_string() + "!");
    /// assert_eq!(format!("{s:?}"), r#"{"a": "1!", "b": ["2!", "3!"]}"#);
    /// ```
    pub fn map<M>(self, mut f: impl FnMut(L) -> M) -> Tree<M> {
        match walk::rebuild(self, |x| Ok::<M, std::convert::Infallible>(f(x))) {
            Ok(t) => t,
            Err(never) => match never {},
        }
    }
}

impl<L> Tree<L> {
    /// Applies `f` to every leaf by reference, keeping the structure.
    ///
    /// ```
    /// let t = pytree_std::tree!{ "a" => 1.5f32 };
    /// assert_eq!(t.map_ref(|x| f64::from(*x)), pytree_std::tree!{ "a" => 1.5f64 });
    /// ```
    pub fn map_ref<M>(&self, mut f: impl FnMut(&L) -> M) -> Tree<M> {
        match walk::rebuild_ref(self, |x| Ok::<M, std::convert::Infallible>(f(x))) {
            Ok(t) => t,
            Err(never) => match never {},
        }
    }

    /// Applies a fallible `f` to every leaf by reference; the first error
    /// is returned with the path of its leaf.
    ///
    /// ```
    /// use pytree_std::{tree, Error};
    /// let t = tree!{ "a" => 1, "b" => -1 };
    /// let err = t.try_map_ref(|x| if *x < 0 { Err(Error::custom("negative")) } else { Ok(*x as u32) });
    /// assert_eq!(err.unwrap_err().to_string(), r#"at ["b"]: negative"#);
    /// ```
    pub fn try_map_ref<M>(&self, f: impl FnMut(&L) -> Result<M, Error>) -> Result<Tree<M>, Error> {
        walk::try_rebuild_ref_with_path(self, f)
    }
}

impl<L> Default for Tree<L> {
    /// An empty map (treevalue's empty `TreeValue`).
    fn default() -> Self {
        Tree {
            node: Node::Map(Arc::new(Map::new())),
        }
    }
}

impl<L: Clone> Clone for Tree<L> {
    /// O(1) for a container (the storage is shared, see the module docs);
    /// a leaf is cloned.
    fn clone(&self) -> Self {
        Tree {
            node: match &self.node {
                Node::Leaf(x) => Node::Leaf(x.clone()),
                Node::Seq(items) => Node::Seq(Arc::clone(items)),
                Node::Map(map) => Node::Map(Arc::clone(map)),
                Node::None => Node::None,
            },
        }
    }
}

impl<L> Drop for Tree<L> {
    /// Iterative: dropping a tree 100 000 levels deep does not recurse.
    #[inline]
    fn drop(&mut self) {
        walk::drop_iteratively(std::mem::replace(&mut self.node, Node::None));
    }
}

impl<L: PartialEq> PartialEq for Tree<L> {
    /// Structural equality; map entries are matched by key, so insertion
    /// order does not matter (as for Python dicts). Iterative.
    fn eq(&self, other: &Self) -> bool {
        walk::equal(self, other)
    }
}

impl<L: Eq> Eq for Tree<L> {}

impl<L> From<L> for Tree<L> {
    /// A leaf (what `tree!` calls for a value that is not a literal
    /// container, and what `insert` calls on its value). There is no
    /// `From<Vec<Tree<L>>>`: it would make `Tree::from(vec![..])` ambiguous
    /// (a leaf that is a `Vec`, or a sequence?); use [`Tree::seq`] or
    /// `collect`.
    ///
    /// ```
    /// assert_eq!(pytree_std::Tree::from(2), pytree_std::Tree::leaf(2));
    /// ```
    fn from(value: L) -> Self {
        Tree::leaf(value)
    }
}

impl<L> FromIterator<Tree<L>> for Tree<L> {
    /// A sequence of the items.
    ///
    /// ```
    /// use pytree_std::Tree;
    /// let t: Tree<i32> = (1..=3).map(Tree::leaf).collect();
    /// assert_eq!(t, pytree_std::tree!([1, 2, 3]));
    /// ```
    fn from_iter<I: IntoIterator<Item = Tree<L>>>(items: I) -> Self {
        Tree::seq(items)
    }
}

impl<L: fmt::Debug> fmt::Debug for Tree<L> {
    /// A compact literal: `{"a": 1, "b": [2, None]}` (Python's, with the
    /// leaves' `Debug`). Iterative.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        display::debug(self, f)
    }
}

impl<L: fmt::Display> fmt::Display for Tree<L> {
    /// An ascii tree in treevalue's style, children indented under their
    /// key; leaves print with their `Display` (a precision such as `{:.2}`
    /// is passed on to them). Stops below 64 levels (see
    /// [`Tree::display_depth`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        display::ascii(self, display::DEFAULT_DEPTH, f)
    }
}
