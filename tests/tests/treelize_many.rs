//! `Treelize` over any number of trees of one type: `call_n` (an array of
//! trees, `f` gets an array of leaves) and `call_many` (any iterator of
//! trees, `f` gets a slice), optree's `tree_broadcast_map(f, *trees)`, on
//! typed trees and on `Tree<L>`.

mod shaped;

use std::collections::BTreeMap;

use pytree_std::{tree, treelize::mode, treelize::Treelize, ErrorKind, PyTree, Tree};
use shaped::{v, Vector};

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Linear<T> {
    w: T,
    b: T,
}

fn lin(w: f64, b: f64) -> Linear<f64> {
    Linear { w, b }
}

#[test]
fn call_n_applies_f_to_an_array_of_leaves() {
    let mut mean = Treelize::new(|xs: [&f64; 4]| xs.iter().copied().sum::<f64>() / 4.0);
    let r: Linear<f64> = mean
        .call_n([
            &lin(1.0, 0.0),
            &lin(2.0, 0.0),
            &lin(3.0, 4.0),
            &lin(6.0, 4.0),
        ])
        .unwrap();
    assert_eq!(r, lin(3.0, 2.0));
}

#[test]
fn call_many_takes_a_list_known_at_run_time() {
    let models: Vec<Linear<f64>> = (0..10).map(|i| lin(i as f64, 1.0)).collect();
    let mut total = Treelize::new(|xs: &[&f64]| xs.iter().copied().sum::<f64>());
    let r: Linear<f64> = total.call_many(&models).unwrap();
    assert_eq!(r, lin(45.0, 10.0));
    // The same function over a slice of references, in another order.
    let refs: Vec<&Linear<f64>> = models.iter().rev().collect();
    let mut first = Treelize::new(|xs: &[&f64]| *xs[0]);
    let r: Linear<f64> = first.call_many(refs.iter().copied()).unwrap();
    assert_eq!(r, lin(9.0, 1.0));
}

#[test]
fn call_many_of_no_tree_is_an_error_not_a_guess() {
    let mut total = Treelize::new(|xs: &[&f64]| xs.iter().copied().sum::<f64>());
    let err = total
        .call_many::<Linear<f64>, _, Linear<f64>>(&[])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "at <root>: a treelized function needs at least one tree: the result's structure is unknown"
    );
}

#[test]
fn the_modes_and_missing_values_work_as_for_call2() {
    let t = |pairs: &[(&'static str, i32)]| pairs.iter().copied().collect::<BTreeMap<_, _>>();
    let trees = [
        t(&[("a", 1), ("b", 2)]),
        t(&[("b", 10), ("c", 20)]),
        t(&[("b", 100)]),
    ];
    let mut outer = Treelize::new(|xs: &[&i32]| xs.iter().copied().sum::<i32>())
        .mode(mode::Outer)
        .missing(0);
    let r: BTreeMap<&str, i32> = outer.call_many(&trees).unwrap();
    assert_eq!(r, t(&[("a", 1), ("b", 112), ("c", 20)]));
    let mut inner =
        Treelize::new(|xs: [&i32; 3]| xs.iter().copied().sum::<i32>()).mode(mode::Inner);
    let r: BTreeMap<&str, i32> = inner.call_n([&trees[0], &trees[1], &trees[2]]).unwrap();
    assert_eq!(r, t(&[("b", 112)]));
    let mut strict = Treelize::new(|xs: &[&i32]| *xs[0]);
    let err = strict
        .call_many::<_, _, BTreeMap<&str, i32>>(&trees)
        .unwrap_err();
    let ErrorKind::Mismatches(all) = err.kind() else {
        panic!("{err}")
    };
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].tree_index(), Some(1));
    assert_eq!(all[1].tree_index(), Some(2));
}

#[test]
fn trees_of_one_type_may_be_plain_values() {
    let mut product = Treelize::new(|xs: [&f64; 2]| xs[0] * xs[1]);
    let r: Linear<f64> = product.call_n([&lin(1.0, 2.0), &lin(3.0, 4.0)]).unwrap();
    assert_eq!(r, lin(3.0, 8.0));
    let r: f64 = product.call_n([&2.0, &3.0]).unwrap();
    assert_eq!(r, 6.0);
}

#[test]
fn dynamic_trees_pair_by_key_and_outer_mode_merges_their_keys() {
    let runs: Vec<Tree<i64>> = vec![
        tree! { "loss" => 4, "acc" => { "top1" => 1, "top5" => 2 } },
        tree! { "acc" => { "top5" => 4, "top1" => 3 }, "loss" => 2 },
        tree! { "loss" => 0, "lr" => 7 },
    ];
    let mut sum = Treelize::new(|xs: &[&i64]| xs.iter().copied().sum::<i64>())
        .mode(mode::Outer)
        .missing(0);
    let r: Tree<i64> = sum.call_many(&runs).unwrap();
    assert_eq!(
        format!("{r:?}"),
        r#"{"loss": 6, "acc": {"top1": 4, "top5": 6}, "lr": 7}"#
    );
    // An inherited leaf: `acc` as one number in the third run.
    let with_leaf: Vec<Tree<i64>> = vec![runs[0].clone(), tree! { "loss" => 1, "acc" => 10 }];
    let mut strict_sum = Treelize::new(|xs: [&i64; 2]| xs[0] + xs[1]);
    let r: Tree<i64> = strict_sum.call_n([&with_leaf[0], &with_leaf[1]]).unwrap();
    assert_eq!(
        r,
        tree! { "loss" => 5, "acc" => { "top1" => 11, "top5" => 12 } }
    );
}

#[test]
fn array_leaves_of_one_call_must_have_one_shape() {
    let a = Linear {
        w: v(&[1.0, 2.0]),
        b: v(&[1.0]),
    };
    let b = Linear {
        w: v(&[3.0, 4.0]),
        b: v(&[1.0, 2.0]),
    };
    let mut calls = 0;
    let mut add = Treelize::new(|xs: &[&Vector]| {
        calls += 1;
        Vector(xs[0].0.iter().zip(&xs[1].0).map(|(x, y)| x + y).collect())
    });
    let err = add.call_many::<_, _, Linear<Vector>>([&a, &b]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at .b: leaf signature mismatch: expected f32[1], found f32[2]"
    );
    assert_eq!(calls, 1); // `w` was computed, `b` was refused before the call
}
