//! Places in a [`Tree`]: the [`TreePath`] trait (a `"x/c"` string, a
//! [`KeyPath`], a slice of segments), access by path (`subtree`,
//! `subtree_mut`, `insert`, `remove`, `t["x"]`), and building a tree from
//! `(path, leaf)` pairs.

use std::borrow::Cow;
use std::ops::{Index, IndexMut};
use std::sync::Arc;

use pytree_core::{Error, ErrorKind, KeyEntry, KeyPath};

use super::convert::key_string;
use super::iter::Iter;
use super::node::{Map, Node, Tree};
use super::walk;

/// One step of a path into a [`Tree`].
///
/// ```
/// use pytree_std::tree::{Step, TreePath};
/// assert_eq!("x/0".steps(), [Step::Segment("x"), Step::Segment("0")]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step<'a> {
    /// A map key.
    Key(Cow<'a, str>),
    /// A sequence index.
    Index(usize),
    /// A segment of a `"a/b"` string: a key in a map, an index (parsed) in
    /// a sequence.
    Segment(&'a str),
}

/// A path into a [`Tree`]. Implemented for:
/// - `str` and `String`: segments separated by `/` (`"layers/0/w"`); a
///   segment is a key in a map and an index in a sequence; empty segments
///   are skipped, so `""` is the root. Keys that contain `/` need a
///   [`KeyPath`].
/// - [`KeyPath`] and `[KeyEntry]`: fields and variants are map keys (so the
///   key paths of a typed pytree address its [`Tree::from_pytree`] tree),
///   map keys are keys (as [`key_string`] writes them),
///   indices are sequence indices.
/// - `[&str]` and `[&str; N]`: one segment per element.
///
/// ```
/// use pytree_std::{tree, paths::KeyEntry, KeyPath};
/// let t = tree! { "x" => { "c" => 4 } };
/// let p = KeyPath::from_entries(vec![KeyEntry::Field("x"), KeyEntry::key(String::from("c"))]);
/// assert_eq!(t.subtree(&p), t.subtree("x/c"));
/// assert_eq!(t.subtree(&["x", "c"]), t.subtree("x/c"));
/// ```
pub trait TreePath {
    /// The steps from the root.
    ///
    /// ```
    /// use pytree_std::{tree::{Step, TreePath}, paths::KeyEntry, KeyPath};
    /// let p = KeyPath::from_entries(vec![KeyEntry::Field("w"), KeyEntry::Index(2)]);
    /// assert_eq!(p.steps(), [Step::Key("w".into()), Step::Index(2)]);
    /// assert!("".steps().is_empty());
    /// ```
    fn steps(&self) -> Vec<Step<'_>>;
}

impl TreePath for str {
    fn steps(&self) -> Vec<Step<'_>> {
        self.split('/')
            .filter(|s| !s.is_empty())
            .map(Step::Segment)
            .collect()
    }
}

impl TreePath for String {
    fn steps(&self) -> Vec<Step<'_>> {
        self.as_str().steps()
    }
}

impl TreePath for [&str] {
    fn steps(&self) -> Vec<Step<'_>> {
        self.iter().map(|s| Step::Segment(s)).collect()
    }
}

impl<const N: usize> TreePath for [&str; N] {
    fn steps(&self) -> Vec<Step<'_>> {
        self.as_slice().steps()
    }
}

impl TreePath for [KeyEntry] {
    fn steps(&self) -> Vec<Step<'_>> {
        self.iter()
            .map(|e| match e {
                KeyEntry::Field(name) | KeyEntry::Variant(name) => Step::Key(Cow::Borrowed(name)),
                KeyEntry::Index(i) => Step::Index(*i),
                KeyEntry::Key(k) => match k.downcast_ref::<String>() {
                    Some(s) => Step::Key(Cow::Borrowed(s)),
                    None => Step::Key(Cow::Owned(key_string(k))),
                },
            })
            .collect()
    }
}

impl TreePath for KeyPath {
    fn steps(&self) -> Vec<Step<'_>> {
        self.entries().steps()
    }
}

impl<P: TreePath + ?Sized> TreePath for &P {
    fn steps(&self) -> Vec<Step<'_>> {
        (**self).steps()
    }
}

/// The key-path entry a step stands for, for messages.
fn entry(step: &Step<'_>) -> KeyEntry {
    match step {
        Step::Key(k) => KeyEntry::key(k.to_string()),
        Step::Segment(s) => KeyEntry::key(s.to_string()),
        Step::Index(i) => KeyEntry::Index(*i),
    }
}

