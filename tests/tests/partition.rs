//! Filter, partition and combine (equinox), and PAX's split of parameters
//! and state by field kind (seed 003: `Counter` with `count` = state and
//! `bias` = parameter).

mod models;

use std::collections::BTreeMap;

use models::{mlp, Linear, Mlp};
use pytree_std::{ErrorKind, KeyPath, PyTree};

fn is_bias(path: &KeyPath) -> bool {
    path.to_string().ends_with(".b")
}

#[test]
fn partition_splits_into_two_trees_with_none_holes() {
    let (biases, rest): (Mlp<Option<f32>>, Mlp<Option<f32>>) =
        pytree_std::split::partition(mlp(), |path, _| is_bias(path)).unwrap();
    assert_eq!(
        biases.layers,
        [
            Linear {
                w: None,
                b: Some(2.0)
            },
            Linear {
                w: None,
                b: Some(4.0)
            }
        ]
    );
    assert_eq!(
        rest.layers,
        [
            Linear {
                w: Some(1.0),
                b: None
            },
            Linear {
                w: Some(3.0),
                b: None
            }
        ]
    );
    assert_eq!((biases.name.as_str(), rest.name.as_str()), ("mlp", "mlp"));
}

#[test]
fn partition_puts_a_some_or_none_node_at_every_leaf_of_the_treedef() {
    let (big, _): (Mlp<Option<f32>>, Mlp<Option<f32>>) =
        pytree_std::split::partition(mlp(), |_, x| *x > 2.5).unwrap();
    assert_eq!(
        pytree_std::structure(&big).to_string(),
        "Mlp { layers: [Linear { w: None, b: None }, Linear { w: Some(*), b: Some(*) }], name: \"mlp\" }"
    );
}

#[test]
fn partition_of_a_vec_of_leaves_sees_each_index() {
    let (even_positions, _): (Vec<Option<u8>>, Vec<Option<u8>>) =
        pytree_std::split::partition(vec![10u8, 11, 12], |path, _| {
            path.entries()[0] == pytree_std::paths::KeyEntry::Index(0)
                || path.entries()[0] == pytree_std::paths::KeyEntry::Index(2)
        })
        .unwrap();
    assert_eq!(even_positions, [Some(10), None, Some(12)]);
}

/// One half of a partitioned `BTreeMap<String, Option<i32>>`.
type Halves = BTreeMap<String, Option<Option<i32>>>;

#[test]
fn partition_keeps_existing_none_and_map_keys_in_both_halves() {
    let t: BTreeMap<String, Option<i32>> = BTreeMap::from([
        ("a".into(), Some(1)),
        ("b".into(), None),
        ("c".into(), Some(-3)),
    ]);
    let (pos, neg): (Halves, Halves) =
        pytree_std::split::partition(t.clone(), |_, x| *x > 0).unwrap();
    assert_eq!(pos["a"], Some(Some(1)));
    assert_eq!(pos["b"], None);
    assert_eq!(pos["c"], Some(None));
    assert_eq!(neg["c"], Some(Some(-3)));
    let back: BTreeMap<String, Option<i32>> = pytree_std::split::combine([pos, neg]).unwrap();
    assert_eq!(back, t);
}

#[test]
fn partition_into_a_type_without_option_leaves_is_an_error_with_the_path() {
    let err = pytree_std::split::partition::<_, Mlp<f32>>(mlp(), |_, _| true).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .layers[0].w: node mismatch: expected a leaf, found Some(_)"
    );
}

#[test]
fn filter_keeps_one_side() {
    let small: Mlp<Option<f32>> = pytree_std::split::partition(mlp(), |_, x| *x < 2.5)
        .map(|(kept, _)| kept)
        .unwrap();
    assert_eq!(
        small.layers,
        [
            Linear {
                w: Some(1.0),
                b: Some(2.0)
            },
            Linear { w: None, b: None }
        ]
    );
}

