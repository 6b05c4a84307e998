//! treevalue's `func_treelize` (seed 004) as `Treelize`: the modes strict,
//! inner, outer and left on nested `BTreeMap` trees whose keys differ at two
//! levels (the seed's figure 2: `t1` lacks `b`, `t2` lacks `x.c`), the
//! `missing` value and generator, and `inherit`.

mod figure_two;

use std::collections::{BTreeMap, HashMap};

use pytree_std::{treelize::mode, treelize::Treelize, ErrorKind};

type Tree = BTreeMap<&'static str, BTreeMap<&'static str, u64>>;

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

fn tree<const N: usize>(entries: [(&'static str, Vec<(&'static str, u64)>); N]) -> Tree {
    entries
        .into_iter()
        .map(|(k, sub)| (k, sub.into_iter().collect()))
        .collect()
}

/// Figure 2: `t1` has no `b`, `t2` has no `x.c`.
fn t1() -> Tree {
    tree([("a", vec![("v", 2)]), ("x", vec![("c", 4), ("d", 9)])])
}

fn t2() -> Tree {
    tree([
        ("a", vec![("v", 4)]),
        ("b", vec![("v", 48)]),
        ("x", vec![("d", 54)]),
    ])
}

/// gcd of `$a` and `$b` (references) as a [`Tree`], by a `Treelize` set
/// up by the calls `$with`.
macro_rules! gcd_of {
    ($a:expr, $b:expr $(, $($with:tt)*)?) => {
        Treelize::new(|a: &u64, b: &u64| gcd(*a, *b))
            $($($with)*)?
            .call2::<_, _, _, Tree>($a, $b)
            .unwrap()
    };
}

#[test]
fn strict_mode_applies_the_function_to_matching_leaves() {
    let full1 = tree([("a", vec![("v", 2)]), ("x", vec![("c", 4), ("d", 9)])]);
    let full2 = tree([("a", vec![("v", 4)]), ("x", vec![("c", 6), ("d", 54)])]);
    assert_eq!(
        gcd_of!(&full1, &full2),
        tree([("a", vec![("v", 2)]), ("x", vec![("c", 2), ("d", 9)])])
    );
}

#[test]
fn strict_mode_reports_every_missing_key_with_its_path() {
    let mut tgcd = Treelize::new(|a: &u64, b: &u64| gcd(*a, *b)).mode(mode::Strict);
    let err = tgcd.call2::<_, _, _, Tree>(&t1(), &t2()).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Mismatches(all) if all.len() == 2));
    assert_eq!(err.to_string(), figure_two::STRICT_ERROR);
}

#[test]
fn inner_mode_keeps_only_keys_present_in_every_tree() {
    // Figure 3: t1.x.c and t2.b are dropped.
    assert_eq!(
        gcd_of!(&t1(), &t2(), .mode(mode::Inner)),
        tree([("a", vec![("v", 2)]), ("x", vec![("d", 9)])])
    );
}

#[test]
fn outer_mode_fills_absent_leaves_with_the_missing_value() {
    // Figure 4: t1.b.v and t2.x.c become 1.
    assert_eq!(
        gcd_of!(&t1(), &t2(), .mode(mode::Outer).missing(1)),
        tree([
            ("a", vec![("v", 2)]),
            ("b", vec![("v", 1)]),
            ("x", vec![("c", 1), ("d", 9)]),
        ])
    );
}

