//! Deep trees: every walk of a typed recursive value recurses (the derive
//! writes one call per level), so a chain of 100 000 levels would overflow
//! the call stack. The `Box`, `Rc`, `Arc` and container impls grow the stack
//! onto the heap when it runs low (`stacker`, with pytree-core's `std`
//! feature), so such chains work; TreeDefs are flat and every reader of
//! them is iterative.
//!
//! std's own recursive code is not ours to fix: dropping a 100 000-level
//! `Box` chain recurses once per level in `drop_in_place` (and so do the
//! derived `Clone`, `PartialEq` and `Debug`). These tests never call those
//! on a deep chain: they read it with loops and take it apart with
//! [`dismantle`] before it is dropped.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use pytree_benches::shapes::{self, Deep};
use pytree_std::{ErrorKind, PyTree, TreeDef};

/// A typed chain: a leaf and, maybe, the next level.
#[derive(PyTree)]
struct Chain {
    v: f64,
    next: Option<Box<Chain>>,
}

const LEVELS: usize = 100_000;

/// A chain of `levels` levels holding 0.0, 1.0, ... (built with a loop).
fn chain(levels: usize) -> Chain {
    let mut c = Chain {
        v: (levels - 1) as f64,
        next: None,
    };
    for i in (0..levels - 1).rev() {
        c = Chain {
            v: i as f64,
            next: Some(Box::new(c)),
        };
    }
    c
}

/// The leaves, read with a loop.
fn values(c: &Chain) -> Vec<f64> {
    let levels = std::iter::successors(Some(c), |level| level.next.as_deref());
    levels.map(|level| level.v).collect()
}

/// Drops a chain level by level (std's drop would recurse once per level).
fn dismantle(mut c: Chain) {
    unlink(c.next.take(), |level| level.next.take());
}

/// Drops the levels from `first` down one by one, `next` taking each
/// level's next out of it.
fn unlink<L>(first: Option<L>, next: impl Fn(&mut L) -> Option<L>) {
    let mut level = first;
    while let Some(mut this) = level {
        level = next(&mut this);
    }
}

fn counting(n: usize) -> Vec<f64> {
    (0..n).map(|i| i as f64).collect()
}

#[test]
fn t3_five_hundred_levels_round_trips_through_flatten_and_unflatten() {
    let (leaves, def) = pytree_std::flatten(shapes::t3());
    assert_eq!(leaves.len(), shapes::T3_LEAVES);
    assert_eq!(def, pytree_std::structure(&shapes::t3()));
    let back: Deep = pytree_std::unflatten(&def, leaves).unwrap();
    assert_eq!(back, shapes::t3());
}

#[test]
fn a_100_000_level_chain_flattens_and_unflattens() {
    let (leaves, def) = pytree_std::flatten(chain(LEVELS));
    assert_eq!(leaves, counting(LEVELS));
    assert_eq!(def.num_leaves(), LEVELS);
    let back: Chain = pytree_std::unflatten(&def, leaves).unwrap();
    assert_eq!(values(&back), counting(LEVELS));
    dismantle(back);
}

#[test]
fn a_100_000_level_chain_is_walked_by_reference_and_in_place() {
    let mut c = chain(LEVELS);
    assert_eq!(pytree_std::leaves(&c).len(), LEVELS);
    assert_eq!(pytree_std::structure(&c).num_leaves(), LEVELS);
    let mut sum = 0.0;
    pytree_std::leaves(&c).into_iter().for_each(|x| sum += x);
    assert_eq!(sum, counting(LEVELS).iter().sum::<f64>());
    pytree_std::for_each_mut(&mut c, |x| *x *= 2.0);
    let doubled: Vec<f64> = counting(LEVELS).iter().map(|x| x * 2.0).collect();
    assert_eq!(values(&c), doubled);
    dismantle(c);
}

