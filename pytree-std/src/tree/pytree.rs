//! `Tree<L>` as a pytree of the `Std` namespace, so every operation of the
//! library (flatten, map, map2, for_each_mut, ...) works on it. A map is a
//! `Map(n)` node keyed by its `String` keys in insertion order, a sequence a
//! `Seq(n)` node, `None` a `None` node. Every walk is iterative.
//!
//! Unflattening reads *any* TreeDef (through [`Source::any_node`]), which
//! is how typed pytrees become trees: see `convert`.

use std::sync::Arc;

use pytree_core::__private::check_signatures;
use pytree_core::{
    Error, Flatten, KeyRef, Leaf, LeafMut, LeafRef, NodeRef, Sink, Source, StaticValue, Unflatten,
    Visit, VisitMut,
};

use super::{convert, walk, Map, Node, Tree};
use crate::Std;

/// A container whose children a by-reference walk still has to visit.
enum Frame<'a, L> {
    Seq(std::iter::Enumerate<std::slice::Iter<'a, Tree<L>>>),
    Map(&'a Map<L>, indexmap::map::Iter<'a, String, Tree<L>>),
}

/// A container whose children a consuming walk still has to hand over.
enum OwnedFrame<L> {
    Seq(std::iter::Enumerate<std::vec::IntoIter<Tree<L>>>),
    Map(indexmap::map::IntoIter<String, Tree<L>>, Vec<String>),
}