/// An error at the path made of `steps`.
fn error_at(e: Error, steps: &[Step<'_>]) -> Error {
    steps.iter().rev().fold(e, |e, s| e.at(entry(s)))
}

/// The index a step stands for in a sequence.
fn as_index(step: &Step<'_>) -> Option<usize> {
    match step {
        Step::Index(i) => Some(*i),
        Step::Segment(s) => s.parse().ok(),
        Step::Key(_) => None,
    }
}

/// The key a step stands for in a map.
fn as_key<'s>(step: &'s Step<'_>) -> Option<&'s str> {
    match step {
        Step::Key(k) => Some(k),
        Step::Segment(s) => Some(s),
        Step::Index(_) => None,
    }
}

impl<L> Tree<L> {
    /// The child of the root at one step.
    fn child(&self, step: &Step<'_>) -> Option<&Tree<L>> {
        match self.node() {
            Node::Map(map) => map.get(as_key(step)?),
            Node::Seq(items) => items.get(as_index(step)?),
            Node::Leaf(_) | Node::None => None,
        }
    }

    /// The subtree at `path` (`None` if there is none): a leaf, `None` or
    /// a container, as a `&Tree`. (`pytree_std::paths::get(&tree, &key_path)`,
    /// the library's lookup for any pytree, returns the leaf there.)
    ///
    /// ```
    /// let t = pytree_std::tree! { "a" => [10, 20], "x" => { "c" => 4 } };
    /// assert_eq!(t.subtree("a/1").and_then(|t| t.as_leaf()), Some(&20));
    /// assert_eq!(t.subtree("x").map(|x| x.len()), Some(1));
    /// assert!(t.subtree("x/zzz").is_none());
    /// assert_eq!(t.subtree(""), Some(&t));
    /// ```
    pub fn subtree<P: TreePath + ?Sized>(&self, path: &P) -> Option<&Tree<L>> {
        path.steps()
            .iter()
            .try_fold(self, |node, step| node.child(step))
    }

    /// The leaves with their key paths, in pre-order (map keys as
    /// `["key"]`, indices as `[i]`).
    ///
    /// ```
    /// let t = pytree_std::tree! { "a" => 1, "x" => [2] };
    /// let paths: Vec<String> = t.iter().map(|(p, _)| p.to_string()).collect();
    /// assert_eq!(paths, [r#"["a"]"#, r#"["x"][0]"#]);
    /// ```
    pub fn iter(&self) -> Iter<'_, L> {
        Iter::new(self)
    }
}

impl<L: Clone> Tree<L> {
    /// The child of the root at one step, mutably.
    fn child_mut(&mut self, step: &Step<'_>) -> Option<&mut Tree<L>> {
        match &mut self.node {
            Node::Map(map) => Arc::make_mut(map).get_mut(as_key(step)?),
            Node::Seq(items) => Arc::make_mut(items).get_mut(as_index(step)?),
            Node::Leaf(_) | Node::None => None,
        }
    }

    /// The subtree at `path`, mutably (shared containers on the way are
    /// copied first).
    ///
    /// ```
    /// use pytree_std::{tree, Tree};
    /// let mut t = tree! { "x" => { "c" => 4 } };
    /// *t.subtree_mut("x/c").unwrap() = Tree::leaf(5);
    /// assert_eq!(t, tree! { "x" => { "c" => 5 } });
    /// ```
    pub fn subtree_mut<P: TreePath + ?Sized>(&mut self, path: &P) -> Option<&mut Tree<L>> {
        path.steps()
            .iter()
            .try_fold(self, |node, step| node.child_mut(step))
    }

