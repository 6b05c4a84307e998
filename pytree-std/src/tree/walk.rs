//! The iterative walks every `Tree` operation is built on: pre-order node
//! visits, rebuilding with new leaves (by value or by reference), lockstep
//! walks of several trees, equality and drop. Each keeps its own stack, so
//! depth costs heap, never call stack.

use std::sync::Arc;

use pytree_core::{Error, ErrorKind, KeyEntry};

use super::{Map, Node, Tree};
use crate::impls::all_some;

/// Calls `f(node, depth)` on every node in pre-order.
pub(crate) fn for_each_node<L>(root: &Tree<L>, mut f: impl FnMut(&Tree<L>, usize)) {
    let mut stack = vec![(root, 0usize)];
    while let Some((t, depth)) = stack.pop() {
        f(t, depth);
        match t.node() {
            Node::Seq(items) => stack.extend(items.iter().rev().map(|c| (c, depth + 1))),
            Node::Map(map) => stack.extend(map.values().rev().map(|c| (c, depth + 1))),
            Node::Leaf(_) | Node::None => {}
        }
    }
}

/// Calls `f` on every leaf by mutable reference, in pre-order, copying
/// shared containers on the way (`Arc::make_mut`).
pub(crate) fn for_each_leaf_mut<L: Clone>(root: &mut Tree<L>, mut f: impl FnMut(&mut L)) {
    let mut stack: Vec<&mut Tree<L>> = vec![root];
    while let Some(t) = stack.pop() {
        match &mut t.node {
            Node::Leaf(x) => f(x),
            Node::Seq(items) => stack.extend(Arc::make_mut(items).iter_mut().rev()),
            Node::Map(map) => stack.extend(Arc::make_mut(map).values_mut().rev()),
            Node::None => {}
        }
    }
}

/// A container being rebuilt, with its key in its parent.
enum Open<M> {
    Seq(Option<String>, Vec<Tree<M>>),
    Map(Option<String>, Map<M>),
}

/// Assembles a tree bottom-up from a pre-order stream of nodes.
pub(crate) struct Builder<M> {
    open: Vec<Open<M>>,
    done: Option<Tree<M>>,
}

impl<M> Builder<M> {
    pub(crate) fn new() -> Self {
        Builder {
            open: Vec::new(),
            done: None,
        }
    }

    /// Starts a sequence, to be placed under `key` in its parent.
    pub(crate) fn open_seq(&mut self, key: Option<String>, capacity: usize) {
        self.open
            .push(Open::Seq(key, Vec::with_capacity(capacity.min(1 << 16))));
    }

    /// Starts a map, to be placed under `key` in its parent.
    pub(crate) fn open_map(&mut self, key: Option<String>, capacity: usize) {
        self.open
            .push(Open::Map(key, Map::with_capacity(capacity.min(1 << 16))));
    }

    /// True when a map is open and already holds `key`.
    pub(crate) fn has_key(&self, key: &str) -> bool {
        matches!(self.open.last(), Some(Open::Map(_, map)) if map.contains_key(key))
    }

    /// Places a finished subtree in the innermost open container (or makes
    /// it the result). A map entry without a key gets the key `""`.
    pub(crate) fn push(&mut self, key: Option<String>, tree: Tree<M>) {
        match self.open.last_mut() {
            None => self.done = Some(tree),
            Some(Open::Seq(_, items)) => items.push(tree),
            Some(Open::Map(_, map)) => {
                map.insert(key.unwrap_or_default(), tree);
            }
        }
    }

    /// Closes the innermost open container and places it in its parent.
    pub(crate) fn close(&mut self) {
        let (key, tree) = match self.open.pop() {
            Some(Open::Seq(key, items)) => (key, Tree::from_node(Node::Seq(Arc::new(items)))),
            Some(Open::Map(key, map)) => (key, Tree::from_node(Node::Map(Arc::new(map)))),
            None => return,
        };
        self.push(key, tree);
    }

    /// The finished tree (closing whatever is still open).
    pub(crate) fn finish(mut self) -> Tree<M> {
        while !self.open.is_empty() {
            self.close();
        }
        self.done.take().unwrap_or_default()
    }
}

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

