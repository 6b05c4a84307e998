//! The one walk of a [`Tree`]: a [`Cursor`] goes through the tree depth
//! first, in pre-order, with an explicit stack (so depth costs heap, never
//! call stack), and reports each step as an [`Event`]: a container is
//! entered, a leaf or `None` is met, the innermost container is left.
//!
//! It comes in the flavours of [`Access`]: by shared reference ([`Ref`]),
//! by mutable reference ([`Mut`], copying shared containers on the way down
//! with `Arc::make_mut`) and by value ([`Own`], copying shared containers
//! shallowly before taking them apart). One generic implementation serves
//! all three, with one frame type: the `&mut` flavour needs no code of its
//! own, because `slice::IterMut` and `indexmap`'s `IterMut` hand out
//! children that borrow for the whole walk, not for one step.
//!
//! The walks of one tree are built on it: flattening and visiting
//! (`pytree`), the iterators (`iter`), rebuilding, counting and in-place
//! updates (`walk`), and printing (`display`). Four walks keep explicit
//! stacks of their own, each saying why: the lockstep walk of several
//! trees and equality (their frames hold a container of every tree),
//! `Drop` (which must not copy shared containers) and `sort_keys` (which
//! sorts a map before walking into it).
//!
//! By value, every leaf is handed out exactly once: a leaf moves from its
//! container's `IntoIter` into the event, and what a cursor has not handed
//! out when it is dropped (an abandoned `IntoIter`) is dropped with the
//! frames, each subtree by `Tree`'s own iterative `Drop`.

use std::marker::PhantomData;
use std::sync::Arc;

use pytree_core::{Error, KeyEntry};

use super::node::{Map, Node, Tree};

/// Errors that can be placed at a path as they bubble out of a walk.
pub(crate) trait AtPath {
    fn at_entry(self, entry: KeyEntry) -> Self;
}

impl AtPath for Error {
    fn at_entry(self, entry: KeyEntry) -> Self {
        self.at(entry)
    }
}

impl AtPath for std::convert::Infallible {
    fn at_entry(self, _entry: KeyEntry) -> Self {
        self
    }
}

/// How a walk holds the tree. The associated types are what it hands out;
/// the step that opens a node is [`Open`] (apart because it needs
/// `L: Clone` by mutable reference and by value, and the public iterator
/// types must not).
pub(crate) trait Access {
    /// A subtree as the walk holds it: `&Tree<L>`, `&mut Tree<L>`, `Tree<L>`.
    type Tree;
    /// A leaf as the walk hands it out: `&L`, `&mut L`, `L`.
    type Leaf;
    /// A map key as the walk hands it out: `&String` or `String`.
    type Key: MapKey;
    /// What an `Enter` or `Exit` of a map tells besides its length: the
    /// map itself by shared reference, nothing otherwise.
    type MapInfo: Copy;
    /// The children of a sequence still to visit.
    type Seq: ExactSizeIterator<Item = Self::Tree>;
    /// The entries of a map still to visit.
    type Map: ExactSizeIterator<Item = (Self::Key, Self::Tree)>;

    /// The [`MapInfo`](Access::MapInfo) of a map being walked.
    fn map_info(map: &Self::Map) -> Self::MapInfo;
}

/// The step that looks into a node.
pub(crate) trait Open: Access + Sized {
    /// The node as a leaf, `None`, or the children to walk.
    fn open(tree: Self::Tree) -> Opened<Self>;
}

/// A node looked into.
pub(crate) enum Opened<A: Access> {
    Leaf(A::Leaf),
    None,
    Seq(A::Seq),
    Map(A::Map),
}

/// A container as events describe it: its kind and length (and, by shared
/// reference, the map).
#[derive(Clone, Copy)]
pub(crate) enum Shape<M> {
    Seq(usize),
    Map(usize, M),
}

impl<M> Shape<M> {
    /// Number of children.
    pub(crate) fn len(&self) -> usize {
        match *self {
            Shape::Seq(n) | Shape::Map(n, _) => n,
        }
    }
}

/// Where a node sits in its parent.
pub(crate) struct Place<K> {
    /// Its position among its siblings: the index in a sequence, the
    /// entry's position in a map.
    pub(crate) index: usize,
    /// Its key in a map; `None` in a sequence.
    pub(crate) key: Option<K>,
    /// True for the parent's last child.
    pub(crate) last: bool,
}

/// A map key as a walk hands it out, borrowed or owned.
pub(crate) trait MapKey {
    /// The key as a `String` (copied if borrowed).
    fn into_string(self) -> String;
}

