//! Many trees with paths (JAX's `tree_map_with_path(f, t1, t2, ...)`):
//! `map_with_path_n` and `zip_mut_with_path` (trees read, one or several
//! updated in place), on typed trees and on `Tree<L>`, with the structure
//! check of `map_n`.

mod models;
mod shaped;

use std::collections::{BTreeMap, HashMap};

use models::Linear;
use pytree_std::{tree, ErrorKind, KeyPath, PyTree, Tree};
use shaped::{v, Vector};

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Mlp<T> {
    layers: Vec<Linear<T>>,
    #[pytree(kind = "state")]
    steps: T,
    #[pytree(static)]
    name: String,
}

fn mlp(x: f32) -> Mlp<f32> {
    Mlp {
        layers: vec![
            Linear { w: x, b: x + 1.0 },
            Linear {
                w: x + 2.0,
                b: x + 3.0,
            },
        ],
        steps: x + 4.0,
        name: "m".into(),
    }
}

#[test]
fn map_with_path_n_hands_f_the_first_trees_path_and_every_trees_leaf() {
    let (a, b, c) = (mlp(0.0), mlp(10.0), mlp(100.0));
    let out: Mlp<String> =
        pytree_std::generic::multi_path::map_with_path_n::<pytree_std::Std, _, _, _, _>(
            &a,
            [&b, &c],
            |path, x, [y, z]| format!("{path}:{}", x + y + z),
        )
        .unwrap();
    assert_eq!(out.layers[0].w, ".layers[0].w:110");
    assert_eq!(out.layers[1].b, ".layers[1].b:119");
    assert_eq!(out.steps, ".steps:122");
    assert_eq!(out.name, "m");
}

#[test]
fn the_paths_carry_their_kind() {
    let (a, b) = (mlp(0.0), mlp(1.0));
    let mut kinds = Vec::new();
    pytree_std::paths::zip_mut_with_path([], [&a, &b], |path, [], [_, ..]| {
        kinds.push((path.to_string(), path.kind()))
    })
    .unwrap();
    assert_eq!(kinds.last(), Some(&(".steps".to_string(), "state")));
    assert!(kinds[..4].iter().all(|(_, k)| *k == "param"));
}

#[test]
fn zip_mut_with_path_updates_in_place_and_can_skip_by_kind() {
    let mut params = mlp(1.0);
    let grads = mlp(10.0);
    pytree_std::paths::zip_mut_with_path([&mut params], [&grads], |path, [p], [g]| {
        if path.kind() == "param" {
            *p -= 0.5 * g
        }
    })
    .unwrap();
    assert_eq!(params.layers[0], Linear { w: -4.0, b: -3.5 });
    assert_eq!(params.steps, 5.0);
}

#[test]
fn a_mismatch_is_reported_as_map_n_reports_it_and_nothing_is_called_or_changed() {
    let a = mlp(0.0);
    let mut b = mlp(1.0);
    b.layers.pop();
    b.name = "other".into();
    let mut calls = 0;
    let err = pytree_std::paths::zip_mut_with_path([], [&a, &b], |_, [], [_, ..]| calls += 1)
        .unwrap_err();
    let want = pytree_std::map_n(&a, [&b], |x, _| *x).unwrap_err();
    assert_eq!(err, want);
    assert_eq!(calls, 0);
    let ErrorKind::Mismatches(all) = err.kind() else {
        panic!("{err}")
    };
    assert_eq!(all.len(), 2);
    let mut target = mlp(5.0);
    let before = target.clone();
    let err = pytree_std::paths::zip_mut_with_path([&mut target], [&b], |_, [p], [_]| *p = 0.0)
        .unwrap_err();
    assert_eq!(err.tree_index(), None); // several mismatches: one error listing them
    assert_eq!(target, before);
}

#[test]
fn several_trees_updated_in_place_get_the_first_trees_paths_after_the_check() {
    // An optimizer's step over parameters and a state tree, by kind.
    let (mut params, mut moments) = (mlp(1.0), mlp(0.0));
    let grads = mlp(10.0);
    let mut seen = Vec::new();
    pytree_std::paths::zip_mut_with_path(
        [&mut params, &mut moments],
        [&grads],
        |path, [p, m], [g]| {
            seen.push(path.to_string());
            if path.kind() == "param" {
                *m += g;
                *p -= 0.5 * *m;
            }
        },
    )
    .unwrap();
    assert_eq!(
        seen,
        [
            ".layers[0].w",
            ".layers[0].b",
            ".layers[1].w",
            ".layers[1].b",
            ".steps"
        ]
    );
    assert_eq!(params.layers[0], Linear { w: -4.0, b: -4.0 });
    assert_eq!(moments.layers[1], Linear { w: 14.0, b: 16.0 });
    assert_eq!((params.steps, moments.steps), (5.0, 4.0));

    // A mismatch in any tree: nothing is called, nothing changes.
    let mut other = mlp(0.0);
    other.layers.pop();
    let (before_p, before_o) = (params.clone(), other.clone());
    let mut calls = 0;
    let err =
        pytree_std::paths::zip_mut_with_path([&mut params, &mut other], [&grads], |_, _, _| {
            calls += 1
        })
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at .layers: sequence length mismatch: expected 2, found 1"
    );
    assert_eq!((calls, params, other), (0, before_p, before_o));
}

