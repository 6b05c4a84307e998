//! treevalue parity: the walk-through of `func_treelize` in seed 004, run
//! on dynamic `Tree`s with `Treelize`, `subside`, `rise` and `unflatten_pairs`. The
//! seed's printed results are compared as treevalue prints them (the ascii
//! `Display` of `Tree`); where the seed only describes a result (its
//! figures), the test spells the described result out.
//!
//! Map entries pair by key, whatever their order in each tree; a merged map
//! lists the first tree's keys, then keys new in later trees.

mod figure_two;

use std::cell::RefCell;

use pytree_std::{tree, treelize::mode, treelize::Treelize, ErrorKind, Tree};

/// The seed's `gcd`, loop for loop.
fn gcd(mut a: i64, mut b: i64) -> i64 {
    loop {
        let r = a % b;
        (a, b) = (b, r);
        if r == 0 {
            return a;
        }
    }
}

/// The seed's `t1` and `t2`.
fn t1() -> Tree<i64> {
    tree! { "a" => 2, "b" => 30, "x" => { "c" => 4, "d" => 9 } }
}

fn t2() -> Tree<i64> {
    tree! { "a" => 4, "b" => 48, "x" => { "c" => 6, "d" => 54 } }
}

/// Figure 2: `t1` without `b`, `t2` without `x.c`.
fn fig2_t1() -> Tree<i64> {
    tree! { "a" => 2, "x" => { "c" => 4, "d" => 9 } }
}

fn fig2_t2() -> Tree<i64> {
    tree! { "a" => 4, "b" => 48, "x" => { "d" => 54 } }
}

#[test]
fn gcd_of_plain_values_is_a_plain_value() {
    // gcd(9, 12)  # gcd 9 12  -> 3
    let calls = RefCell::new(Vec::new());
    let mut tgcd = Treelize::new(|a: &i64, b: &i64| {
        calls.borrow_mut().push((*a, *b));
        gcd(*a, *b)
    });
    let r: i64 = tgcd.call2(&9i64, &12i64).unwrap();
    assert_eq!(r, 3);
    assert_eq!(calls.into_inner(), [(9, 12)]);
}

#[test]
fn gcd_of_two_trees_prints_as_in_the_seed() {
    let calls = RefCell::new(Vec::new());
    let mut tgcd = Treelize::new(|a: &i64, b: &i64| {
        calls.borrow_mut().push((*a, *b));
        gcd(*a, *b)
    });
    let r: Tree<i64> = tgcd.call2(&t1(), &t2()).unwrap();
    assert_eq!(
        r.to_string(),
        "├── a --> 2\n\
         ├── b --> 6\n\
         └── x\n    \
             ├── c --> 2\n    \
             └── d --> 9"
    );
    // The seed prints `gcd 30 48`, `gcd 9 54`, `gcd 4 6`, `gcd 2 4`: one
    // call per pair of leaves (treevalue's order is its own; ours is the
    // trees' pre-order).
    assert_eq!(calls.into_inner(), [(2, 4), (30, 48), (4, 6), (9, 54)]);
}

#[test]
fn entries_pair_by_key_whatever_their_order() {
    let shuffled: Tree<i64> = tree! { "x" => { "d" => 54, "c" => 6 }, "b" => 48, "a" => 4 };
    let mut tgcd = Treelize::new(|a: &i64, b: &i64| gcd(*a, *b));
    let r: Tree<i64> = tgcd.call2(&t1(), &shuffled).unwrap();
    assert_eq!(
        r,
        tree! { "a" => 2, "b" => 6, "x" => { "c" => 2, "d" => 9 } }
    );
    // The result lists the keys in the first tree's order.
    assert_eq!(
        r.to_string(),
        tgcd.call2::<_, _, _, Tree<i64>>(&t1(), &t2())
            .unwrap()
            .to_string()
    );
    let back: Tree<i64> = tgcd.call2(&shuffled, &t1()).unwrap();
    assert_eq!(
        back.to_string(),
        "├── x\n\
         │   ├── d --> 9\n\
         │   └── c --> 2\n\
         ├── b --> 6\n\
         └── a --> 2"
    );
}

/// gcd of trees `$a` and `$b` by a `Treelize` set up by the calls `$with`,
/// as text.
macro_rules! gcd_in {
    ($a:expr, $b:expr, $($with:tt)*) => {
        Treelize::new(|a: &i64, b: &i64| gcd(*a, *b))
            $($with)*
            .call2::<_, _, _, Tree<i64>>(&$a, &$b)
            .unwrap()
            .to_string()
    };
}

#[test]
fn strict_mode_names_the_missing_keys_of_figure_two() {
    let mut tgcd = Treelize::new(|a: &i64, b: &i64| gcd(*a, *b)).mode(mode::Strict);
    let err = tgcd
        .call2::<_, _, _, Tree<i64>>(&fig2_t1(), &fig2_t2())
        .unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Mismatches(all) if all.len() == 2));
    assert_eq!(err.to_string(), figure_two::STRICT_ERROR);
}