    /// Puts `value` at `path` and returns what was there. Missing map
    /// entries on the way are created (as a sequence when the next step is
    /// an index or a segment of digits, else as a map); in a sequence, an index equal to
    /// the length appends. Going through a leaf or `None`, or an index past
    /// the end, is an error naming the place. The empty path replaces the
    /// whole tree.
    ///
    /// ```
    /// use pytree_std::{tree, Tree};
    /// let mut t = tree! { "a" => 1 };
    /// assert_eq!(t.insert("x/c", Tree::leaf(4))?, None);
    /// assert_eq!(t.insert("a", Tree::leaf(2))?, Some(Tree::leaf(1)));
    /// assert_eq!(t, tree! { "a" => 2, "x" => { "c" => 4 } });
    /// let err = t.insert("a/b", Tree::leaf(0)).unwrap_err();
    /// assert_eq!(err.to_string(), r#"at ["a"]: node mismatch: expected a map or a sequence, found a leaf"#);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn insert<P: TreePath + ?Sized>(
        &mut self,
        path: &P,
        value: impl Into<Tree<L>>,
    ) -> Result<Option<Tree<L>>, Error> {
        let steps = path.steps();
        let value = value.into();
        let Some((last, init)) = steps.split_last() else {
            return Ok(Some(std::mem::replace(self, value)));
        };
        let mut node = self;
        for (i, step) in init.iter().enumerate() {
            node = slot(node, step, || fresh_for(&steps[i + 1]))
                .map_err(|e| error_at(e, &steps[..i]))?;
        }
        let here = &steps[..steps.len() - 1];
        match &mut node.node {
            Node::Map(map) => {
                let key = as_key(last).ok_or_else(|| error_at(not_an_index(last), here))?;
                Ok(Arc::make_mut(map).insert(key.to_string(), value))
            }
            Node::Seq(items) => {
                let items = Arc::make_mut(items);
                let i = as_index(last).ok_or_else(|| error_at(not_a_key(last), here))?;
                match i.cmp(&items.len()) {
                    std::cmp::Ordering::Less => Ok(Some(std::mem::replace(&mut items[i], value))),
                    std::cmp::Ordering::Equal => {
                        items.push(value);
                        Ok(None)
                    }
                    std::cmp::Ordering::Greater => {
                        Err(error_at(past_the_end(i, items.len()), here))
                    }
                }
            }
            Node::Leaf(_) | Node::None => Err(error_at(no_children(node), here)),
        }
    }

    /// Removes the subtree at `path` and returns it (`None` if there is
    /// none). In a sequence the following elements move down by one. The
    /// empty path removes nothing.
    ///
    /// ```
    /// use pytree_std::{tree, Tree};
    /// let mut t = tree! { "a" => 1, "x" => { "c" => 4, "d" => 9 } };
    /// assert_eq!(t.remove("x/c"), Some(Tree::leaf(4)));
    /// assert_eq!(t.remove("nope"), None);
    /// assert_eq!(t, tree! { "a" => 1, "x" => { "d" => 9 } });
    /// ```
    pub fn remove<P: TreePath + ?Sized>(&mut self, path: &P) -> Option<Tree<L>> {
        let steps = path.steps();
        let (last, init) = steps.split_last()?;
        let parent = init
            .iter()
            .try_fold(self, |node, step| node.child_mut(step))?;
        match &mut parent.node {
            Node::Map(map) => {
                let key = as_key(last)?;
                if !map.contains_key(key) {
                    return None;
                }
                Arc::make_mut(map).shift_remove(key)
            }
            Node::Seq(items) => {
                let i = as_index(last)?;
                (i < items.len()).then(|| Arc::make_mut(items).remove(i))
            }
            Node::Leaf(_) | Node::None => None,
        }
    }

    /// Builds a tree from `(path, leaf)` pairs, as [`insert`](Tree::insert)
    /// would, but refusing to overwrite: two leaves at one path, or a path
    /// that goes through (or over) another leaf, is an error naming the
    /// path, so no leaf is dropped. Map keys keep the order of their first
    /// appearance; sequence indices must come in order (`0`, `1`, ...).
    /// An empty input gives an empty map.
    ///
    /// ```
    /// use pytree_std::{tree, Tree};
    /// let t = Tree::try_from_paths([("a", 2), ("x/c", 4), ("x/d", 9)])?;
    /// assert_eq!(t, tree! { "a" => 2, "x" => { "c" => 4, "d" => 9 } });
    /// let err = Tree::try_from_paths([("a", 1), ("a", 2)]).unwrap_err();
    /// assert_eq!(err.to_string(), r#"at ["a"]: two leaves for one path"#);
    /// # Ok::<(), pytree_std::Error>(())
    /// ```
    pub fn try_from_paths<P: TreePath>(
        pairs: impl IntoIterator<Item = (P, L)>,
    ) -> Result<Tree<L>, Error> {
        let mut root: Option<Tree<L>> = None;
        for (path, leaf) in pairs {
            let steps = path.steps();
            let Some(first) = steps.first() else {
                if root.is_some() {
                    return Err(Error::custom("two leaves for one path"));
                }
                root = Some(Tree::leaf(leaf));
                continue;
            };
            let tree = root.get_or_insert_with(|| fresh_for(first));
            insert_new(tree, &steps, Tree::leaf(leaf))?;
        }
        Ok(root.unwrap_or_default())
    }
}