/// The children still to visit of a container being copied.
enum Children<'a, L> {
    Seq(usize, std::slice::Iter<'a, Tree<L>>),
    Map(Option<&'a str>, indexmap::map::Iter<'a, String, Tree<L>>),
}

impl<'a, L> Children<'a, L> {
    fn next(&mut self) -> Option<(Option<&'a str>, &'a Tree<L>)> {
        match self {
            Children::Seq(i, it) => {
                let c = it.next()?;
                *i += 1;
                Some((None, c))
            }
            Children::Map(last, it) => {
                let (k, c) = it.next()?;
                *last = Some(k);
                Some((Some(k), c))
            }
        }
    }

    /// The entry of the child last returned.
    fn current(&self) -> KeyEntry {
        match self {
            Children::Seq(i, _) => KeyEntry::Index(i.saturating_sub(1)),
            Children::Map(last, _) => KeyEntry::key(last.unwrap_or_default().to_string()),
        }
    }
}

/// Places `err` at the path of the children being visited.
fn at_stack<E: AtPath, L>(mut err: E, stack: &[Children<'_, L>]) -> E {
    for frame in stack.iter().rev() {
        err = err.at_entry(frame.current());
    }
    err
}

/// Rebuilds `root` with `f` applied to every leaf by reference; an error
/// is placed at the path of its leaf.
pub(crate) fn rebuild_ref<'a, L, M, E: AtPath>(
    root: &'a Tree<L>,
    mut f: impl FnMut(&'a L) -> Result<M, E>,
) -> Result<Tree<M>, E> {
    let mut out = Builder::new();
    let mut stack: Vec<Children<'a, L>> = Vec::new();
    let mut next = Some((None, root));
    loop {
        if let Some((key, t)) = next.take() {
            let key = key.map(str::to_string);
            match t.node() {
                Node::Leaf(x) => match f(x) {
                    Ok(y) => out.push(key, Tree::leaf(y)),
                    Err(e) => return Err(at_stack(e, &stack)),
                },
                Node::None => out.push(key, Tree::none()),
                Node::Seq(items) => {
                    out.open_seq(key, items.len());
                    stack.push(Children::Seq(0, items.iter()));
                }
                Node::Map(map) => {
                    out.open_map(key, map.len());
                    stack.push(Children::Map(None, map.iter()));
                }
            }
        }
        let Some(top) = stack.last_mut() else {
            return Ok(out.finish());
        };
        match top.next() {
            Some(child) => next = Some(child),
            None => {
                stack.pop();
                out.close();
            }
        }
    }
}

/// [`rebuild_ref`] with errors at their paths, for `try_map_ref`.
pub(crate) fn try_rebuild_ref_with_path<L, M>(
    root: &Tree<L>,
    f: impl FnMut(&L) -> Result<M, Error>,
) -> Result<Tree<M>, Error> {
    rebuild_ref(root, f)
}

/// The children still to visit of a container being consumed.
enum Owned<L> {
    Seq(std::vec::IntoIter<Tree<L>>),
    Map(indexmap::map::IntoIter<String, Tree<L>>),
}

/// Rebuilds `root` with `f` applied to every leaf by value. Shared
/// containers are copied (shallowly) before being consumed.
pub(crate) fn rebuild<L: Clone, M, E>(
    root: Tree<L>,
    mut f: impl FnMut(L) -> Result<M, E>,
) -> Result<Tree<M>, E> {
    let mut out = Builder::new();
    let mut stack: Vec<Owned<L>> = Vec::new();
    let mut next = Some((None, root));
    loop {
        if let Some((key, t)) = next.take() {
            match t.into_node() {
                Node::Leaf(x) => out.push(key, Tree::leaf(f(x)?)),
                Node::None => out.push(key, Tree::none()),
                Node::Seq(items) => {
                    let items = Arc::unwrap_or_clone(items);
                    out.open_seq(key, items.len());
                    stack.push(Owned::Seq(items.into_iter()));
                }
                Node::Map(map) => {
                    let map = Arc::unwrap_or_clone(map);
                    out.open_map(key, map.len());
                    stack.push(Owned::Map(map.into_iter()));
                }
            }
        }
        let Some(top) = stack.last_mut() else {
            return Ok(out.finish());
        };
        let child = match top {
            Owned::Seq(it) => it.next().map(|c| (None, c)),
            Owned::Map(it) => it.next().map(|(k, c)| (Some(k), c)),
        };
        match child {
            Some(child) => next = Some(child),
            None => {
                stack.pop();
                out.close();
            }
        }
    }
}

/// How messages name a node.
pub(crate) fn describe<L>(t: &Tree<L>) -> String {
    match t.node() {
        Node::Leaf(_) => "a leaf".to_string(),
        Node::None => "None".to_string(),
        Node::Seq(items) => format!("a sequence of length {}", items.len()),
        Node::Map(map) => format!("a map of {} entries", map.len()),
    }
}

fn node_mismatch<A, B>(expected: &Tree<A>, found: &Tree<B>, tree: usize) -> Error {
    Error::new(ErrorKind::NodeMismatch {
        expected: describe(expected),
        found: describe(found),
    })
    .in_tree(tree)
}

fn quoted_keys<L>(map: &Map<L>) -> Vec<String> {
    map.keys().map(|k| format!("{k:?}")).collect()
}

/// A container of the first tree being walked in lockstep with the others.
enum Lock<'a, 'b, A, B, const N: usize> {
    Seq(&'a [Tree<A>], [&'b [Tree<B>]; N], usize),
    Map(&'a Map<A>, [&'b Map<B>; N], usize),
}

