//! The type [`Tree`] and what it is made of ([`View`] of its root,
//! [`MapRef`] of a map node), built and read without walking it: the
//! ground every other file of the module stands on. The walks add their
//! methods where they are written (`walk`: counting, mapping, equality,
//! drop; `display`: printing; `path`: access by path).

use std::sync::Arc;

use indexmap::IndexMap;
use pytree_core::{Error, KeyEntry};

/// The storage of one map node.
pub(crate) type Map<L> = IndexMap<String, Tree<L>>;

/// A runtime-shaped pytree: a leaf, a sequence, a map with string keys
/// (insertion-ordered), or `None`. See the [module docs](super) for the
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
    pub(super) node: Node<L>,
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