/// A container whose children a mutating walk still has to visit.
enum MutFrame<'a, L> {
    Seq(std::iter::Enumerate<std::slice::IterMut<'a, Tree<L>>>),
    Map(indexmap::map::IterMut<'a, String, Tree<L>>),
}

impl<L: Clone + Leaf<Std>> Flatten<Std> for Tree<L> {
    type Leaf = L;

    fn flatten_into<S: Sink<L>>(self, sink: &mut S) {
        let mut stack: Vec<OwnedFrame<L>> = Vec::new();
        let mut next = Some(self);
        loop {
            if let Some(t) = next.take() {
                match t.into_node() {
                    Node::Leaf(x) => {
                        sink.leaf(x);
                        if !stack.is_empty() {
                            sink.exit();
                        }
                    }
                    Node::None => {
                        sink.node(NodeRef::None);
                        if !stack.is_empty() {
                            sink.exit();
                        }
                    }
                    Node::Seq(items) => {
                        sink.node(NodeRef::Seq(items.len()));
                        let items = Arc::unwrap_or_clone(items);
                        stack.push(OwnedFrame::Seq(items.into_iter().enumerate()));
                    }
                    Node::Map(map) => {
                        sink.node(NodeRef::Map(map.len()));
                        let keys = Vec::with_capacity(map.len());
                        stack.push(OwnedFrame::Map(Arc::unwrap_or_clone(map).into_iter(), keys));
                    }
                }
            }
            let Some(top) = stack.last_mut() else {
                return;
            };
            match top {
                OwnedFrame::Seq(it) => {
                    if let Some((i, child)) = it.next() {
                        sink.enter(KeyRef::Index(i));
                        next = Some(child);
                        continue;
                    }
                }
                OwnedFrame::Map(it, keys) => {
                    if let Some((k, child)) = it.next() {
                        sink.enter(KeyRef::Key(&k));
                        keys.push(k);
                        next = Some(child);
                        continue;
                    }
                }
            }
            if let Some(OwnedFrame::Map(_, keys)) = stack.pop() {
                sink.map_keys(move || StaticValue::keys(keys));
            }
            if !stack.is_empty() {
                sink.exit();
            }
        }
    }

    fn visit<'a, V: Visit<LeafRef<'a, Std, L>>>(&'a self, visitor: &mut V) {
        let mut stack: Vec<Frame<'a, L>> = Vec::new();
        let mut next = Some(self);
        loop {
            if let Some(t) = next.take() {
                match t.node() {
                    Node::Leaf(x) => {
                        visitor.leaf(x.lend());
                        if !stack.is_empty() {
                            visitor.exit();
                        }
                    }
                    Node::None => {
                        visitor.node(NodeRef::None);
                        if !stack.is_empty() {
                            visitor.exit();
                        }
                    }
                    Node::Seq(items) => {
                        visitor.node(NodeRef::Seq(items.len()));
                        stack.push(Frame::Seq(items.iter().enumerate()));
                    }
                    Node::Map(map) => {
                        visitor.node(NodeRef::Map(map.len()));
                        stack.push(Frame::Map(map, map.iter()));
                    }
                }
            }
            let Some(top) = stack.last_mut() else {
                return;
            };
            match top {
                Frame::Seq(it) => {
                    if let Some((i, child)) = it.next() {
                        visitor.enter(KeyRef::Index(i));
                        next = Some(child);
                        continue;
                    }
                }
                Frame::Map(_, it) => {
                    if let Some((k, child)) = it.next() {
                        visitor.enter(KeyRef::Key(k));
                        next = Some(child);
                        continue;
                    }
                }
            }
            if let Some(Frame::Map(map, _)) = stack.pop() {
                visitor.map_keys(|| StaticValue::keys(map.keys().cloned().collect::<Vec<_>>()));
            }
            if !stack.is_empty() {
                visitor.exit();
            }
        }
    }

    fn visit_mut<'a, V: VisitMut<LeafMut<'a, Std, L>>>(&'a mut self, visitor: &mut V) {
        let mut stack: Vec<MutFrame<'_, L>> = Vec::new();
        let mut next = Some(self);
        loop {
            if let Some(t) = next.take() {
                match &mut t.node {
                    Node::Leaf(x) => {
                        visitor.leaf(x.lend_mut());
                        if !stack.is_empty() {
                            visitor.exit();
                        }
                    }
                    Node::None => {
                        visitor.node(NodeRef::None);
                        if !stack.is_empty() {
                            visitor.exit();
                        }
                    }
                    Node::Seq(items) => {
                        let items = Arc::make_mut(items);
                        visitor.node(NodeRef::Seq(items.len()));
                        stack.push(MutFrame::Seq(items.iter_mut().enumerate()));
                    }
                    Node::Map(map) => {
                        let map = Arc::make_mut(map);
                        visitor.node(NodeRef::Map(map.len()));
                        stack.push(MutFrame::Map(map.iter_mut()));
                    }
                }
            }
            let Some(top) = stack.last_mut() else {
                return;
            };
            match top {
                MutFrame::Seq(it) => {
                    if let Some((i, child)) = it.next() {
                        visitor.enter(KeyRef::Index(i));
                        next = Some(child);
                        continue;
                    }
                }
                MutFrame::Map(it) => {
                    if let Some((k, child)) = it.next() {
                        visitor.enter(KeyRef::Key(k));
                        next = Some(child);
                        continue;
                    }
                }
            }
            stack.pop();
            if !stack.is_empty() {
                visitor.exit();
            }
        }
    }

    fn map_leaves<F: FnMut(L) -> L>(self, f: &mut F) -> Self {
        self.map(f)
    }

    fn zip_check<const N: usize>(&self, others: [&Self; N]) -> Result<(), Error> {
        walk::lockstep(self, others, |x, ys| {
            check_signatures::<Std, L, N>(&x.lend(), ys.map(Leaf::lend))
        })
    }

    fn zip_with_prechecked<'a, const N: usize, F>(
        &'a self,
        others: [&'a Self; N],
        f: &mut F,
    ) -> Self
    where
        F: FnMut(LeafRef<'a, Std, L>, [LeafRef<'a, Std, L>; N]) -> L,
    {
        let mut out = Vec::new();
        // Past a mismatch (the check was skipped), `self`'s leaves stand in
        // for the others'.
        let _ = walk::lockstep(self, others, |x, ys| {
            out.push(f(x.lend(), ys.map(Leaf::lend)));
            Ok(())
        });
        let mut out = out.into_iter();
        let Ok(rebuilt) = walk::rebuild_ref(self, |x| {
            Ok::<L, std::convert::Infallible>(match out.next() {
                Some(y) => y,
                None => f(x.lend(), [x; N].map(Leaf::lend)),
            })
        });
        rebuilt
    }

    fn zip_mut_prechecked<'a, const N: usize, F>(&'a mut self, others: [&'a Self; N], f: &mut F)
    where
        F: FnMut(LeafMut<'a, Std, L>, [LeafRef<'a, Std, L>; N]),
    {
        let mut pairs: Vec<[&'a L; N]> = Vec::new();
        // Past a mismatch (the check was skipped), leaves are left as they are.
        let _ = walk::lockstep(&*self, others, |_, ys| {
            pairs.push(ys);
            Ok(())
        });
        for (x, ys) in pytree_core::leaves_mut::<Std, Self>(self)
            .into_iter()
            .zip(pairs)
        {
            f(x, ys.map(Leaf::lend));
        }
    }
}

impl<L: Clone + Leaf<Std>> Unflatten<Std> for Tree<L> {
    /// Reads any TreeDef: structs become maps of their data fields, tuples
    /// and sequences become sequences, `Some(x)` is `x`, map keys become
    /// strings (see [`Tree::from_pytree`] for the whole mapping).
    fn unflatten_from<S: Source<L>>(source: &mut S) -> Result<Self, Error> {
        convert::read_any(source)
    }
}
