//! Map entries pair by key, whatever their order: the dynamic `Tree`'s maps
//! keep insertion order (keys erased without an order), so two trees may
//! list the same keys in different orders. Every operation that lines up
//! several trees (`Treelize`, prefix trees, `subside`) pairs their entries by
//! key and never mixes up leaves; a merged map lists the first tree's keys,
//! then the keys new in later trees in their order. Sorted maps
//! (`BTreeMap`) stay sorted.

use std::collections::BTreeMap;

use pytree_std::{tree, treelize::mode, treelize::Treelize, Tree};

#[test]
fn treelize_pairs_entries_by_key_at_every_level() {
    let a: Tree<i32> = tree! { "p" => 1, "q" => { "r" => 2, "s" => [3, 4] }, "t" => 5 };
    let b: Tree<i32> = tree! { "t" => 50, "q" => { "s" => [30, 40], "r" => 20 }, "p" => 10 };
    let mut add = Treelize::new(|x: &i32, y: &i32| x + y);
    let r: Tree<i32> = add.call2(&a, &b).unwrap();
    assert_eq!(
        format!("{r:?}"),
        r#"{"p": 11, "q": {"r": 22, "s": [33, 44]}, "t": 55}"#
    );
    let r: Tree<i32> = add.call2(&b, &a).unwrap();
    assert_eq!(
        format!("{r:?}"),
        r#"{"t": 55, "q": {"s": [33, 44], "r": 22}, "p": 11}"#
    );
}

#[test]
fn outer_mode_lists_the_first_trees_keys_then_the_new_ones() {
    let a: Tree<i32> = tree! { "z" => 1, "m" => 2 };
    let b: Tree<i32> = tree! { "k" => 10, "m" => 20, "a" => 30 };
    let c: Tree<i32> = tree! { "b" => 100, "z" => 200 };
    let mut total = Treelize::new(|x: &i32, y: &i32, z: &i32| x + y + z)
        .mode(mode::Outer)
        .missing(0);
    let r: Tree<i32> = total.call3(&a, &b, &c).unwrap();
    assert_eq!(
        format!("{r:?}"),
        r#"{"z": 201, "m": 22, "k": 10, "a": 30, "b": 100}"#
    );
}

#[test]
fn sorted_maps_stay_sorted_when_key_sets_merge() {
    let a = BTreeMap::from([("z", 1), ("m", 2)]);
    let b = BTreeMap::from([("k", 10), ("a", 30)]);
    let mut add = Treelize::new(|x: &i32, y: &i32| x + y)
        .mode(mode::Outer)
        .missing(0);
    let r: Tree<i32> = add.call2(&a, &b).unwrap();
    assert_eq!(format!("{r:?}"), r#"{"a": 30, "k": 10, "m": 2, "z": 1}"#);
}

#[test]
fn a_wide_map_in_reverse_order_pairs_every_key() {
    let n = 2_000;
    let a: Tree<usize> = Tree::dict((0..n).map(|k| (format!("k{k}"), Tree::leaf(k))));
    let b: Tree<usize> = Tree::dict((0..n).rev().map(|k| (format!("k{k}"), Tree::leaf(10 * k))));
    let mut check = Treelize::new(|x: &usize, y: &usize| y == &(10 * x));
    let r: Tree<bool> = check.call2(&a, &b).unwrap();
    assert_eq!(r.len(), n);
    assert!(pytree_std::leaves(&r).into_iter().all(|ok| *ok));
}

/// `levels` nested maps, each `{"leaf": depth, "next": ...}`, with the
/// keys in that order or reversed.
fn deep(levels: u32, reversed: bool) -> Tree<u32> {
    let mut t = Tree::leaf(levels);
    for depth in (0..levels).rev() {
        let entries = [("leaf", Tree::leaf(depth)), ("next", t)];
        t = if reversed {
            let [x, y] = entries;
            Tree::dict([y, x])
        } else {
            Tree::dict(entries)
        };
    }
    t
}

#[test]
fn deep_trees_with_keys_reversed_at_every_level_line_up() {
    // Out-of-order maps are read through a skip table, so each level jumps
    // over the deep sibling instead of re-reading it, and nothing recurses.
    let levels = 100_000;
    let (a, b) = (deep(levels, false), deep(levels, true));
    let mut same = Treelize::new(|x: &u32, y: &u32| x == y);
    let r: Tree<bool> = same.call2(&a, &b).unwrap();
    assert_eq!(r.num_leaves(), levels as usize + 1);
    assert!(pytree_std::leaves(&r).into_iter().all(|ok| *ok));
    assert_eq!(
        r.as_map().unwrap().keys().collect::<Vec<_>>(),
        ["leaf", "next"]
    );
}

#[test]
fn flatten_up_to_takes_each_subtree_from_its_own_key() {
    let prefix: Tree<u8> = tree! { "a" => 0, "b" => 0 };
    let full: Tree<i32> = tree! { "b" => [1, 2], "a" => [3] };
    let subs = pytree_std::nested::flatten_up_to(&pytree_std::structure(&prefix), full).unwrap();
    // One subtree per prefix leaf, in the prefix's order.
    assert_eq!(subs[0].leaves(), [3]);
    assert_eq!(subs[1].leaves(), [1, 2]);
}

#[test]
fn broadcast_places_each_prefix_leaf_under_its_own_key() {
    let prefix: Tree<u8> = tree! { "a" => 1, "b" => 2 };
    let full: Tree<i32> = tree! { "b" => [10, 20], "a" => [30] };
    // One value per leaf of `full`, in `full`'s order.
    assert_eq!(
        pytree_std::generic::prefix::broadcast_prefix::<pytree_std::Std, _, _>(&prefix, &full)
            .unwrap(),
        [&2, &2, &1]
    );
    let spelled: Tree<u8> = pytree_std::nested::broadcast(&prefix, &full).unwrap();
    assert_eq!(format!("{spelled:?}"), r#"{"b": [2, 2], "a": [1]}"#);
}

#[test]
fn map_prefix_and_map_with_prefix_pair_by_key() {
    let prefix: Tree<i32> = tree! { "a" => 1, "b" => 2 };
    let full: Tree<i32> = tree! { "b" => [10, 20], "a" => [30] };
    let sums: Tree<i32> =
        pytree_std::generic::prefix::map_prefix::<pytree_std::Std, _, _, _, _, _>(
            &prefix,
            &full,
            |p, sub| p * sub.leaves().iter().copied().sum::<i32>(),
        )
        .unwrap();
    assert_eq!(format!("{sums:?}"), r#"{"a": 30, "b": 60}"#);
    let scaled: Tree<i32> =
        pytree_std::nested::map_with_prefix(&full, &prefix, |x, p| x * p).unwrap();
    assert_eq!(format!("{scaled:?}"), r#"{"b": [20, 40], "a": [30]}"#);
}

#[test]
fn stack_pairs_entries_by_key_and_keeps_the_first_trees_order() {
    let a: Tree<i32> = tree! { "x" => 1, "y" => [2, 3] };
    let b: Tree<i32> = tree! { "y" => [20, 30], "x" => 10 };
    let s: Tree<i32> = pytree_std::nested::subside([a.clone(), b]).unwrap();
    assert_eq!(
        format!("{s:?}"),
        r#"{"x": [1, 10], "y": [[2, 20], [3, 30]]}"#
    );
    let back: Vec<Tree<i32>> = pytree_std::nested::rise(s).unwrap();
    assert_eq!(back[0], a);
    assert_eq!(format!("{:?}", back[1]), r#"{"x": 10, "y": [20, 30]}"#);
}
