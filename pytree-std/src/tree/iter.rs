//! Iterating over a [`Tree`]'s leaves with their key paths, by reference
//! ([`Iter`]) or by value ([`IntoIter`]), in pre-order. The paths are
//! [`KeyPath`]s (`["x"]["c"]`, `[0]`) that [`Tree::subtree`] and
//! [`Tree::try_from_paths`] accept, so `tree.into_iter().collect()` gives
//! the tree back (except `None` nodes and empty containers, which hold no
//! leaf). Both are the tree's cursor with the path of the open containers.

use pytree_core::{KeyEntry, KeyPath};

use super::cursor::{Access, Cursor, Event, Open, Own, Ref};
use super::node::Tree;

/// A cursor's leaves with their paths: `path` holds the entries of the
/// open containers below the root.
struct Leaves<A: Access> {
    cursor: Cursor<A>,
    path: Vec<KeyEntry>,
}

impl<A: Access> Leaves<A> {
    fn new(root: A::Tree) -> Self {
        Leaves {
            cursor: Cursor::new(root),
            path: Vec::new(),
        }
    }
}

impl<A: Open> Iterator for Leaves<A> {
    type Item = (KeyPath, A::Leaf);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.cursor.next()? {
                Event::Leaf(place, x) => {
                    let mut path = Vec::with_capacity(self.path.len() + 1);
                    path.extend_from_slice(&self.path);
                    path.extend(place.map(|p| p.into_entry()));
                    return Some((KeyPath::from_entries(path), x));
                }
                Event::None(_) => {}
                Event::Enter(place, _) => self.path.extend(place.map(|p| p.into_entry())),
                Event::Exit(_) => {
                    if self.cursor.depth() > 0 {
                        self.path.pop();
                    }
                }
            }
        }
    }
}

/// The leaves of a tree with their key paths, by reference; see
/// [`Tree::iter`].
///
/// ```
/// let t = pytree_std::tree! { "a" => 1, "x" => { "c" => 4 } };
/// let found: Vec<(String, i32)> = t.iter().map(|(p, x)| (p.to_string(), *x)).collect();
/// assert_eq!(found, [(r#"["a"]"#.to_string(), 1), (r#"["x"]["c"]"#.to_string(), 4)]);
/// ```
pub struct Iter<'a, L>(Leaves<Ref<'a, L>>);

impl<'a, L> Iter<'a, L> {
    pub(crate) fn new(root: &'a Tree<L>) -> Self {
        Iter(Leaves::new(root))
    }
}

impl<'a, L> Iterator for Iter<'a, L> {
    type Item = (KeyPath, &'a L);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next()
    }
}

/// The leaves of a tree with their key paths, by value; made by
/// `Tree::into_iter` (shared containers are copied shallowly first).
///
/// ```
/// let t = pytree_std::tree! { "a" => 1, "b" => [2] };
/// let leaves: Vec<i32> = t.into_iter().map(|(_, x)| x).collect();
/// assert_eq!(leaves, [1, 2]);
/// ```
pub struct IntoIter<L>(Leaves<Own<L>>);

impl<L: Clone> Iterator for IntoIter<L> {
    type Item = (KeyPath, L);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next()
    }
}

impl<L: Clone> IntoIterator for Tree<L> {
    type Item = (KeyPath, L);
    type IntoIter = IntoIter<L>;

    /// The leaves with their key paths, by value, in pre-order.
    fn into_iter(self) -> IntoIter<L> {
        IntoIter(Leaves::new(self))
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
