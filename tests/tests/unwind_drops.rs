//! A panic in a user closure (`map`) or a user `Sink` (`flatten_into`)
//! halfway through a tree drops every leaf exactly once: none leaks, none
//! is dropped twice. Leaves count their drops; each case runs through
//! `catch_unwind` and compares drops with leaves made.

use std::cell::Cell;
use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};

use pytree_std::{Flatten, PyTree, Sink};

thread_local! {
    static MADE: Cell<usize> = const { Cell::new(0) };
    static DROPPED: Cell<usize> = const { Cell::new(0) };
}

/// A leaf that counts its drops.
#[derive(PyTree, Debug)]
#[pytree(leaf)]
struct Tracked(u32);

impl Tracked {
    fn new(v: u32) -> Self {
        MADE.with(|m| m.set(m.get() + 1));
        Tracked(v)
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        DROPPED.with(|d| d.set(d.get() + 1));
    }
}

#[derive(PyTree)]
struct Layer {
    w: Vec<Tracked>,
    b: Tracked,
}

fn layer(n: u32) -> Layer {
    Layer {
        w: (0..n).map(Tracked::new).collect(),
        b: Tracked::new(n),
    }
}

/// Runs `f` (which must panic) and checks that every leaf made since the
/// start was dropped exactly once.
fn every_leaf_dropped_once(what: &str, f: impl FnOnce()) {
    MADE.with(|m| m.set(0));
    DROPPED.with(|d| d.set(0));
    let caught = catch_unwind(AssertUnwindSafe(f));
    assert!(caught.is_err(), "{what}: no panic");
    let (made, dropped) = (MADE.with(Cell::get), DROPPED.with(Cell::get));
    assert!(made > 0, "{what}");
    assert_eq!(
        dropped, made,
        "{what}: {made} leaves made, {dropped} dropped"
    );
}

/// A closure that panics at leaf `at`, else makes a new leaf.
fn panics_at(at: usize) -> impl FnMut(Tracked) -> Tracked {
    pytree_tests::unwind::panics_at(at, |x: Tracked| Tracked::new(x.0 + 1))
}

/// A sink that keeps the leaves it is given and panics at leaf `at`.
struct PanickingSink {
    kept: Vec<Tracked>,
    at: usize,
}

impl Sink<Tracked> for PanickingSink {
    fn leaf(&mut self, leaf: Tracked) {
        if self.kept.len() == self.at {
            panic!("sink at leaf {}", self.at);
        }
        self.kept.push(leaf);
    }
}

fn flatten_panicking<T: Flatten<pytree_std::Std, Leaf = Tracked>>(t: T, at: usize) {
    let mut sink = PanickingSink {
        kept: Vec::new(),
        at,
    };
    t.flatten_into(&mut sink);
}

#[test]
fn a_panicking_map_drops_every_leaf_once() {
    for at in [0, 3, 7] {
        every_leaf_dropped_once("vec", || {
            pytree_std::map(vec![layer(3), layer(3)], panics_at(at));
        });
        every_leaf_dropped_once("vecdeque", || {
            pytree_std::map(VecDeque::from([layer(3), layer(3)]), panics_at(at));
        });
        every_leaf_dropped_once("array", || {
            pytree_std::map([layer(3), layer(3)], panics_at(at));
        });
        every_leaf_dropped_once("tuple", || {
            pytree_std::map((layer(3), Some(layer(3))), panics_at(at));
        });
    }
}

#[test]
fn a_panicking_sink_drops_every_leaf_once() {
    for at in [0, 3, 7] {
        every_leaf_dropped_once("vec", || flatten_panicking(vec![layer(3), layer(3)], at));
        every_leaf_dropped_once("vecdeque", || {
            flatten_panicking(VecDeque::from([layer(3), layer(3)]), at)
        });
        every_leaf_dropped_once("array", || flatten_panicking([layer(3), layer(3)], at));
        every_leaf_dropped_once("tuple", || {
            flatten_panicking((layer(3), Some(layer(3))), at)
        });
        every_leaf_dropped_once("map", || {
            let m = std::collections::BTreeMap::from([("a", layer(3)), ("b", layer(3))]);
            flatten_panicking(m, at)
        });
        every_leaf_dropped_once("leaves", || {
            flatten_panicking((0..8).map(Tracked::new).collect::<Vec<_>>(), at)
        });
    }
}