/// Inserts at a path that must be vacant (no leaf or subtree there).
fn insert_new<L: Clone>(
    root: &mut Tree<L>,
    steps: &[Step<'_>],
    value: Tree<L>,
) -> Result<(), Error> {
    let Some((last, init)) = steps.split_last() else {
        return Err(Error::custom("two leaves for one path"));
    };
    let mut node = root;
    for (i, step) in init.iter().enumerate() {
        node =
            slot(node, step, || fresh_for(&steps[i + 1])).map_err(|e| error_at(e, &steps[..i]))?;
    }
    let here = &steps[..steps.len() - 1];
    let occupied = |existing: &Tree<L>| {
        let msg = if existing.is_leaf() {
            "two leaves for one path".to_string()
        } else {
            format!(
                "a leaf where the paths so far put {}",
                walk::describe(existing)
            )
        };
        error_at(Error::custom(msg), steps)
    };
    match &mut node.node {
        Node::Map(map) => {
            let key = as_key(last).ok_or_else(|| error_at(not_an_index(last), here))?;
            if let Some(existing) = map.get(key) {
                return Err(occupied(existing));
            }
            Arc::make_mut(map).insert(key.to_string(), value);
            Ok(())
        }
        Node::Seq(items) => {
            let i = as_index(last).ok_or_else(|| error_at(not_a_key(last), here))?;
            if let Some(existing) = items.get(i) {
                return Err(occupied(existing));
            }
            if i > items.len() {
                return Err(error_at(past_the_end(i, items.len()), here));
            }
            Arc::make_mut(items).push(value);
            Ok(())
        }
        Node::Leaf(_) | Node::None => Err(error_at(no_children(node), here)),
    }
}

/// The container created for a missing step before `next`: a sequence if
/// `next` is an index (or a segment of digits), else a map.
fn fresh_for<L>(next: &Step<'_>) -> Tree<L> {
    let is_index = match next {
        Step::Index(_) => true,
        Step::Segment(s) => !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()),
        Step::Key(_) => false,
    };
    if is_index {
        Tree::seq([])
    } else {
        Tree::default()
    }
}

/// The child at `step`, created with `fresh` if it is missing (a map entry,
/// or the element just past the end of a sequence).
fn slot<'t, L: Clone>(
    node: &'t mut Tree<L>,
    step: &Step<'_>,
    fresh: impl FnOnce() -> Tree<L>,
) -> Result<&'t mut Tree<L>, Error> {
    if !matches!(node.node, Node::Map(_) | Node::Seq(_)) {
        return Err(no_children(node));
    }
    match &mut node.node {
        Node::Map(map) => {
            let key = as_key(step).ok_or_else(|| not_an_index(step))?;
            Ok(Arc::make_mut(map)
                .entry(key.to_string())
                .or_insert_with(fresh))
        }
        Node::Seq(items) => {
            let items = Arc::make_mut(items);
            let i = as_index(step).ok_or_else(|| not_a_key(step))?;
            if i == items.len() {
                items.push(fresh());
            }
            let len = items.len();
            items.get_mut(i).ok_or_else(|| past_the_end(i, len))
        }
        Node::Leaf(_) | Node::None => Err(Error::custom("a leaf has no children")),
    }
}

fn no_children<L>(node: &Tree<L>) -> Error {
    Error::new(ErrorKind::NodeMismatch {
        expected: "a map or a sequence".to_string(),
        found: walk::describe(node),
    })
}

fn not_an_index(step: &Step<'_>) -> Error {
    Error::custom(format!("{} is an index, but this is a map", entry(step)))
}

fn not_a_key(step: &Step<'_>) -> Error {
    Error::custom(format!(
        "{} is not an index, but this is a sequence",
        entry(step)
    ))
}

fn past_the_end(i: usize, len: usize) -> Error {
    Error::custom(format!(
        "index {i} is past the end of a sequence of length {len}"
    ))
}