#[test]
fn outer_mode_without_missing_names_the_path_and_the_missing_key() {
    let mut tgcd = Treelize::new(|a: &u64, b: &u64| gcd(*a, *b)).mode(mode::Outer);
    let err = tgcd.call2::<_, _, _, Tree>(&t1(), &t2()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree structures differ (2 mismatches found)\n  \
         tree 0 at <root>: map key mismatch; expected key(s): [\"a\", \"b\", \"x\"], \
         got key(s): [\"a\", \"x\"], missing key(s): [\"b\"]\n  \
         tree 1 at [\"x\"]: map key mismatch; expected key(s): [\"c\", \"d\"], \
         got key(s): [\"d\"], missing key(s): [\"c\"]"
    );
}

#[test]
fn left_mode_follows_the_keys_of_the_first_tree() {
    // Figure 5: gcd(t1, t2) ignores t2.b, fills t2.x.c with 1.
    let mut tgcd = Treelize::new(|a: &u64, b: &u64| gcd(*a, *b))
        .mode(mode::Left)
        .missing(1);
    let r: Tree = tgcd.call2(&t1(), &t2()).unwrap();
    assert_eq!(
        r,
        tree([("a", vec![("v", 2)]), ("x", vec![("c", 1), ("d", 9)])])
    );
    // Figure 6: gcd(t2, t1) ignores t1.x.c, fills t1.b.v with 1.
    let r: Tree = tgcd.call2(&t2(), &t1()).unwrap();
    assert_eq!(
        r,
        tree([
            ("a", vec![("v", 2)]),
            ("b", vec![("v", 1)]),
            ("x", vec![("d", 9)])
        ])
    );
}

#[test]
fn left_mode_loses_commutativity() {
    let mut first = Treelize::new(|a: &u64, _: &u64| *a)
        .mode(mode::Left)
        .missing(0);
    let ab: Tree = first.call2(&t1(), &t2()).unwrap();
    let ba: Tree = first.call2(&t2(), &t1()).unwrap();
    assert_ne!(
        pytree_std::structure(&ab),
        pytree_std::structure(&ba),
        "the result takes the first tree's keys"
    );
}

#[test]
fn a_missing_generator_is_called_once_per_missing_slot() {
    let mut stamps = 0u64;
    let mut pair = Treelize::new(|a: &u64, b: &u64| a * 1000 + b)
        .mode(mode::Outer)
        .missing_with(|| {
            stamps += 1;
            stamps
        });
    let r: Tree = pair.call2(&t1(), &t2()).unwrap();
    assert_eq!(stamps, 2, "t1 lacks b.v, t2 lacks x.c");
    // Each slot got its own fresh value (1, then 2, in pre-order).
    assert_eq!(r["b"]["v"], 1000 + 48);
    assert_eq!(r["x"]["c"], 4 * 1000 + 2);
}

#[test]
fn outer_mode_sums_three_trees_with_zero_for_absent_keys() {
    // Figure 9: total(t1, t2, t3) with missing=0.
    let t3 = tree([("b", vec![("v", 7)]), ("y", vec![("e", 1)])]);
    let mut total = Treelize::new(|a: &u64, b: &u64, c: &u64| a + b + c)
        .mode(mode::Outer)
        .missing(0);
    let r: Tree = total.call3(&t1(), &t2(), &t3).unwrap();
    assert_eq!(
        r,
        tree([
            ("a", vec![("v", 6)]),
            ("b", vec![("v", 55)]),
            ("x", vec![("c", 4), ("d", 63)]),
            ("y", vec![("e", 1)]),
        ])
    );
}

#[test]
fn inherit_applies_a_plain_value_to_every_leaf_of_a_tree() {
    // Figure 8: gcd(100, t1).
    assert_eq!(
        gcd_of!(&100u64, &t1()),
        tree([("a", vec![("v", 2)]), ("x", vec![("c", 4), ("d", 1)])])
    );
}

#[test]
fn inherit_applies_a_leaf_of_one_tree_to_a_subtree_of_another() {
    // Figure 7: t2.x is the value 6 where t1.x is a subtree.
    let t2: BTreeMap<&str, u64> = BTreeMap::from([("a", 4), ("x", 6)]);
    assert_eq!(
        gcd_of!(&t1(), &t2),
        tree([("a", vec![("v", 2)]), ("x", vec![("c", 2), ("d", 3)])])
    );
}

#[test]
fn without_inherit_a_leaf_against_a_subtree_is_an_error() {
    let mut tgcd = Treelize::new(|a: &u64, b: &u64| gcd(*a, *b)).inherit(false);
    let err = tgcd.call2::<_, _, _, Tree>(&100u64, &t1()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at <root>: node mismatch: expected a leaf, found a map of 2 entries"
    );
    let t2: BTreeMap<&str, u64> = BTreeMap::from([("a", 4), ("x", 6)]);
    let err = tgcd.call2::<_, _, _, Tree>(&t1(), &t2).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree structures differ (2 mismatches found)\n  \
         tree 1 at [\"a\"]: node mismatch: expected a map of 1 entries, found a leaf\n  \
         tree 1 at [\"x\"]: node mismatch: expected a map of 2 entries, found a leaf"
    );
}

#[test]
fn plain_values_mix_with_trees_of_other_leaf_types() {
    let weights: BTreeMap<&str, f32> = BTreeMap::from([("w", 0.5), ("b", 2.0)]);
    let counts: BTreeMap<&str, u8> = BTreeMap::from([("w", 4), ("b", 1)]);
    let mut scale = Treelize::new(|w: &f32, n: &u8, k: &f64| f64::from(*w) * f64::from(*n) * k);
    let r: BTreeMap<&str, f64> = scale.call3(&weights, &counts, &10.0).unwrap();
    assert_eq!(r, BTreeMap::from([("w", 20.0), ("b", 20.0)]));
}

#[test]
fn the_function_may_return_a_subtree() {
    let mut halve = Treelize::new(|x: &u64| if x & 1 == 0 { Some(x / 2) } else { None });
    let r: BTreeMap<&str, BTreeMap<&str, Option<u64>>> = halve.call1(&t1()).unwrap();
    assert_eq!(r["x"], BTreeMap::from([("c", Some(2)), ("d", None)]));
}

type Holes = BTreeMap<&'static str, Option<u64>>;

fn holes() -> (Holes, Holes) {
    (
        BTreeMap::from([("a", Some(1)), ("b", None)]),
        BTreeMap::from([("a", None), ("b", Some(2))]),
    )
}

#[test]
fn options_follow_the_modes_like_map_keys() {
    let (h1, h2) = holes();
    let add = |a: &u64, b: &u64| a + b;
    let err = Treelize::new(add)
        .call2::<_, _, _, Holes>(&h1, &h2)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree structures differ (2 mismatches found)\n  \
         tree 1 at [\"a\"]: node mismatch: expected Some(_), found None\n  \
         tree 1 at [\"b\"]: node mismatch: expected None, found Some(_)"
    );
    let inner: Holes = Treelize::new(add)
        .mode(mode::Inner)
        .call2(&h1, &h2)
        .unwrap();
    assert_eq!(inner, BTreeMap::from([("a", None), ("b", None)]));
    let outer: Holes = Treelize::new(add)
        .mode(mode::Outer)
        .missing(10)
        .call2(&h1, &h2)
        .unwrap();
    assert_eq!(outer, BTreeMap::from([("a", Some(11)), ("b", Some(12))]));
    let left: Holes = Treelize::new(add)
        .mode(mode::Left)
        .missing(10)
        .call2(&h1, &h2)
        .unwrap();
    assert_eq!(left, BTreeMap::from([("a", Some(11)), ("b", None)]));
}

#[test]
fn hash_maps_line_up_by_key_like_btree_maps() {
    let a: HashMap<String, i32> = [("x".into(), 1), ("y".into(), 2), ("z".into(), 3)].into();
    let b: HashMap<String, i32> = [("z".into(), 30), ("x".into(), 10)].into();
    let mut add = Treelize::new(|a: &i32, b: &i32| a + b).mode(mode::Inner);
    let r: HashMap<String, i32> = add.call2(&a, &b).unwrap();
    assert_eq!(r, [("x".into(), 11), ("z".into(), 33)].into());
    let mut add = Treelize::new(|a: &i32, b: &i32| a + b)
        .mode(mode::Outer)
        .missing(0);
    let r: BTreeMap<String, i32> = add.call2(&a, &b).unwrap();
    assert_eq!(
        r,
        BTreeMap::from([("x".into(), 11), ("y".into(), 2), ("z".into(), 33)])
    );
}

#[test]
fn sequences_must_match_in_every_mode() {
    let mut add = Treelize::new(|a: &i32, b: &i32| a + b)
        .mode(mode::Outer)
        .missing(0);
    let err = add
        .call2::<_, _, _, Vec<i32>>(&vec![1, 2], &vec![1])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at <root>: sequence length mismatch: expected 2, found 1"
    );
}

#[test]
fn long_sequences_line_up_leaf_by_leaf() {
    let xs: Vec<i64> = (0..10_000).collect();
    let ys: Vec<i64> = (0..10_000).map(|x| x * 2).collect();
    let mut add = Treelize::new(|a: &i64, b: &i64, c: &i64| a + b + c);
    let r: Vec<i64> = add.call3(&xs, &ys, &1i64).unwrap();
    assert_eq!(r.len(), 10_000);
    assert!(r.iter().enumerate().all(|(i, v)| *v == 3 * i as i64 + 1));
    // Runs of leaves next to subtrees, in both trees.
    let a = (vec![1, 2], vec![vec![3], vec![4, 5]], 6);
    let b = (vec![10, 20], vec![vec![30], vec![40, 50]], 60);
    let mut add = Treelize::new(|a: &i32, b: &i32| a + b);
    let r: (Vec<i32>, Vec<Vec<i32>>, i32) = add.call2(&a, &b).unwrap();
    assert_eq!(r, (vec![11, 22], vec![vec![33], vec![44, 55]], 66));
}