#[test]
fn combine_undoes_partition() {
    let (a, b): (Mlp<Option<f32>>, Mlp<Option<f32>>) =
        pytree_std::split::partition(mlp(), |path, _| is_bias(path)).unwrap();
    let back: Mlp<f32> = pytree_std::split::combine([a, b]).unwrap();
    assert_eq!(back, mlp());
}

#[test]
fn combine_takes_the_leaf_from_whichever_tree_holds_it() {
    let a = Linear {
        w: Some(1.0f32),
        b: None,
    };
    let b = Linear {
        w: None,
        b: Some(2.0f32),
    };
    let l: Linear<f32> = pytree_std::split::combine([b, a]).unwrap();
    assert_eq!(l, Linear { w: 1.0, b: 2.0 });
}

#[test]
fn combine_with_a_leaf_in_both_trees_is_an_error_naming_the_path() {
    let a = vec![Linear {
        w: Some(1.0f32),
        b: Some(2.0),
    }];
    let b = vec![Linear {
        w: None,
        b: Some(2.0f32),
    }];
    let err = pytree_std::split::combine::<_, Vec<Linear<f32>>, 2>([a, b]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at [0].b: trees 0 and 1 both hold a leaf here; combine needs exactly one"
    );
    assert_eq!(
        err.kind(),
        &ErrorKind::CombineConflict {
            holders: vec![0, 1],
            trees: 2
        }
    );
}

#[test]
fn combine_with_a_leaf_in_neither_tree_is_an_error_naming_the_path() {
    let a = vec![Linear {
        w: Some(1.0f32),
        b: None,
    }];
    let b = vec![Linear { w: None, b: None }];
    let err = pytree_std::split::combine::<_, Vec<Linear<f32>>, 2>([a, b]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at [0].b: none of the 2 trees holds a leaf here; combine needs exactly one"
    );
}

#[test]
fn combine_of_three_parts_names_every_holder_in_a_conflict() {
    let parts = [(Some(1), None), (Some(2), Some(3)), (Some(4), None)];
    let err = pytree_std::split::combine::<_, (i32, i32), 3>(parts).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at [0]: trees 0, 1, 2 hold a leaf here; combine needs exactly one"
    );
    let ok: (i32, i32) =
        pytree_std::split::combine([(Some(1), None), (None, Some(3)), (None, None)]).unwrap();
    assert_eq!(ok, (1, 3));
}

/// An MLP named `name` of halves of layers: (`w`, `b`) each maybe held.
fn halves(layers: &[(Option<f32>, Option<f32>)], name: &str) -> Mlp<Option<f32>> {
    Mlp {
        layers: layers.iter().map(|&(w, b)| Linear { w, b }).collect(),
        name: name.into(),
    }
}

#[test]
fn combine_of_trees_with_other_lengths_names_the_tree_and_the_path() {
    let a = halves(&[(Some(1.0), None)], "mlp");
    let b = halves(&[(None, Some(2.0)), (None, None)], "mlp");
    let err = pytree_std::split::combine::<_, Mlp<f32>, 2>([a, b]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at .layers: sequence length mismatch: expected 1, found 2"
    );
}

#[test]
fn combine_of_trees_with_other_static_data_names_the_field() {
    let a = halves(&[(Some(1.0), None)], "a");
    let b = halves(&[(None, Some(2.0))], "b");
    let err = pytree_std::split::combine::<_, Mlp<f32>, 2>([a, b]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at .name: static data mismatch: expected \"a\", found \"b\""
    );
}