#[test]
fn without_a_panic_flatten_keeps_every_leaf() {
    MADE.with(|m| m.set(0));
    DROPPED.with(|d| d.set(0));
    let (leaves, _def) = pytree_std::flatten(vec![layer(3), layer(3)]);
    assert_eq!(leaves.len(), 8);
    assert_eq!(DROPPED.with(Cell::get), 0);
    drop(leaves);
    assert_eq!(DROPPED.with(Cell::get), MADE.with(Cell::get));
}

/// A node that says every value has one leaf (`UNIFORM_LEAVES`) but holds
/// as many as its `Vec`: a wrong impl, which flatten's repeated-element
/// path (`Sink::repeat_like`) must catch with a panic, dropping every leaf
/// once and writing none out of bounds.
struct Liar(Vec<Tracked>);

impl Flatten<pytree_std::Std> for Liar {
    type Leaf = Tracked;
    const UNIFORM_LEAVES: Option<usize> = Some(1);

    fn flatten_into<S: Sink<Tracked>>(self, sink: &mut S) {
        sink.node(pytree_std::NodeRef::Seq(self.0.len()));
        for x in self.0 {
            sink.leaf(x);
        }
    }
    fn visit<'a, V: pytree_std::Visit<pytree_std::LeafRef<'a, pytree_std::Std, Tracked>>>(
        &'a self,
        visitor: &mut V,
    ) {
        Flatten::<pytree_std::Std>::visit(&self.0, visitor);
    }
    fn visit_mut<'a, V: pytree_std::VisitMut<pytree_std::LeafMut<'a, pytree_std::Std, Tracked>>>(
        &'a mut self,
        visitor: &mut V,
    ) {
        Flatten::<pytree_std::Std>::visit_mut(&mut self.0, visitor);
    }
}

fn liars(counts: &[u32]) -> Vec<Liar> {
    counts
        .iter()
        .map(|&n| Liar((0..n).map(Tracked::new).collect()))
        .collect()
}

#[test]
fn a_wrong_uniform_count_panics_and_drops_every_leaf_once() {
    // The first element agrees with the count, so its records are copied
    // for the rest; a later one has more leaves than were reserved (within
    // the buffer's capacity, or past it: flatten's first buffer holds 256
    // of these)...
    for counts in [&[1, 3][..], &[1, 1, 1, 5], &[1, 2, 1, 1], &[1, 1000]] {
        every_leaf_dropped_once("more leaves", || {
            pytree_std::flatten(liars(counts));
        });
    }
    // ... or fewer.
    every_leaf_dropped_once("fewer leaves", || {
        pytree_std::flatten(liars(&[1, 0, 1]));
    });
}

/// A uniform struct of leaves that count their drops.
#[derive(PyTree)]
struct TrackedPair {
    a: Tracked,
    b: Tracked,
}

#[test]
fn repeated_uniform_elements_keep_every_leaf_once() {
    MADE.with(|m| m.set(0));
    DROPPED.with(|d| d.set(0));
    let pairs: Vec<TrackedPair> = (0..50)
        .map(|i| TrackedPair {
            a: Tracked::new(2 * i),
            b: Tracked::new(2 * i + 1),
        })
        .collect();
    let (leaves, def) = pytree_std::flatten(pairs);
    assert_eq!(def.num_leaves(), 100);
    assert_eq!(
        leaves.iter().map(|x| x.0).collect::<Vec<_>>(),
        (0..100).collect::<Vec<_>>()
    );
    assert_eq!(DROPPED.with(Cell::get), 0);
    drop(leaves);
    assert_eq!(DROPPED.with(Cell::get), MADE.with(Cell::get));
}