impl MapKey for &String {
    #[inline]
    fn into_string(self) -> String {
        // `str::to_owned` is inlined where `String::clone` is a call.
        self.as_str().to_owned()
    }
}

impl MapKey for String {
    #[inline]
    fn into_string(self) -> String {
        self
    }
}

impl<K: MapKey> Place<K> {
    /// The key-path entry of this place.
    pub(crate) fn into_entry(self) -> KeyEntry {
        match self.key {
            Some(k) => KeyEntry::key(k.into_string()),
            None => KeyEntry::Index(self.index),
        }
    }
}

/// One step of a walk. `Enter`, `Leaf` and `None` are nodes, with their
/// place in their parent (`None` for the root); the children of an
/// entered container follow it, then its `Exit`.
pub(crate) enum Event<A: Access> {
    /// A container begins.
    Enter(Option<Place<A::Key>>, Shape<A::MapInfo>),
    /// A leaf.
    Leaf(Option<Place<A::Key>>, A::Leaf),
    /// A `None` node.
    None(Option<Place<A::Key>>),
    /// The innermost container ends (after all its children).
    Exit(Shape<A::MapInfo>),
}

/// An open container: its length, and the children still to walk.
enum Frame<S, M> {
    Seq(usize, S),
    Map(usize, M),
}

/// A depth-first walk of one tree; see the module docs.
pub(crate) struct Cursor<A: Access> {
    /// The root until it is walked (looked at only when `stack` is empty,
    /// so it costs no test per step).
    root: Option<A::Tree>,
    stack: Vec<Frame<A::Seq, A::Map>>,
}

impl<A: Access> Cursor<A> {
    /// A walk that starts at `root`.
    pub(crate) fn new(root: A::Tree) -> Self {
        Cursor {
            root: Some(root),
            stack: Vec::new(),
        }
    }

    /// The number of open containers: after an event for a node, its
    /// depth (plus one if it was entered); after an `Exit`, the depth of
    /// the container left.
    pub(crate) fn depth(&self) -> usize {
        self.stack.len()
    }

    /// Leaves the container just entered without walking its children; no
    /// `Exit` follows for it. (Only right after an `Enter`.)
    pub(crate) fn skip_children(&mut self) {
        self.stack.pop();
    }
}

impl<A: Open> Cursor<A> {
    /// The event of a node, opening it.
    #[inline(always)]
    fn node(&mut self, place: Option<Place<A::Key>>, tree: A::Tree) -> Event<A> {
        match A::open(tree) {
            Opened::Leaf(x) => Event::Leaf(place, x),
            Opened::None => Event::None(place),
            Opened::Seq(it) => {
                let len = it.len();
                self.stack.push(Frame::Seq(len, it));
                Event::Enter(place, Shape::Seq(len))
            }
            Opened::Map(it) => {
                let shape = Shape::Map(it.len(), A::map_info(&it));
                self.stack.push(Frame::Map(it.len(), it));
                Event::Enter(place, shape)
            }
        }
    }
}

impl<A: Open> Iterator for Cursor<A> {
    type Item = Event<A>;

    #[inline(always)]
    fn next(&mut self) -> Option<Event<A>> {
        let Some(top) = self.stack.last_mut() else {
            let root = self.root.take()?;
            return Some(self.node(None, root));
        };
        // The position is worked out from the length (not counted), so
        // walks that do not look at it do not pay for it.
        let (place, child) = match top {
            Frame::Seq(len, it) => match it.next() {
                Some(c) => {
                    let left = it.len();
                    let place = Place {
                        index: *len - left - 1,
                        key: None,
                        last: left == 0,
                    };
                    (place, c)
                }
                None => {
                    let shape = Shape::Seq(*len);
                    self.stack.pop();
                    return Some(Event::Exit(shape));
                }
            },
            Frame::Map(len, it) => match it.next() {
                Some((k, c)) => {
                    let left = it.len();
                    let place = Place {
                        index: *len - left - 1,
                        key: Some(k),
                        last: left == 0,
                    };
                    (place, c)
                }
                None => {
                    let shape = Shape::Map(*len, A::map_info(it));
                    self.stack.pop();
                    return Some(Event::Exit(shape));
                }
            },
        };
        Some(self.node(Some(place), child))
    }
}

/// The flavour that walks `&'a Tree<L>`.
pub(crate) struct Ref<'a, L>(PhantomData<&'a L>);

