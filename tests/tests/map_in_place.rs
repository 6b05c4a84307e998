//! `map` over `BTreeMap` and `HashMap` maps the values in place (the map's
//! nodes or table and its keys are kept): `f` sees the leaves in sorted key
//! order, every old leaf is dropped once, and a panic in `f` leaks the map
//! rather than dropping a moved-out value a second time.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::panic::{catch_unwind, AssertUnwindSafe};

use pytree_std::PyTree;

thread_local! {
    /// The ids of the `Tracked` leaves dropped on this thread, in order.
    static DROPPED: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// A leaf that logs its id when dropped, so that a double drop shows as a
/// repeated id.
#[derive(PyTree, Debug, PartialEq)]
#[pytree(leaf)]
struct Tracked(u32);

impl Drop for Tracked {
    fn drop(&mut self) {
        DROPPED.with(|d| d.borrow_mut().push(self.0));
    }
}

/// The ids dropped since the last call.
fn take_dropped() -> Vec<u32> {
    DROPPED.with(|d| std::mem::take(&mut *d.borrow_mut()))
}

/// Keys `k0`..`k{n-1}` with the `Tracked` leaf of the same number. The
/// numbers are written with one digit so that the string order is the
/// numeric order.
fn tracked_entries(n: u32) -> impl Iterator<Item = (String, Tracked)> {
    assert!(n <= 10);
    (0..n).map(|i| (format!("k{i}"), Tracked(i)))
}

/// Maps `t` with [`replace_or_panic_at`] `panic_at`, which must panic.
fn map_panics_at<T: pytree_std::Unflatten<pytree_std::Std, Leaf = Tracked>>(t: T, panic_at: u32) {
    let result = catch_unwind(AssertUnwindSafe(|| {
        pytree_std::map(t, replace_or_panic_at(panic_at))
    }));
    assert!(result.is_err());
}

/// The map `f` for the tests: drops the old leaf and returns one with
/// id + 100; panics on the leaf with id `panic_at`.
fn replace_or_panic_at(panic_at: u32) -> impl FnMut(Tracked) -> Tracked {
    move |old| {
        if old.0 == panic_at {
            panic!("leaf {panic_at}");
        }
        let id = old.0 + 100;
        drop(old);
        Tracked(id)
    }
}

#[test]
fn map_over_a_btreemap_calls_f_in_key_order_and_keeps_the_keys() {
    let m: BTreeMap<u32, u32> = [(3, 30), (1, 10), (2, 20)].into();
    let mut seen = Vec::new();
    let mapped = pytree_std::map(m, |x| {
        seen.push(x);
        x + 1
    });
    assert_eq!(seen, [10, 20, 30]);
    assert_eq!(mapped, BTreeMap::from([(1, 11), (2, 21), (3, 31)]));
}

#[test]
fn map_over_a_hashmap_calls_f_in_sorted_key_order_not_hash_order() {
    let m: HashMap<u32, u32> = (0..200).map(|k| (k, k)).collect();
    let mut seen = Vec::new();
    let mapped = pytree_std::map(m, |x| {
        seen.push(x);
        x * 2
    });
    assert_eq!(seen, (0..200).collect::<Vec<u32>>());
    assert_eq!(mapped, (0..200).map(|k| (k, k * 2)).collect());
}

#[test]
fn map_over_maps_of_nested_values_maps_every_leaf() {
    let b: BTreeMap<&str, (f64, Vec<f64>)> = [("a", (1.0, vec![2.0])), ("b", (3.0, vec![]))].into();
    let h: HashMap<&str, Option<f64>> = [("x", Some(1.0)), ("y", None)].into();
    let (b, h) = pytree_std::map((b, h), |x| -x);
    assert_eq!(b, [("a", (-1.0, vec![-2.0])), ("b", (-3.0, vec![]))].into());
    assert_eq!(h, [("x", Some(-1.0)), ("y", None)].into());
}

#[test]
fn map_over_maps_drops_every_old_leaf_once_and_keeps_every_new_one() {
    take_dropped();
    let b: BTreeMap<String, Tracked> = tracked_entries(5).collect();
    let mapped = pytree_std::map(b, replace_or_panic_at(u32::MAX));
    assert_eq!(take_dropped(), [0, 1, 2, 3, 4]);
    drop(mapped);
    assert_eq!(take_dropped(), [100, 101, 102, 103, 104]);

    let h: HashMap<String, Tracked> = tracked_entries(5).collect();
    let mapped = pytree_std::map(h, replace_or_panic_at(u32::MAX));
    assert_eq!(take_dropped(), [0, 1, 2, 3, 4], "old leaves in key order");
    drop(mapped);
    let mut new = take_dropped();
    new.sort();
    assert_eq!(new, [100, 101, 102, 103, 104]);
}

#[test]
fn a_btreemap_map_that_panics_midway_leaks_the_map_and_drops_nothing_twice() {
    take_dropped();
    let b: BTreeMap<String, Tracked> = tracked_entries(5).collect();
    map_panics_at(b, 2);
    // 0 and 1 were replaced (the old ones dropped by `f`), 2 was dropped
    // by the unwind out of `f`; the map, holding 100, 101, the moved-out
    // slot of 2, then 3 and 4, is leaked: nothing else is dropped, and 2
    // is not dropped a second time.
    assert_eq!(take_dropped(), [0, 1, 2]);
}

#[test]
fn a_hashmap_map_that_panics_midway_leaks_the_map_and_drops_nothing_twice() {
    take_dropped();
    let h: HashMap<String, Tracked> = tracked_entries(8).collect();
    map_panics_at(h, 5);
    // In sorted key order whatever the table's order: 0..=4 replaced, 5
    // dropped by the unwind, the rest leaked with the map.
    assert_eq!(take_dropped(), [0, 1, 2, 3, 4, 5]);
}

#[test]
fn a_panic_inside_a_nested_value_of_a_map_drops_nothing_twice() {
    take_dropped();
    let b: BTreeMap<u8, Vec<Tracked>> = [
        (0, vec![Tracked(0), Tracked(1)]),
        (1, vec![Tracked(2), Tracked(3), Tracked(4)]),
    ]
    .into();
    map_panics_at(b, 3);
    let mut dropped = take_dropped();
    // Inside the `Vec` being mapped, the unwind drops what that `Vec`'s
    // own `map_leaves` holds (102, and 4 not yet mapped); the first value
    // (100, 101) is leaked with the map. No id twice.
    dropped.sort();
    let mut unique = dropped.clone();
    unique.dedup();
    assert_eq!(dropped, unique, "an id was dropped twice: {dropped:?}");
    assert!(dropped.starts_with(&[0, 1, 2, 3]), "{dropped:?}");
    assert!(!dropped.contains(&100) && !dropped.contains(&101));
}