#[test]
fn inner_mode_drops_the_keys_one_tree_lacks_as_in_figure_three() {
    // t1.x.c and t2.b are ignored because t2.x.c and t1.b are missing.
    assert_eq!(
        gcd_in!(fig2_t1(), fig2_t2(), .mode(mode::Inner)),
        "├── a --> 2\n\
         └── x\n    \
             └── d --> 9"
    );
}

#[test]
fn outer_mode_fills_the_missing_keys_with_one() {
    // t1.b and t2.x.c are missing: the default value 1 stands in.
    // First tree's keys, then `b`, which only the second tree has.
    assert_eq!(
        gcd_in!(fig2_t1(), fig2_t2(), .mode(mode::Outer).missing(1)),
        "├── a --> 2\n\
         ├── x\n\
         │   ├── c --> 1\n\
         │   └── d --> 9\n\
         └── b --> 1"
    );
}

#[test]
fn left_mode_follows_the_first_tree_as_in_figure_five() {
    // gcd(t1, t2): t2.b is ignored (t1 has no b), t2.x.c takes the value 1.
    assert_eq!(
        gcd_in!(fig2_t1(), fig2_t2(), .mode(mode::Left).missing(1)),
        "├── a --> 2\n\
         └── x\n    \
             ├── c --> 1\n    \
             └── d --> 9"
    );
}

#[test]
fn left_mode_follows_the_first_tree_as_in_figure_six() {
    // gcd(t2, t1): t1.x.c is ignored (t2 has no x.c), t1.b takes the value 1.
    assert_eq!(
        gcd_in!(fig2_t2(), fig2_t1(), .mode(mode::Left).missing(1)),
        "├── a --> 2\n\
         ├── b --> 1\n\
         └── x\n    \
             └── d --> 9"
    );
}

#[test]
fn inherit_broadcasts_a_leaf_over_the_other_trees_subtree() {
    // Figure 7: t2.x is a plain 6; t2.x.c and t2.x.d inherit it.
    let t2: Tree<i64> = tree! { "a" => 4, "b" => 48, "x" => 6 };
    let mut tgcd = Treelize::new(|a: &i64, b: &i64| gcd(*a, *b));
    let r: Tree<i64> = tgcd.call2(&t1(), &t2).unwrap();
    assert_eq!(
        r,
        tree! { "a" => 2, "b" => 6, "x" => { "c" => 2, "d" => 3 } }
    );
}

#[test]
fn inherit_broadcasts_a_plain_value_over_a_whole_tree() {
    // Figure 8: gcd(100, t1), 100 is every leaf of the first tree.
    let mut tgcd = Treelize::new(|a: &i64, b: &i64| gcd(*a, *b));
    let r: Tree<i64> = tgcd.call2(&100i64, &t1()).unwrap();
    assert_eq!(
        r,
        tree! { "a" => 2, "b" => 10, "x" => { "c" => 4, "d" => 1 } }
    );
}

#[test]
fn without_inherit_a_value_against_a_subtree_is_an_error() {
    let mut tgcd = Treelize::new(|a: &i64, b: &i64| gcd(*a, *b)).inherit(false);
    let t2: Tree<i64> = tree! { "a" => 4, "b" => 48, "x" => 6 };
    let err = tgcd.call2::<_, _, _, Tree<i64>>(&t1(), &t2).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at [\"x\"]: node mismatch: expected a map of 2 entries, found a leaf"
    );
    let err = tgcd
        .call2::<_, _, _, Tree<i64>>(&100i64, &t1())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at <root>: node mismatch: expected a leaf, found a map of 3 entries"
    );
}

#[test]
fn a_missing_generator_gives_each_slot_a_fresh_vector() {
    // The seed's `append(arr, *args)` with `missing=lambda: []`: each slot
    // an argument lacks gets a new, empty list, so no list collects the
    // items of another slot.
    let t0: Tree<Vec<i64>> = tree! { "a" => (vec![1]), "x" => { "c" => (vec![]) } };
    let t1: Tree<Vec<i64>> = tree! { "a" => (vec![2]), "b" => (vec![3]) };
    let t2: Tree<Vec<i64>> =
        tree! { "b" => (vec![4]), "x" => { "c" => (vec![5]), "d" => (vec![6]) } };
    let generated = RefCell::new(0);
    let mut append = Treelize::new(|arr: &Vec<i64>, xs: &Vec<i64>, ys: &Vec<i64>| {
        let mut arr = arr.clone();
        arr.extend(xs.iter().chain(ys).copied());
        arr
    })
    .mode(mode::Outer)
    .missing_with(|| {
        *generated.borrow_mut() += 1;
        Vec::new()
    });
    // Each returned vector is a sequence of the result.
    let mut r: Tree<i64> = append.call3(&t0, &t1, &t2).unwrap();
    assert_eq!(
        r,
        tree! {
            "a" => [1, 2],
            "x" => { "c" => [5], "d" => [6] },
            "b" => [3, 4],
        }
    );
    // Missing slots: t2.a, t1.x.c, t0.x.d, t1.x.d, t0.b: one vector each.
    assert_eq!(*generated.borrow(), 5);
    // Results own their vectors: growing one leaves the others alone.
    r["b"].as_seq_mut().unwrap().push(Tree::leaf(7));
    assert_eq!(r["x"]["d"], tree!([6]));
    assert_eq!(r["b"], tree!([3, 4, 7]));
}