/// The entries of a map walked by reference: the map (for its keys) and
/// the position of the next entry (two words, so that a frame is four).
pub(crate) struct Entries<'a, L> {
    map: &'a Map<L>,
    next: usize,
}

impl<'a, L> Iterator for Entries<'a, L> {
    type Item = (&'a String, &'a Tree<L>);

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let entry = self.map.get_index(self.next)?;
        self.next += 1;
        Some(entry)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.map.len() - self.next;
        (left, Some(left))
    }
}

impl<L> ExactSizeIterator for Entries<'_, L> {}

impl<'a, L> Access for Ref<'a, L> {
    type Tree = &'a Tree<L>;
    type Leaf = &'a L;
    type Key = &'a String;
    type MapInfo = &'a Map<L>;
    type Seq = std::slice::Iter<'a, Tree<L>>;
    type Map = Entries<'a, L>;

    fn map_info(map: &Entries<'a, L>) -> &'a Map<L> {
        map.map
    }
}

impl<'a, L> Open for Ref<'a, L> {
    #[inline(always)]
    fn open(tree: &'a Tree<L>) -> Opened<Self> {
        match tree.node() {
            Node::Leaf(x) => Opened::Leaf(x),
            Node::None => Opened::None,
            Node::Seq(items) => Opened::Seq(items.iter()),
            Node::Map(map) => Opened::Map(Entries { map, next: 0 }),
        }
    }
}

impl<L> Cursor<Ref<'_, L>> {
    /// Places `err` at the path of the node of the last event (for an
    /// `Exit`, of the container left).
    pub(crate) fn place<E: AtPath>(&self, mut err: E) -> E {
        for frame in self.stack.iter().rev() {
            // The child last handed out, if there is one yet.
            let entry = match frame {
                Frame::Seq(len, it) if it.len() < *len => KeyEntry::Index(len - it.len() - 1),
                Frame::Map(len, entries) if entries.len() < *len => {
                    match entries.map.get_index(len - entries.len() - 1) {
                        Some((k, _)) => KeyEntry::key(k.clone()),
                        None => continue,
                    }
                }
                _ => continue,
            };
            err = err.at_entry(entry);
        }
        err
    }

    /// The key path of the node of the last event.
    #[cfg(test)]
    pub(crate) fn path(&self) -> pytree_core::KeyPath {
        struct Collect(Vec<KeyEntry>);
        impl AtPath for Collect {
            fn at_entry(mut self, entry: KeyEntry) -> Self {
                self.0.push(entry);
                self
            }
        }
        let mut entries = self.place(Collect(Vec::new())).0;
        entries.reverse();
        pytree_core::KeyPath::from_entries(entries)
    }
}

/// The flavour that walks `&'a mut Tree<L>`, copying shared containers on
/// the way down (`Arc::make_mut`).
pub(crate) struct Mut<'a, L>(PhantomData<&'a mut L>);

impl<'a, L> Access for Mut<'a, L> {
    type Tree = &'a mut Tree<L>;
    type Leaf = &'a mut L;
    type Key = &'a String;
    type MapInfo = ();
    type Seq = std::slice::IterMut<'a, Tree<L>>;
    type Map = indexmap::map::IterMut<'a, String, Tree<L>>;

    fn map_info(_: &Self::Map) {}
}

impl<'a, L: Clone> Open for Mut<'a, L> {
    #[inline(always)]
    fn open(tree: &'a mut Tree<L>) -> Opened<Self> {
        match &mut tree.node {
            Node::Leaf(x) => Opened::Leaf(x),
            Node::None => Opened::None,
            Node::Seq(items) => Opened::Seq(unshared(items).iter_mut()),
            Node::Map(map) => Opened::Map(unshared(map).iter_mut()),
        }
    }
}

/// `Arc::make_mut`, with the common case (not shared) inline: the walk
/// by `&mut` is as fast as its loop only if this is (`make_mut` itself is
/// too big to be inlined there).
#[inline(always)]
fn unshared<T: Clone>(arc: &mut Arc<T>) -> &mut T {
    if Arc::strong_count(arc) != 1 {
        return Arc::make_mut(arc);
    }
    // The only strong reference, and a tree makes no `Weak` ones.
    match Arc::get_mut(arc) {
        Some(unique) => unique,
        None => unreachable!("a tree's containers have no Weak references"),
    }
}

/// The flavour that takes a `Tree<L>` apart, copying shared containers
/// shallowly first (`Arc::unwrap_or_clone`).
pub(crate) struct Own<L>(PhantomData<L>);