impl<A, B, const N: usize> Lock<'_, '_, A, B, N> {
    fn current(&self) -> KeyEntry {
        match self {
            Lock::Seq(_, _, next) => KeyEntry::Index(next.saturating_sub(1)),
            Lock::Map(map, _, next) => KeyEntry::key(
                map.get_index(next.saturating_sub(1))
                    .map(|(k, _)| k.clone())
                    .unwrap_or_default(),
            ),
        }
    }
}

/// Walks `first` and `others` together in `first`'s pre-order, calling
/// `on_leaf` on each tuple of leaves. Kinds, sequence lengths and map key
/// sets must agree (map entries are paired by key); the first mismatch, or
/// the first error of `on_leaf`, is an error naming the path and the tree
/// (1-based in `others`).
pub(crate) fn lockstep<'a, 'b, A, B, const N: usize>(
    first: &'a Tree<A>,
    others: [&'b Tree<B>; N],
    mut on_leaf: impl FnMut(&'a A, [&'b B; N]) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut stack: Vec<Lock<'a, 'b, A, B, N>> = Vec::new();
    let mut next = Some((first, others));
    loop {
        if let Some((t, os)) = next.take() {
            if let Err(e) = lockstep_node(t, os, &mut on_leaf, &mut stack) {
                let mut e = e;
                for frame in stack.iter().rev() {
                    e = e.at(frame.current());
                }
                return Err(e);
            }
        }
        let Some(top) = stack.last_mut() else {
            return Ok(());
        };
        match top {
            Lock::Seq(items, os, i) if *i < items.len() => {
                let k = *i;
                *i += 1;
                next = Some((&items[k], os.map(|o| &o[k])));
            }
            Lock::Map(map, os, i) if *i < map.len() => {
                let k = *i;
                *i += 1;
                let Some((key, child)) = map.get_index(k) else {
                    return Err(Error::custom("map changed while zipping"));
                };
                let Some(children) = all_some(os.map(|o| o.get(key))) else {
                    return Err(Error::custom("map changed while zipping"));
                };
                next = Some((child, children));
            }
            _ => {
                stack.pop();
            }
        }
    }
}