impl<L: Clone> FromIterator<(KeyPath, L)> for Tree<L> {
    /// Builds a tree from `(path, leaf)` pairs, as
    /// [`try_from_paths`](Tree::try_from_paths) does.
    ///
    /// # Panics
    /// If two pairs conflict (two leaves for one path, or a path through
    /// another leaf): a leaf is never dropped silently. Use
    /// `try_from_paths` to get the error instead.
    ///
    /// ```
    /// use pytree_std::{tree, Tree};
    /// let t = tree! { "a" => 1, "x" => [2, 3] };
    /// let back: Tree<i32> = t.clone().into_iter().collect();
    /// assert_eq!(back, t);
    /// ```
    fn from_iter<I: IntoIterator<Item = (KeyPath, L)>>(pairs: I) -> Self {
        match Tree::try_from_paths(pairs) {
            Ok(t) => t,
            Err(e) => panic!("conflicting paths: {e}"),
        }
    }
}

impl<L> Index<&str> for Tree<L> {
    type Output = Tree<L>;

    /// The child under `key` of a map.
    ///
    /// # Panics
    /// If the root is not a map or has no such key, as `HashMap`'s `Index`
    /// does; use [`subtree`](Tree::subtree) for an `Option`.
    ///
    /// ```
    /// let t = pytree_std::tree! { "x" => { "c" => 4 } };
    /// assert_eq!(t["x"]["c"].as_leaf(), Some(&4));
    /// ```
    fn index(&self, key: &str) -> &Tree<L> {
        match self.node() {
            Node::Map(map) => match map.get(key) {
                Some(child) => child,
                None => panic!("no key {key:?} in this map (keys: {:?})", keys(map)),
            },
            _ => panic!("cannot index {} by the key {key:?}", walk::describe(self)),
        }
    }
}

impl<L> Index<usize> for Tree<L> {
    type Output = Tree<L>;

    /// Element `i` of a sequence.
    ///
    /// # Panics
    /// If the root is not a sequence or `i` is out of bounds, as `Vec`'s
    /// `Index` does.
    ///
    /// ```
    /// let t = pytree_std::tree!([1, [2, 3]]);
    /// assert_eq!(t[1][0].as_leaf(), Some(&2));
    /// ```
    fn index(&self, i: usize) -> &Tree<L> {
        match self.node() {
            Node::Seq(items) => match items.get(i) {
                Some(child) => child,
                None => panic!(
                    "index {i} out of bounds for a sequence of length {}",
                    items.len()
                ),
            },
            _ => panic!("cannot index {} by the index {i}", walk::describe(self)),
        }
    }
}

impl<L: Clone> IndexMut<&str> for Tree<L> {
    /// The child under `key` of a map, mutably.
    ///
    /// # Panics
    /// As [`Index`]; use [`insert`](Tree::insert) to add a key.
    ///
    /// ```
    /// let mut t = pytree_std::tree! { "x" => { "c" => 4 } };
    /// t["x"]["c"] = pytree_std::Tree::leaf(5);
    /// assert_eq!(t["x"]["c"].as_leaf(), Some(&5));
    /// ```
    fn index_mut(&mut self, key: &str) -> &mut Tree<L> {
        let what = walk::describe(self);
        match &mut self.node {
            Node::Map(map) => {
                let map = Arc::make_mut(map);
                let Some(i) = map.get_index_of(key) else {
                    panic!("no key {key:?} in this map (keys: {:?})", keys(map));
                };
                &mut map[i]
            }
            _ => panic!("cannot index {what} by the key {key:?}"),
        }
    }
}

impl<L: Clone> IndexMut<usize> for Tree<L> {
    /// Element `i` of a sequence, mutably.
    ///
    /// # Panics
    /// As [`Index`].
    ///
    /// ```
    /// let mut t = pytree_std::tree!([1]);
    /// t[0] = pytree_std::Tree::leaf(2);
    /// assert_eq!(t, pytree_std::tree!([2]));
    /// ```
    fn index_mut(&mut self, i: usize) -> &mut Tree<L> {
        let what = walk::describe(self);
        match &mut self.node {
            Node::Seq(items) => {
                let len = items.len();
                match Arc::make_mut(items).get_mut(i) {
                    Some(child) => child,
                    None => panic!("index {i} out of bounds for a sequence of length {len}"),
                }
            }
            _ => panic!("cannot index {what} by the index {i}"),
        }
    }
}

fn keys<L>(map: &Map<L>) -> Vec<&str> {
    map.keys().map(String::as_str).collect()
}