#[test]
fn a_100_000_level_chain_is_read_with_its_paths_lent() {
    // Each path is lent for its call: memory is the depth, not leaves x
    // depth (collecting the 100 000 paths, each up to 100 000 entries long,
    // would take tens of GiB).
    let c = chain(LEVELS);
    let (mut count, mut longest, mut sum) = (0usize, 0usize, 0.0);
    pytree_std::paths::for_each_with_path(&c, |path, x| {
        count += 1;
        longest = longest.max(path.len());
        sum += x;
    });
    assert_eq!(count, LEVELS);
    assert_eq!(sum, counting(LEVELS).iter().sum::<f64>());
    let last = pytree_std::structure(&c).leaf_path(LEVELS - 1).unwrap();
    assert_eq!(longest, last.len());
    assert!(longest >= LEVELS);
    dismantle(c);
}

#[test]
fn a_100_000_level_chain_maps_and_zips() {
    let a = chain(LEVELS);
    let b = chain(LEVELS);
    let sum = pytree_std::walk::map_n(&a, [&b], |x, [y]| x + y).unwrap();
    let doubled: Vec<f64> = counting(LEVELS).iter().map(|x| x * 2.0).collect();
    assert_eq!(values(&sum), doubled);
    let mut params = pytree_std::map(a, |x| x + 1.0);
    let plus_one: Vec<f64> = counting(LEVELS).iter().map(|x| x + 1.0).collect();
    assert_eq!(values(&params), plus_one);
    pytree_std::zip_mut([&mut params], [&b], |[p], [g]| *p -= g).unwrap();
    assert_eq!(values(&params), vec![1.0; LEVELS]);
    for c in [sum, params, b] {
        dismantle(c);
    }
}

#[test]
fn a_100_000_level_chain_with_a_leaf_missing_is_an_error_naming_the_deepest_place() {
    let (mut leaves, def) = pytree_std::flatten(chain(LEVELS));
    leaves.pop();
    let err = match pytree_std::unflatten::<Chain>(&def, leaves) {
        Err(err) => err,
        Ok(c) => {
            dismantle(c);
            panic!("unflatten accepted a missing leaf");
        }
    };
    assert_eq!(
        err.kind(),
        &ErrorKind::TooFewLeaves {
            expected: LEVELS,
            found: LEVELS - 1
        }
    );
    // `.next` once per level below the root, then `.v`.
    let path = err.path();
    assert_eq!(path.len(), LEVELS);
    assert!(path.to_string().ends_with(".next.next.v"));
}

#[test]
fn a_100_000_level_treedef_prints_compares_hashes_clones_and_drops() {
    let (_, def) = pytree_std::flatten(chain(LEVELS));
    let (_, other) = pytree_std::flatten(chain(LEVELS));
    assert_eq!(def, other);
    let hash = |d: &TreeDef| {
        let mut h = DefaultHasher::new();
        d.hash(&mut h);
        h.finish()
    };
    assert_eq!(hash(&def), hash(&other));
    let copy = def.clone();
    assert_eq!(copy, def);
    let text = def.to_string();
    assert!(text.starts_with("Chain { v: *, next: Some(Chain { v: *, next: Some("));
    let innermost = format!("Chain {{ v: *, next: None }}{}", ") }".repeat(LEVELS - 1));
    assert!(text.ends_with(&innermost));
    assert_eq!(text.matches("Chain {").count(), LEVELS);
    let (_, shorter) = pytree_std::flatten(chain(LEVELS - 1));
    assert_ne!(def, shorter);
    drop((def, other, copy, shorter));
}

/// A tree whose recursion passes through `Vec` only.
#[derive(PyTree)]
struct Tree {
    v: f64,
    children: Vec<Tree>,
}

/// A tree of `levels` levels with one child per level.
fn vine(levels: usize) -> Tree {
    let mut t = Tree {
        v: (levels - 1) as f64,
        children: Vec::new(),
    };
    for i in (0..levels - 1).rev() {
        t = Tree {
            v: i as f64,
            children: vec![t],
        };
    }
    t
}

/// The leaves, read with a loop.
fn vine_values(t: &Tree) -> Vec<f64> {
    let levels = std::iter::successors(Some(t), |level| level.children.first());
    levels.map(|level| level.v).collect()
}