impl<L> Access for Own<L> {
    type Tree = Tree<L>;
    type Leaf = L;
    type Key = String;
    type MapInfo = ();
    type Seq = std::vec::IntoIter<Tree<L>>;
    type Map = indexmap::map::IntoIter<String, Tree<L>>;

    fn map_info(_: &Self::Map) {}
}

impl<L: Clone> Open for Own<L> {
    #[inline(always)]
    fn open(tree: Tree<L>) -> Opened<Self> {
        match tree.into_node() {
            Node::Leaf(x) => Opened::Leaf(x),
            Node::None => Opened::None,
            Node::Seq(items) => Opened::Seq(Arc::unwrap_or_clone(items).into_iter()),
            Node::Map(map) => Opened::Map(Arc::unwrap_or_clone(map).into_iter()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree;

    /// The events of a walk by reference, written out.
    fn trace(t: &Tree<i32>) -> Vec<String> {
        let mut cursor = Cursor::<Ref<'_, i32>>::new(t);
        let mut out = Vec::new();
        while let Some(event) = cursor.next() {
            let place = |p: &Option<Place<&String>>| match p {
                None => "root".to_string(),
                Some(p) => format!(
                    "{}{}{}",
                    p.index,
                    p.key.map(|k| format!(":{k}")).unwrap_or_default(),
                    if p.last { " last" } else { "" }
                ),
            };
            out.push(match &event {
                Event::Enter(p, s) => format!("enter {} len {}", place(p), s.len()),
                Event::Leaf(p, x) => format!("leaf {} = {x} at {}", place(p), cursor.path()),
                Event::None(p) => format!("none {}", place(p)),
                Event::Exit(s) => format!("exit len {}", s.len()),
            });
        }
        out
    }

    #[test]
    fn events_come_in_pre_order_with_places() {
        let t: Tree<i32> = tree! { "a" => 1, "x" => [2, None, {}] };
        assert_eq!(
            trace(&t),
            [
                "enter root len 2",
                r#"leaf 0:a = 1 at ["a"]"#,
                "enter 1:x last len 3",
                r#"leaf 0 = 2 at ["x"][0]"#,
                "none 1",
                "enter 2 last len 0",
                "exit len 0",
                "exit len 3",
                "exit len 2",
            ]
        );
        assert_eq!(trace(&Tree::leaf(7)), ["leaf root = 7 at <root>"]);
    }

    #[test]
    fn skip_leaves_a_container_unwalked() {
        let t: Tree<i32> = tree! { "x" => [1, 2], "y" => 3 };
        let mut cursor = Cursor::<Ref<'_, i32>>::new(&t);
        let mut leaves = Vec::new();
        let mut exits = 0;
        while let Some(event) = cursor.next() {
            match event {
                Event::Enter(Some(_), _) => cursor.skip_children(),
                Event::Leaf(_, x) => leaves.push(*x),
                Event::Exit(_) => exits += 1,
                _ => {}
            }
        }
        assert_eq!((leaves, exits), (vec![3], 1));
    }

    #[test]
    fn by_value_every_leaf_is_dropped_once() {
        use std::cell::RefCell;
        use std::rc::Rc;
        /// A leaf that records its id when dropped.
        #[derive(Clone)]
        struct Noisy(u32, Rc<RefCell<Vec<u32>>>);
        impl Drop for Noisy {
            fn drop(&mut self) {
                self.1.borrow_mut().push(self.0);
            }
        }
        let log = Rc::new(RefCell::new(Vec::new()));
        let leaf = |i| Tree::leaf(Noisy(i, Rc::clone(&log)));
        let t = Tree::dict([
            ("a", leaf(0)),
            ("x", Tree::seq([leaf(1), Tree::seq([leaf(2), leaf(3)])])),
            ("b", leaf(4)),
        ]);
        // Half-way through, the cursor is dropped with what it holds.
        let mut cursor = Cursor::<Own<Noisy>>::new(t);
        let mut taken = Vec::new();
        for event in cursor.by_ref() {
            if let Event::Leaf(_, x) = event {
                taken.push(x);
                if taken.len() == 3 {
                    break;
                }
            }
        }
        assert!(log.borrow().is_empty());
        drop(cursor);
        let mut left = log.borrow().clone();
        left.sort_unstable();
        assert_eq!(left, [3, 4]);
        drop(taken);
        log.borrow_mut().sort_unstable();
        assert_eq!(*log.borrow(), [0, 1, 2, 3, 4]);
    }
}