#[test]
fn combine_of_maps_with_other_keys_lists_them() {
    let a = BTreeMap::from([("x", Some(1)), ("y", None)]);
    let b = BTreeMap::from([("x", None), ("z", Some(2))]);
    let err = pytree_std::split::combine::<_, BTreeMap<&str, i32>, 2>([a, b]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at <root>: map key mismatch; expected key(s): [\"x\", \"y\"], got key(s): [\"x\", \"z\"], missing key(s): [\"y\"], extra key(s): [\"z\"]"
    );
}

#[test]
fn combine_of_trees_without_option_leaves_is_an_error() {
    let err = pytree_std::split::combine::<_, (i32, i32), 2>([(1, 2), (3, 4)]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 0 at [0]: node mismatch: expected Some(_) or None, found a leaf"
    );
}

// ---- PAX: parameters and state (seed 003) ----

/// The seed's `Counter`: `count` is registered as state, `bias` as a
/// parameter, `is_training` belongs to the tree definition.
#[derive(PyTree, Clone, Debug, PartialEq)]
struct Counter<T> {
    #[pytree(kind = "state")]
    count: T,
    bias: T,
    #[pytree(static)]
    is_training: bool,
}

fn counter() -> Counter<f64> {
    Counter {
        count: 1.0,
        bias: 0.0,
        is_training: true,
    }
}

#[test]
fn the_counters_leaves_have_the_kinds_pax_registers() {
    let kinds: Vec<String> = pytree_std::paths::leaves_with_path(&counter())
        .into_iter()
        .map(|(path, _)| format!("{path}: {}", path.kind()))
        .collect();
    assert_eq!(kinds, [".count: state", ".bias: param"]);
}

#[test]
fn pax_split_updates_the_parameters_and_keeps_the_state() {
    // One call splits parameters from state.
    let (params, state): (Counter<Option<f64>>, Counter<Option<f64>>) =
        pytree_std::split::partition(counter(), |path, _| path.kind() == "param").unwrap();
    assert_eq!(
        params,
        Counter {
            count: None,
            bias: Some(0.0),
            is_training: true
        }
    );
    assert_eq!(
        state,
        Counter {
            count: Some(1.0),
            bias: None,
            is_training: true
        }
    );

    // A gradient step touches only the parameters (the holes stay holes).
    let grads = Counter {
        count: None,
        bias: Some(0.5),
        is_training: true,
    };
    let lr = 0.1;
    let params = pytree_std::walk::map_n(&params, [&grads], |p, [g]| p - lr * g).unwrap();

    // Put back together: the bias moved, the count is the state we kept.
    let stepped: Counter<f64> = pytree_std::split::combine([params, state]).unwrap();
    assert_eq!(
        stepped,
        Counter {
            count: 1.0,
            bias: -0.05,
            is_training: true
        }
    );
}

#[test]
fn pax_state_update_leaves_the_parameters_alone() {
    let (params, state): (Counter<Option<f64>>, Counter<Option<f64>>) =
        pytree_std::split::partition(counter(), |path, _| path.kind() == "param").unwrap();
    // The seed's `step`: count = count + 1, on the state only.
    let state = pytree_std::map(state, |c| c + 1.0);
    let stepped: Counter<f64> = pytree_std::split::combine([params, state]).unwrap();
    assert_eq!(
        stepped,
        Counter {
            count: 2.0,
            bias: 0.0,
            is_training: true
        }
    );
}

#[test]
fn counters_nested_in_a_model_keep_their_kinds() {
    #[derive(PyTree, Clone, Debug, PartialEq)]
    struct Model<T> {
        counters: Vec<Counter<T>>,
        scale: T,
    }
    let m = Model {
        counters: vec![
            counter(),
            Counter {
                count: 5.0,
                bias: 2.0,
                is_training: false,
            },
        ],
        scale: 3.0,
    };
    let params: Model<Option<f64>> =
        pytree_std::split::partition(m.clone(), |path, _| path.kind() == "param")
            .map(|(kept, _)| kept)
            .unwrap();
    let shown: Vec<String> = pytree_std::paths::leaves_with_path(&params)
        .into_iter()
        .map(|(p, x)| format!("{p}={x}"))
        .collect();
    assert_eq!(
        shown,
        [".counters[0].bias=0", ".counters[1].bias=2", ".scale=3"]
    );
}