fn dismantle_vine(mut t: Tree) {
    unlink(t.children.pop(), |level| level.children.pop());
}

#[test]
fn a_100_000_level_tree_nested_through_vec_round_trips_and_maps() {
    let (leaves, def) = pytree_std::flatten(vine(LEVELS));
    assert_eq!(leaves, counting(LEVELS));
    let back: Tree = pytree_std::unflatten(&def, leaves).unwrap();
    assert_eq!(pytree_std::structure(&back), def);
    let mapped = pytree_std::map(back, |x| -x);
    let negated: Vec<f64> = counting(LEVELS).iter().map(|x| -x).collect();
    assert_eq!(vine_values(&mapped), negated);
    let summed = pytree_std::walk::map_n(&mapped, [&mapped], |x, [y]| x + y).unwrap();
    assert_eq!(pytree_std::leaves(&summed).len(), LEVELS);
    dismantle_vine(mapped);
    dismantle_vine(summed);
}

/// A chain through `Arc`.
#[derive(PyTree, Clone)]
struct Shared {
    v: f64,
    next: Option<std::sync::Arc<Shared>>,
}

#[test]
fn a_100_000_level_chain_through_arc_is_walked_and_mapped() {
    use std::sync::Arc;
    let mut c = Shared { v: 0.0, next: None };
    for _ in 1..LEVELS {
        c = Shared {
            v: 1.0,
            next: Some(Arc::new(c)),
        };
    }
    assert_eq!(pytree_std::structure(&c).num_leaves(), LEVELS);
    pytree_std::for_each_mut(&mut c, |x| *x += 1.0);
    let c = pytree_std::map(c, |x| x * 10.0);
    let mut total = 0.0;
    pytree_std::leaves(&c).into_iter().for_each(|x| total += x);
    assert_eq!(total, 10.0 + 20.0 * (LEVELS - 1) as f64);
    // Take it apart level by level: each `Arc` is the only handle.
    let mut next = c.next;
    while let Some(level) = next {
        next = Arc::try_unwrap(level).ok().expect("only handle").next;
    }
}

/// A leaf that counts how many of its kind are alive.
#[derive(PyTree)]
#[pytree(leaf)]
struct Tracked(std::rc::Rc<std::cell::Cell<isize>>);

impl Tracked {
    fn new(alive: &std::rc::Rc<std::cell::Cell<isize>>) -> Self {
        alive.set(alive.get() + 1);
        Tracked(alive.clone())
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.0.set(self.0.get() - 1);
    }
}

#[derive(PyTree)]
struct TrackedChain {
    v: Tracked,
    next: Option<Box<TrackedChain>>,
}

fn tracked_chain(levels: usize, alive: &std::rc::Rc<std::cell::Cell<isize>>) -> TrackedChain {
    let mut c = TrackedChain {
        v: Tracked::new(alive),
        next: None,
    };
    for _ in 1..levels {
        c = TrackedChain {
            v: Tracked::new(alive),
            next: Some(Box::new(c)),
        };
    }
    c
}

#[test]
fn map_through_boxes_drops_every_old_leaf_once_and_keeps_every_new_one() {
    let alive = std::rc::Rc::new(std::cell::Cell::new(0));
    let c = tracked_chain(10, &alive);
    assert_eq!(alive.get(), 10);
    let mapped = pytree_std::map(c, |old| {
        drop(old);
        Tracked::new(&alive)
    });
    assert_eq!(alive.get(), 10);
    drop(mapped);
    assert_eq!(alive.get(), 0);
}

#[test]
fn a_map_through_boxes_that_panics_midway_leaks_and_double_drops_nothing() {
    let alive = std::rc::Rc::new(std::cell::Cell::new(0));
    let c = tracked_chain(10, &alive);
    let mut calls = 0;
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pytree_std::map(c, |old| {
            calls += 1;
            if calls == 5 {
                panic!("the fifth leaf");
            }
            drop(old);
            Tracked::new(&alive)
        })
    }));
    assert!(result.is_err());
    assert_eq!(alive.get(), 0);
}