/// One step of [`lockstep`]: checks a node against the others' and either
/// calls `on_leaf` or opens a frame.
fn lockstep_node<'a, 'b, A, B, const N: usize>(
    t: &'a Tree<A>,
    os: [&'b Tree<B>; N],
    on_leaf: &mut impl FnMut(&'a A, [&'b B; N]) -> Result<(), Error>,
    stack: &mut Vec<Lock<'a, 'b, A, B, N>>,
) -> Result<(), Error> {
    let first_odd = |ok: &dyn Fn(&Tree<B>) -> bool| os.iter().position(|o| !ok(o));
    match t.node() {
        Node::Leaf(x) => match all_some(os.map(Tree::as_leaf)) {
            Some(ys) => on_leaf(x, ys)?,
            None => {
                let j = first_odd(&|o| o.is_leaf()).unwrap_or(0);
                return Err(node_mismatch(t, os[j], j + 1));
            }
        },
        Node::None => {
            if let Some(j) = first_odd(&|o| o.is_none()) {
                return Err(node_mismatch(t, os[j], j + 1));
            }
        }
        Node::Seq(items) => {
            let Some(seqs) = all_some(os.map(Tree::as_seq)) else {
                let j = first_odd(&|o| o.is_seq()).unwrap_or(0);
                return Err(node_mismatch(t, os[j], j + 1));
            };
            crate::impls::check_lengths(items.len(), seqs.map(<[Tree<B>]>::len))?;
            stack.push(Lock::Seq(items, seqs, 0));
        }
        Node::Map(map) => {
            let maps = all_some(os.map(|o| match o.node() {
                Node::Map(m) => Some(&**m),
                _ => None,
            }));
            let Some(maps) = maps else {
                let j = first_odd(&|o| o.is_map()).unwrap_or(0);
                return Err(node_mismatch(t, os[j], j + 1));
            };
            for (j, other) in maps.iter().enumerate() {
                if other.len() != map.len() || !map.keys().all(|k| other.contains_key(k)) {
                    return Err(Error::new(ErrorKind::KeyMismatch {
                        expected: quoted_keys(map),
                        found: quoted_keys(other),
                    })
                    .in_tree(j + 1));
                }
            }
            stack.push(Lock::Map(map, maps, 0));
        }
    }
    Ok(())
}

/// Structural equality, map entries paired by key.
pub(crate) fn equal<L: PartialEq>(a: &Tree<L>, b: &Tree<L>) -> bool {
    let mut stack = vec![(a, b)];
    while let Some((a, b)) = stack.pop() {
        match (a.node(), b.node()) {
            (Node::Leaf(x), Node::Leaf(y)) => {
                if x != y {
                    return false;
                }
            }
            (Node::None, Node::None) => {}
            (Node::Seq(xs), Node::Seq(ys)) => {
                if xs.len() != ys.len() {
                    return false;
                }
                stack.extend(xs.iter().zip(ys.iter()));
            }
            (Node::Map(xs), Node::Map(ys)) => {
                if xs.len() != ys.len() {
                    return false;
                }
                for (k, x) in xs.iter() {
                    match ys.get(k) {
                        Some(y) => stack.push((x, y)),
                        None => return false,
                    }
                }
            }
            _ => return false,
        }
    }
    true
}

/// Drops a node without recursion: uniquely owned containers hand their
/// container children to an explicit stack before they are freed.
pub(crate) fn drop_iteratively<L>(node: Node<L>) {
    let mut stack: Vec<Node<L>> = Vec::new();
    let mut next = Some(node);
    while let Some(node) = next.take().or_else(|| stack.pop()) {
        let take = |child: &mut Tree<L>, stack: &mut Vec<Node<L>>| {
            if matches!(child.node, Node::Seq(_) | Node::Map(_)) {
                stack.push(std::mem::replace(&mut child.node, Node::None));
            }
        };
        match node {
            Node::Seq(items) => {
                if let Some(mut items) = Arc::into_inner(items) {
                    for child in items.iter_mut() {
                        take(child, &mut stack);
                    }
                }
            }
            Node::Map(map) => {
                if let Some(mut map) = Arc::into_inner(map) {
                    for child in map.values_mut() {
                        take(child, &mut stack);
                    }
                }
            }
            Node::Leaf(_) | Node::None => {}
        }
    }
}