#[test]
fn the_result_may_have_another_leaf_type() {
    let a = vec![1.0f32, 2.0];
    let b = vec![1.0f32, 3.0];
    let same: Vec<bool> =
        pytree_std::generic::multi_path::map_with_path_n::<pytree_std::Std, _, _, _, _>(
            &a,
            [&b],
            |_, x, [y]| x == y,
        )
        .unwrap();
    assert_eq!(same, [true, false]);
    // U is checked through the TreeDef: another shape is an error.
    let err = pytree_std::generic::multi_path::map_with_path_n::<
        pytree_std::Std,
        _,
        (bool, bool, bool),
        1,
        _,
    >(&a, [&b], |_, x, [y]| x == y)
    .unwrap_err();
    pytree_tests::assert_mentions(&err, "expected a tuple of arity 3");
}

#[test]
fn hash_maps_pair_their_entries_in_sorted_key_order() {
    let a = HashMap::from([("b".to_string(), 2i32), ("a".to_string(), 1)]);
    let b = HashMap::from([("a".to_string(), 10i32), ("b".to_string(), 20)]);
    let out: BTreeMap<String, String> =
        pytree_std::generic::multi_path::map_with_path_n::<pytree_std::Std, _, _, _, _>(
            &a,
            [&b],
            |path, x, [y]| format!("{path}={}", x + y),
        )
        .unwrap();
    assert_eq!(out["a"], "[\"a\"]=11");
    assert_eq!(out["b"], "[\"b\"]=22");
}

#[test]
fn dynamic_trees_pair_by_key_whatever_the_order_of_their_entries() {
    let a: Tree<i64> = tree! { "w" => 1, "x" => { "c" => 2, "d" => 3 } };
    let b: Tree<i64> = tree! { "x" => { "d" => 30, "c" => 20 }, "w" => 10 };
    let c: Tree<i64> = tree! { "w" => 100, "x" => { "c" => 200, "d" => 300 } };
    let out: Tree<String> =
        pytree_std::generic::multi_path::map_with_path_n::<pytree_std::Std, _, _, _, _>(
            &a,
            [&b, &c],
            |path: &KeyPath, x, [y, z]| format!("{path}={}", x + y + z),
        )
        .unwrap();
    assert_eq!(
        format!("{out:?}"),
        r#"{"w": "[\"w\"]=111", "x": {"c": "[\"x\"][\"c\"]=222", "d": "[\"x\"][\"d\"]=333"}}"#
    );
    let mut t = a.clone();
    pytree_std::paths::zip_mut_with_path([&mut t], [&b], |path, [x], [y]| {
        if path.len() == 2 {
            *x += y
        }
    })
    .unwrap();
    assert_eq!(t, tree! { "w" => 1, "x" => { "c" => 22, "d" => 33 } });
    let missing: Tree<i64> = tree! { "w" => 10, "x" => { "c" => 20 } };
    let err =
        pytree_std::paths::zip_mut_with_path([], [&a, &missing], |_, [], [_, ..]| {}).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::KeyMismatch { .. }), "{err}");
    assert_eq!(err.path().to_string(), "[\"x\"]");
    assert_eq!(err.tree_index(), Some(1));
}

#[test]
fn array_leaves_of_another_shape_are_a_signature_mismatch_before_any_call() {
    let a = Linear {
        w: v(&[1.0, 2.0]),
        b: v(&[0.0]),
    };
    let b = Linear {
        w: v(&[3.0, 4.0]),
        b: v(&[1.0]),
    };
    let sum: Linear<Vector> =
        pytree_std::generic::multi_path::map_with_path_n::<pytree_std::Std, _, _, _, _>(
            &a,
            [&b],
            |_, x, [y]| Vector(x.0.iter().zip(&y.0).map(|(p, q)| p + q).collect()),
        )
        .unwrap();
    assert_eq!(sum.w, v(&[4.0, 6.0]));
    let wide = Linear {
        w: v(&[3.0, 4.0]),
        b: v(&[1.0, 1.0]),
    };
    let mut calls = 0;
    let err = pytree_std::paths::zip_mut_with_path([], [&a, &wide], |_, [], [_, ..]| calls += 1)
        .unwrap_err();
    assert_eq!(calls, 0);
    assert_eq!(
        err.to_string(),
        "tree 1 at .b: leaf signature mismatch: expected f32[1], found f32[2]"
    );
}

#[test]
fn trees_without_leaves_call_nothing_and_keep_their_structure() {
    fn identity<T: pytree_std::PyTree<Leaf = f32> + Clone>(t: &T) -> T {
        pytree_std::generic::multi_path::map_with_path_n::<pytree_std::Std, _, _, _, _>(
            t,
            [&t.clone()],
            |_, x, [_]| *x,
        )
        .unwrap()
    }
    let a: (Vec<f32>, Option<f32>) = (vec![], None);
    assert_eq!(identity(&a), a);
    let t: Tree<f32> = tree! { "a" => None, "b" => [] };
    assert_eq!(identity(&t), t);
}
