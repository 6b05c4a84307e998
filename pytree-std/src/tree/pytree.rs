//! `Tree<L>` as a pytree of the `Std` namespace, so every operation of the
//! library (flatten, map, map_n, for_each_mut, ...) works on it. A map is a
//! `Map(n)` node keyed by its `String` keys in insertion order, a sequence a
//! `Seq(n)` node, `None` a `None` node. Every walk is the tree's
//! [`Cursor`] (iterative), its events reported to the visitor.
//!
//! Unflattening reads *any* TreeDef (through [`Source::any_node`]), which
//! is how typed pytrees become trees: see `convert`.

use pytree_core::__private::check_signatures;
use pytree_core::{
    Error, Flatten, KeyRef, Leaf, LeafMut, LeafRef, NodeRef, Sink, Source, StaticValue, Unflatten,
    Visit, VisitMut,
};

use super::cursor::{Access, Cursor, Event, Mut, Open, Own, Place, Ref, Shape};
use super::node::{Map, Tree};
use super::{convert, walk};
use crate::std_namespace::Std;

/// What the protocol of [`Sink`], [`Visit`] and [`VisitMut`] (the same
/// calls, three traits) needs from a walk with [`Cursor`]: the calls, and
/// how a map's keys reach `map_keys` after its children.
trait Report<A: Access> {
    fn leaf(&mut self, leaf: A::Leaf);
    fn node(&mut self, node: NodeRef<'_>);
    fn enter(&mut self, place: Place<A::Key>);
    fn exit(&mut self);
    /// A map begins (after its `node`).
    fn map_opened(&mut self, _len: usize) {}
    /// A map's children are done (before its `exit`).
    fn map_closed(&mut self, _map: A::MapInfo) {}
}

/// Drives `report` through the walk of `root`.
fn report<A: Open, R: Report<A>>(root: A::Tree, report: &mut R) {
    let mut cursor = Cursor::<A>::new(root);
    while let Some(event) = cursor.next() {
        match event {
            Event::Leaf(place, x) => {
                let child = place.is_some();
                if let Some(p) = place {
                    report.enter(p);
                }
                report.leaf(x);
                if child {
                    report.exit();
                }
            }
            Event::None(place) => {
                let child = place.is_some();
                if let Some(p) = place {
                    report.enter(p);
                }
                report.node(NodeRef::None);
                if child {
                    report.exit();
                }
            }
            Event::Enter(place, shape) => {
                if let Some(p) = place {
                    report.enter(p);
                }
                match shape {
                    Shape::Seq(n) => report.node(NodeRef::Seq(n)),
                    Shape::Map(n, _) => {
                        report.node(NodeRef::Map(n));
                        report.map_opened(n);
                    }
                }
            }
            Event::Exit(shape) => {
                if let Shape::Map(_, map) = shape {
                    report.map_closed(map);
                }
                if cursor.depth() > 0 {
                    report.exit();
                }
            }
        }
    }
}

/// The consuming walk: keys move into `keys` (one list per open map) as
/// their entries are entered, and on to `map_keys`.
struct SinkReport<'s, S> {
    sink: &'s mut S,
    keys: Vec<Vec<String>>,
}

impl<L: Clone, S: Sink<L>> Report<Own<L>> for SinkReport<'_, S> {
    fn leaf(&mut self, leaf: L) {
        self.sink.leaf(leaf);
    }
    fn node(&mut self, node: NodeRef<'_>) {
        self.sink.node(node);
    }
    fn enter(&mut self, place: Place<String>) {
        match place.key {
            Some(k) => {
                self.sink.enter(KeyRef::Key(&k));
                if let Some(keys) = self.keys.last_mut() {
                    keys.push(k);
                }
            }
            None => self.sink.enter(KeyRef::Index(place.index)),
        }
    }
    fn exit(&mut self) {
        self.sink.exit();
    }
    fn map_opened(&mut self, len: usize) {
        self.keys.push(Vec::with_capacity(len));
    }
    fn map_closed(&mut self, (): ()) {
        let keys = self.keys.pop().unwrap_or_default();
        self.sink.map_keys(move || StaticValue::keys(keys));
    }
}

/// The key a walk enters a child by.
fn key_ref<'k>(place: &Place<&'k String>) -> KeyRef<'k> {
    match place.key {
        Some(k) => KeyRef::Key(k),
        None => KeyRef::Index(place.index),
    }
}

/// The structure callbacks of [`VisitReport`] and [`VisitMutReport`],
/// passed on to the visitor (`self.0`) alike, a place as its key.
macro_rules! forward_structure {
    () => {
        fn node(&mut self, node: NodeRef<'_>) {
            self.0.node(node);
        }
        fn enter(&mut self, place: Place<&'a String>) {
            self.0.enter(key_ref(&place));
        }
        fn exit(&mut self) {
            self.0.exit();
        }
    };
}

/// The walk by reference; a map's keys are cloned only if asked for.
struct VisitReport<'v, V>(&'v mut V);

impl<'a, L: Leaf<Std>, V: Visit<LeafRef<'a, Std, L>>> Report<Ref<'a, L>> for VisitReport<'_, V> {
    fn leaf(&mut self, leaf: &'a L) {
        self.0.leaf(leaf.lend());
    }
    forward_structure!();
    fn map_closed(&mut self, map: &'a Map<L>) {
        self.0
            .map_keys(|| StaticValue::keys(map.keys().cloned().collect::<Vec<_>>()));
    }
}

/// The walk by mutable reference (no `map_keys` in [`VisitMut`]).
struct VisitMutReport<'v, V>(&'v mut V);

impl<'a, L: Clone + Leaf<Std>, V: VisitMut<LeafMut<'a, Std, L>>> Report<Mut<'a, L>>
    for VisitMutReport<'_, V>
{
    fn leaf(&mut self, leaf: &'a mut L) {
        self.0.leaf(leaf.lend_mut());
    }
    forward_structure!();
}

// A tree is also a leaf of another tree (`Tree<Tree<L>>`), lent by
// reference as the containers of `impls` are.
crate::std_namespace::lent_by_reference!(<L> Tree<L>);

impl<L: Clone + Leaf<Std>> Flatten<Std> for Tree<L> {
    type Leaf = L;

    fn flatten_into<S: Sink<L>>(self, sink: &mut S) {
        report::<Own<L>, _>(
            self,
            &mut SinkReport {
                sink,
                keys: Vec::new(),
            },
        );
    }

    fn visit<'a, V: Visit<LeafRef<'a, Std, L>>>(&'a self, visitor: &mut V) {
        report::<Ref<'a, L>, _>(self, &mut VisitReport(visitor));
    }

    fn visit_mut<'a, V: VisitMut<LeafMut<'a, Std, L>>>(&'a mut self, visitor: &mut V) {
        report::<Mut<'a, L>, _>(self, &mut VisitMutReport(visitor));
    }

    fn zip_check<const N: usize>(&self, others: [&Self; N]) -> Result<(), Error> {
        walk::lockstep(self, others, |x, ys| {
            check_signatures::<Std, L, N>(&x.lend(), ys.map(Leaf::lend))
        })
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
        for (x, ys) in pytree_core::ops::basic::leaves_mut::<Std, Self>(self)
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
    fn map_leaves<F: FnMut(L) -> L>(self, f: &mut F) -> Self {
        self.map(f)
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
}