#[test]
fn total_sums_three_trees_with_zero_for_missing_keys() {
    // The seed's `total(*args)` with mode outer and missing 0.
    let t1: Tree<i64> = tree! { "a" => 1, "x" => { "c" => 3 } };
    let t2: Tree<i64> = tree! { "a" => 10, "b" => 20 };
    let t3: Tree<i64> = tree! { "b" => 100, "x" => { "d" => 400, "c" => 300 } };
    let mut total = Treelize::new(|a: &i64, b: &i64, c: &i64| a + b + c)
        .mode(mode::Outer)
        .missing(0);
    let r: Tree<i64> = total.call3(&t1, &t2, &t3).unwrap();
    assert_eq!(
        r.to_string(),
        "├── a --> 11\n\
         ├── x\n\
         │   ├── c --> 303\n\
         │   └── d --> 400\n\
         └── b --> 120"
    );
}

/// The seed's `check`: the first position where `target` holds, and how
/// many positions it holds at.
fn check(arr: &[i64], target: impl Fn(i64) -> bool) -> (Option<usize>, usize) {
    let mut position = None;
    let mut cnt = 0;
    for (i, &item) in arr.iter().enumerate() {
        if target(item) {
            position.get_or_insert(i);
            cnt += 1;
        }
    }
    (position, cnt)
}

#[test]
fn check_subsides_a_list_of_trees_and_rises_a_pair_of_trees() {
    let t1 = tree! { "a" => 2, "b" => 4, "x" => { "c" => 7, "d" => 9 } };
    let t2 = tree! { "a" => 4, "b" => 48, "x" => { "c" => 2, "d" => 53 } };
    // Keys in another order pair by key all the same.
    let t3 = tree! { "x" => { "d" => 7, "c" => 3 }, "b" => -12, "a" => 9 };
    let def = pytree_std::structure(&t1);
    // subside: a list of trees becomes one tree of lists
    let stacked: Tree<i64> = pytree_std::nested::subside([t1, t2, t3]).unwrap();
    assert_eq!(stacked["x"]["c"], tree!([7, 2, 3]));
    // check runs once per place, on the list of values there
    let results = pytree_std::nested::flatten_up_to(&def, stacked)
        .unwrap()
        .into_iter()
        .map(|column| check(column.leaves(), |x| x % 2 == 0));
    // unflatten_pairs: the (position, count) pairs become two trees
    let (tr1, tr2): (Tree<usize>, Tree<usize>) =
        pytree_std::generic::transpose::unflatten_pairs::<pytree_std::Std, _, _, _, _>(
            &def, results,
        )
        .unwrap();
    assert_eq!(
        tr1.to_string(),
        "├── a --> 0\n\
         ├── b --> 0\n\
         └── x\n    \
             ├── c --> 1\n    \
             └── d --> None"
    );
    assert_eq!(
        tr2.to_string(),
        "├── a --> 2\n\
         ├── b --> 3\n\
         └── x\n    \
             ├── c --> 1\n    \
             └── d --> 0"
    );
}

#[test]
fn subside_then_rise_gives_the_trees_back() {
    // The seed's torch.stack / torch.split example, with lists for tensors.
    let trees: Vec<Tree<i64>> = (0..10)
        .map(|k| tree! { "a" => k, "b" => (10 + k), "x" => { "c" => (20 + k) } })
        .collect();
    let st: Tree<i64> = pytree_std::nested::subside(trees.clone()).unwrap();
    assert_eq!(st["a"], (0..10).map(Tree::leaf).collect::<Tree<i64>>());
    let splitted: Vec<Tree<i64>> = pytree_std::nested::rise(st).unwrap();
    assert_eq!(splitted, trees);
}

#[test]
fn subsiding_trees_whose_keys_differ_names_the_keys() {
    let a = tree! { "a" => 1, "x" => { "c" => 2 } };
    let b = tree! { "a" => 1, "x" => { "d" => 2 } };
    let err = pytree_std::nested::subside::<_, Tree<i64>>([a, b]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at [\"x\"]: map key mismatch; expected key(s): [\"c\"], got key(s): [\"d\"], \
         missing key(s): [\"c\"], extra key(s): [\"d\"]"
    );
}
