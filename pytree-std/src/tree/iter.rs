//! Iterating over a [`Tree`]'s leaves with their key paths, by reference
//! ([`Iter`]) or by value ([`IntoIter`]), in pre-order. The paths are
//! [`KeyPath`]s (`["x"]["c"]`, `[0]`) that [`Tree::get`] and
//! [`Tree::try_from_paths`] accept, so `tree.into_iter().collect()` gives
//! the tree back (except `None` nodes and empty containers, which hold no
//! leaf).

use std::sync::Arc;

use pytree_core::{KeyEntry, KeyPath};

use super::{Node, Tree};

/// A container whose children are still to be iterated, by reference.
enum Frame<'a, L> {
    Seq(std::iter::Enumerate<std::slice::Iter<'a, Tree<L>>>),
    Map(indexmap::map::Iter<'a, String, Tree<L>>),
}

/// The leaves of a tree with their key paths, by reference; see
/// [`Tree::iter`].
///
/// ```
/// let t = pytree_std::tree! { "a" => 1, "x" => { "c" => 4 } };
/// let found: Vec<(String, i32)> = t.iter().map(|(p, x)| (p.to_string(), *x)).collect();
/// assert_eq!(found, [(r#"["a"]"#.to_string(), 1), (r#"["x"]["c"]"#.to_string(), 4)]);
/// ```
pub struct Iter<'a, L> {
    next: Option<&'a Tree<L>>,
    stack: Vec<Frame<'a, L>>,
    path: Vec<KeyEntry>,
}

impl<'a, L> Iter<'a, L> {
    pub(crate) fn new(root: &'a Tree<L>) -> Self {
        Iter {
            next: Some(root),
            stack: Vec::new(),
            path: Vec::new(),
        }
    }
}

impl<'a, L> Iterator for Iter<'a, L> {
    type Item = (KeyPath, &'a L);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(t) = self.next.take() {
                match t.node() {
                    Node::Leaf(x) => {
                        let path = KeyPath::from_entries(self.path.clone());
                        if !self.stack.is_empty() {
                            self.path.pop();
                        }
                        return Some((path, x));
                    }
                    Node::None => {
                        if !self.stack.is_empty() {
                            self.path.pop();
                        }
                    }
                    Node::Seq(items) => self.stack.push(Frame::Seq(items.iter().enumerate())),
                    Node::Map(map) => self.stack.push(Frame::Map(map.iter())),
                }
            }
            let child = match self.stack.last_mut()? {
                Frame::Seq(it) => it.next().map(|(i, c)| (KeyEntry::Index(i), c)),
                Frame::Map(it) => it.next().map(|(k, c)| (KeyEntry::key(k.clone()), c)),
            };
            match child {
                Some((entry, c)) => {
                    self.path.push(entry);
                    self.next = Some(c);
                }
                None => {
                    self.stack.pop();
                    if !self.stack.is_empty() {
                        self.path.pop();
                    }
                }
            }
        }
    }
}

/// A container whose children are still to be iterated, by value.
enum OwnedFrame<L> {
    Seq(std::iter::Enumerate<std::vec::IntoIter<Tree<L>>>),
    Map(indexmap::map::IntoIter<String, Tree<L>>),
}

/// The leaves of a tree with their key paths, by value; made by
/// `Tree::into_iter` (shared containers are copied shallowly first).
///
/// ```
/// let t = pytree_std::tree! { "a" => 1, "b" => [2] };
/// let leaves: Vec<i32> = t.into_iter().map(|(_, x)| x).collect();
/// assert_eq!(leaves, [1, 2]);
/// ```
pub struct IntoIter<L> {
    next: Option<Tree<L>>,
    stack: Vec<OwnedFrame<L>>,
    path: Vec<KeyEntry>,
}

impl<L: Clone> Iterator for IntoIter<L> {
    type Item = (KeyPath, L);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(t) = self.next.take() {
                match t.into_node() {
                    Node::Leaf(x) => {
                        let path = KeyPath::from_entries(self.path.clone());
                        if !self.stack.is_empty() {
                            self.path.pop();
                        }
                        return Some((path, x));
                    }
                    Node::None => {
                        if !self.stack.is_empty() {
                            self.path.pop();
                        }
                    }
                    Node::Seq(items) => {
                        let items = Arc::unwrap_or_clone(items);
                        self.stack
                            .push(OwnedFrame::Seq(items.into_iter().enumerate()));
                    }
                    Node::Map(map) => {
                        let map = Arc::unwrap_or_clone(map);
                        self.stack.push(OwnedFrame::Map(map.into_iter()));
                    }
                }
            }
            let child = match self.stack.last_mut()? {
                OwnedFrame::Seq(it) => it.next().map(|(i, c)| (KeyEntry::Index(i), c)),
                OwnedFrame::Map(it) => it.next().map(|(k, c)| (KeyEntry::key(k), c)),
            };
            match child {
                Some((entry, c)) => {
                    self.path.push(entry);
                    self.next = Some(c);
                }
                None => {
                    self.stack.pop();
                    if !self.stack.is_empty() {
                        self.path.pop();
                    }
                }
            }
        }
    }
}

impl<L: Clone> IntoIterator for Tree<L> {
    type Item = (KeyPath, L);
    type IntoIter = IntoIter<L>;

    /// The leaves with their key paths, by value, in pre-order.
    fn into_iter(self) -> IntoIter<L> {
        IntoIter {
            next: Some(self),
            stack: Vec::new(),
            path: Vec::new(),
        }
    }
}

impl<'a, L> IntoIterator for &'a Tree<L> {
    type Item = (KeyPath, &'a L);
    type IntoIter = Iter<'a, L>;

    /// The leaves with their key paths, by reference ([`Tree::iter`]).
    fn into_iter(self) -> Iter<'a, L> {
        Iter::new(self)
    }
}
