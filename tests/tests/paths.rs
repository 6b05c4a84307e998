//! Key paths: every leaf with its path (`flatten_with_path`,
//! `leaves_with_path`, `map_with_path`, `for_each_with_path`,
//! `for_each_mut_with_path`), lookup and update by path (`get`, `update`,
//! `set`, `set_subtree`) with errors that name the path, and the field kinds
//! that paths expose.

mod models;

use std::collections::{BTreeMap, HashMap};

use models::{mlp, Linear, Mlp};
use pytree_std::{paths::KeyEntry, ErrorKind, KeyPath, PyTree};

#[derive(PyTree, Clone, Debug, PartialEq)]
enum Shape {
    Circle { r: f64 },
    Square(f64),
    Empty,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Pair(f64, f64);

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Zoo {
    shapes: Vec<Shape>,
    pair: Pair,
    named: BTreeMap<String, f64>,
    maybe: Option<f64>,
    nothing: Option<f64>,
    boxed: Box<f64>,
}

fn zoo() -> Zoo {
    Zoo {
        shapes: vec![Shape::Circle { r: 1.0 }, Shape::Empty, Shape::Square(2.0)],
        pair: Pair(3.0, 4.0),
        named: BTreeMap::from([("bias".to_string(), 5.0), ("alpha".to_string(), 6.0)]),
        maybe: Some(7.0),
        nothing: None,
        boxed: Box::new(8.0),
    }
}

fn shown<L: std::fmt::Debug>(pairs: &[(KeyPath, L)]) -> Vec<String> {
    pairs.iter().map(|(p, x)| format!("{p} = {x:?}")).collect()
}

#[test]
fn flatten_with_path_pairs_each_leaf_with_its_jax_style_key_path() {
    let (pairs, def) = pytree_std::flatten_with_path(mlp());
    assert_eq!(
        shown(&pairs),
        [
            ".layers[0].w = 1.0",
            ".layers[0].b = 2.0",
            ".layers[1].w = 3.0",
            ".layers[1].b = 4.0"
        ]
    );
    assert_eq!(def, pytree_std::structure(&mlp()));
}

#[test]
fn paths_name_fields_indices_map_keys_and_variants_and_skip_option_and_box() {
    let z = zoo();
    let pairs = pytree_std::paths::leaves_with_path(&z);
    assert_eq!(
        shown(&pairs),
        [
            ".shapes[0]::Circle.r = 1.0",
            ".shapes[2]::Square.0 = 2.0",
            ".pair.0 = 3.0",
            ".pair.1 = 4.0",
            ".named[\"alpha\"] = 6.0",
            ".named[\"bias\"] = 5.0",
            ".maybe = 7.0",
            ".boxed = 8.0",
        ]
    );
}

#[test]
fn hash_map_paths_come_in_sorted_key_order() {
    let t: HashMap<u32, Vec<i32>> = HashMap::from([(20, vec![1]), (3, vec![2, 3])]);
    let paths: Vec<String> = pytree_std::paths::leaves_with_path(&t)
        .into_iter()
        .map(|(p, _)| p.to_string())
        .collect();
    assert_eq!(paths, ["[3][0]", "[3][1]", "[20][0]"]);
}

#[test]
fn leaves_with_path_agrees_with_flatten_with_path_and_leaves() {
    let z = zoo();
    let by_ref = pytree_std::paths::leaves_with_path(&z);
    let (by_value, _) = pytree_std::flatten_with_path(z.clone());
    assert_eq!(by_ref.len(), by_value.len());
    for ((p1, x1), (p2, x2)) in by_ref.iter().zip(&by_value) {
        assert_eq!((p1, **x1), (p2, *x2));
    }
    let plain: Vec<&f64> = pytree_std::leaves(&z);
    let with_path: Vec<&f64> = by_ref.iter().map(|(_, x)| *x).collect();
    assert_eq!(plain, with_path);
}

#[test]
fn every_path_from_a_walk_leads_back_to_its_leaf_through_get() {
    let z = zoo();
    for (path, leaf) in pytree_std::paths::leaves_with_path(&z) {
        assert!(
            std::ptr::eq(pytree_std::paths::get(&z, &path).unwrap(), leaf),
            "{path}"
        );
    }
}

#[test]
fn for_each_with_path_visits_in_pre_order() {
    let mut seen = Vec::new();
    pytree_std::paths::for_each_with_path(&mlp(), |path, x| seen.push(format!("{path}:{x}")));
    assert_eq!(
        seen,
        [
            ".layers[0].w:1",
            ".layers[0].b:2",
            ".layers[1].w:3",
            ".layers[1].b:4"
        ]
    );
}

#[test]
fn for_each_mut_with_path_updates_only_the_leaves_it_picks() {
    let mut m = mlp();
    pytree_std::paths::zip_mut_with_path([&mut m], [], |path, [b], []| {
        if path.entries().last() == Some(&KeyEntry::Field("b")) {
            *b = 0.0;
        }
    })
    .unwrap();
    assert_eq!(pytree_std::flatten(m).0, [1.0, 0.0, 3.0, 0.0]);
}

#[test]
fn map_with_path_can_zero_the_biases_and_keep_the_type() {
    let m: Mlp<f32> = pytree_std::map_with_path(mlp(), |path, x| {
        if path.to_string().ends_with(".b") {
            0.0
        } else {
            x
        }
    })
    .unwrap();
    assert_eq!(m.layers[1], Linear { w: 3.0, b: 0.0 });
    assert_eq!(m.name, "mlp");
}

#[test]
fn map_with_path_can_change_the_leaf_type() {
    let labels: Mlp<String> =
        pytree_std::map_with_path(mlp(), |path, x| format!("{path}={x}")).unwrap();
    assert_eq!(labels.layers[1].w, ".layers[1].w=3");
}

#[test]
fn map_with_path_into_a_type_of_another_shape_is_an_error_with_the_path() {
    let err = pytree_std::map_with_path::<_, (f32, f32)>(mlp(), |_, x| x).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at <root>: node mismatch: expected a tuple of arity 2, found Mlp"
    );
}

#[test]
fn a_vec_of_leaves_gets_index_paths() {
    let (pairs, _) = pytree_std::flatten_with_path((vec![1u8, 2], [3u8]));
    assert_eq!(shown(&pairs), ["[0][0] = 1", "[0][1] = 2", "[1][0] = 3"]);
}

// ---- get / update / set / set_subtree ----

fn layer_b(i: usize) -> KeyPath {
    KeyPath::root().field("layers").index(i).field("b")
}

#[test]
fn get_finds_the_leaf_at_a_path() {
    let m = mlp();
    assert_eq!(pytree_std::paths::get(&m, &layer_b(1)), Ok(&4.0));
}

#[test]
fn get_indexes_a_vec_of_leaves_and_looks_up_map_keys_and_variants() {
    let z = zoo();
    assert_eq!(
        pytree_std::paths::get(&vec![10, 11, 12], &KeyPath::root().index(2)),
        Ok(&12)
    );
    assert_eq!(
        pytree_std::paths::get(&z, &KeyPath::root().field("named").key("bias".to_string())),
        Ok(&5.0)
    );
    let r = KeyPath::root()
        .field("shapes")
        .index(0)
        .variant("Circle")
        .field("r");
    assert_eq!(pytree_std::paths::get(&z, &r), Ok(&1.0));
}

#[test]
fn get_at_the_root_of_a_single_leaf_is_that_leaf() {
    assert_eq!(pytree_std::paths::get(&5, &KeyPath::root()), Ok(&5));
    assert_eq!(pytree_std::paths::get(&Some(5), &KeyPath::root()), Ok(&5));
}

#[test]
fn get_a_missing_index_names_the_path_and_the_longest_existing_prefix() {
    let err = pytree_std::paths::get(&mlp(), &layer_b(5)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .layers[5].b: no such key path: .layers has no child [5]"
    );
    assert_eq!(err.path(), layer_b(5));
    assert_eq!(
        err.kind(),
        &ErrorKind::PathNotFound {
            existing: KeyPath::root().field("layers"),
            missing: KeyEntry::Index(5),
        }
    );
}

#[test]
fn get_a_missing_field_names_it() {
    let err = pytree_std::paths::get(&mlp(), &KeyPath::root().field("weights")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .weights: no such key path: <root> has no child .weights"
    );
}

#[test]
fn a_static_field_is_not_a_place_in_the_tree() {
    let err = pytree_std::paths::get(&mlp(), &KeyPath::root().field("name")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .name: no such key path: <root> has no child .name"
    );
}

#[test]
fn get_a_map_key_of_another_type_is_not_found() {
    let z = zoo();
    let err = pytree_std::paths::get(&z, &KeyPath::root().field("named").key("bias")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .named[\"bias\"]: no such key path: .named has no child [\"bias\"]"
    );
}

#[test]
fn get_another_variant_than_the_one_present_is_not_found() {
    let z = zoo();
    let p = KeyPath::root()
        .field("shapes")
        .index(0)
        .variant("Square")
        .field("0");
    let err = pytree_std::paths::get(&z, &p).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .shapes[0]::Square.0: no such key path: .shapes[0] has no child ::Square"
    );
}

#[test]
fn get_past_a_leaf_is_not_found() {
    let p = layer_b(0).field("x");
    let err = pytree_std::paths::get(&mlp(), &p).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .layers[0].b.x: no such key path: .layers[0].b has no child .x"
    );
    let err = pytree_std::paths::get(&vec![1, 2], &KeyPath::root().index(1).index(0)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at [1][0]: no such key path: [1] has no child [0]"
    );
}

#[test]
fn get_a_subtree_says_what_is_there_instead_of_a_leaf() {
    let err =
        pytree_std::paths::get(&mlp(), &KeyPath::root().field("layers").index(0)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .layers[0]: node mismatch: expected a leaf, found Linear { w: *, b: * }"
    );
    let err = pytree_std::paths::get(&zoo(), &KeyPath::root().field("nothing")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .nothing: node mismatch: expected a leaf, found None"
    );
    let err = pytree_std::paths::get(&vec![1, 2], &KeyPath::root()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at <root>: node mismatch: expected a leaf, found [*, *]"
    );
}

#[test]
fn update_calls_the_closure_on_the_leaf_and_returns_its_result() {
    let mut m = mlp();
    let old =
        pytree_std::paths::update(&mut m, &layer_b(0), |b| std::mem::replace(b, 20.0)).unwrap();
    assert_eq!(old, 2.0);
    assert_eq!(pytree_std::flatten(m).0, [1.0, 20.0, 3.0, 4.0]);
}

#[test]
fn update_at_a_missing_path_does_not_call_the_closure_and_changes_nothing() {
    let mut m = mlp();
    let mut called = false;
    let err = pytree_std::paths::update(&mut m, &layer_b(2), |_| called = true).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .layers[2].b: no such key path: .layers has no child [2]"
    );
    assert!(!called);
    assert_eq!(m, mlp());
}

#[test]
fn update_of_a_subtree_is_an_error_naming_it() {
    let mut m = mlp();
    let err = pytree_std::paths::update(&mut m, &KeyPath::root().field("layers"), |x| *x = 0.0)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .layers: node mismatch: expected a leaf, found [Linear { w: *, b: * }, Linear { w: *, b: * }]"
    );
    assert_eq!(m, mlp());
}

#[test]
fn set_replaces_one_leaf_and_returns_the_old_one() {
    let mut z = zoo();
    let path = KeyPath::root()
        .field("shapes")
        .index(2)
        .variant("Square")
        .field("0");
    assert_eq!(pytree_std::paths::set(&mut z, &path, 20.0), Ok(2.0));
    assert_eq!(z.shapes[2], Shape::Square(20.0));
    assert_eq!(
        pytree_std::paths::set(&mut z, &KeyPath::root().field("maybe"), 70.0),
        Ok(7.0)
    );
    assert_eq!(z.maybe, Some(70.0));
    assert_eq!(
        pytree_std::paths::set(&mut z, &KeyPath::root().field("boxed"), 80.0),
        Ok(8.0)
    );
    assert_eq!(*z.boxed, 80.0);
}

#[test]
fn set_in_a_vec_of_leaves_touches_only_that_element() {
    let mut v = vec![1, 2, 3];
    assert_eq!(
        pytree_std::paths::set(&mut v, &KeyPath::root().index(1), 0),
        Ok(2)
    );
    assert_eq!(v, [1, 0, 3]);
}

#[test]
fn set_subtree_replaces_a_struct_and_returns_the_old_one() {
    let mut m = mlp();
    let path = KeyPath::root().field("layers").index(0);
    let old: Linear<f32> =
        pytree_std::paths::set_subtree(&mut m, &path, Linear { w: 9.0, b: 9.5 }).unwrap();
    assert_eq!(old, Linear { w: 1.0, b: 2.0 });
    assert_eq!(m.layers[0], Linear { w: 9.0, b: 9.5 });
    assert_eq!(m.layers[1], Linear { w: 3.0, b: 4.0 });
}

#[test]
fn set_subtree_at_the_root_replaces_everything() {
    let mut m = mlp();
    let mut other = mlp();
    other.layers[1].w = -1.0;
    let old = pytree_std::paths::set_subtree(&mut m, &KeyPath::root(), other.clone()).unwrap();
    assert_eq!((old, m), (mlp(), other));
}

#[test]
fn set_subtree_of_a_map_value_keeps_the_other_keys() {
    let mut t: BTreeMap<&str, Vec<i32>> = BTreeMap::from([("a", vec![1, 2]), ("b", vec![3])]);
    let old =
        pytree_std::paths::set_subtree(&mut t, &KeyPath::root().key("a"), vec![10, 20]).unwrap();
    assert_eq!(old, [1, 2]);
    assert_eq!(t, BTreeMap::from([("a", vec![10, 20]), ("b", vec![3])]));
}

#[test]
fn set_subtree_of_another_structure_is_an_error_and_changes_nothing() {
    let mut m = mlp();
    let path = KeyPath::root().field("layers");
    let err = pytree_std::paths::set_subtree(&mut m, &path, vec![Linear { w: 0.0f32, b: 0.0 }])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .layers: node mismatch: expected [Linear { w: *, b: * }, Linear { w: *, b: * }], found [Linear { w: *, b: * }]"
    );
    assert_eq!(m, mlp());
}

#[test]
fn set_subtree_with_other_static_data_is_an_error() {
    let mut t = vec![mlp()];
    let mut renamed = mlp();
    renamed.name = "other".into();
    let err =
        pytree_std::paths::set_subtree(&mut t, &KeyPath::root().index(0), renamed).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at [0]: node mismatch: expected Mlp { layers: [Linear { w: *, b: * }, Linear { w: *, b: * }], name: \"mlp\" }, found Mlp { layers: [Linear { w: *, b: * }, Linear { w: *, b: * }], name: \"other\" }"
    );
    assert_eq!(t, vec![mlp()]);
}

#[test]
fn set_subtree_of_an_option_field_takes_an_option() {
    let mut z = zoo();
    let old =
        pytree_std::paths::set_subtree(&mut z, &KeyPath::root().field("maybe"), Some(0.5)).unwrap();
    assert_eq!(old, Some(7.0));
    assert_eq!(z.maybe, Some(0.5));
    let err = pytree_std::paths::set_subtree(&mut z, &KeyPath::root().field("nothing"), Some(1.0))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .nothing: node mismatch: expected None, found Some(*)"
    );
}

#[test]
fn set_subtree_at_a_missing_path_names_it() {
    let mut m = mlp();
    let err = pytree_std::paths::set_subtree(
        &mut m,
        &KeyPath::root().field("layers").index(3),
        Linear { w: 0.0f32, b: 0.0 },
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .layers[3]: no such key path: .layers has no child [3]"
    );
}

// ---- kinds ----

#[derive(PyTree, Clone, Debug, PartialEq)]
struct BatchNorm<T> {
    scale: T,
    #[pytree(kind = "state")]
    running_mean: T,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Net<T> {
    dense: Linear<T>,
    norm: BatchNorm<T>,
    #[pytree(kind = "frozen")]
    embedding: Vec<T>,
    #[pytree(kind = "frozen")]
    frozen_norm: BatchNorm<T>,
    #[pytree(static)]
    training: bool,
}

fn net() -> Net<f32> {
    Net {
        dense: Linear { w: 1.0, b: 2.0 },
        norm: BatchNorm {
            scale: 3.0,
            running_mean: 4.0,
        },
        embedding: vec![5.0, 6.0],
        frozen_norm: BatchNorm {
            scale: 7.0,
            running_mean: 8.0,
        },
        training: true,
    }
}

fn kinds(pairs: &[(KeyPath, &f32)]) -> Vec<String> {
    pairs
        .iter()
        .map(|(p, _)| format!("{p}: {}", p.kind()))
        .collect()
}

#[test]
fn paths_expose_the_kind_of_the_innermost_tagged_field_default_param() {
    let n = net();
    assert_eq!(
        kinds(&pytree_std::paths::leaves_with_path(&n)),
        [
            ".dense.w: param",
            ".dense.b: param",
            ".norm.scale: param",
            ".norm.running_mean: state",
            ".embedding[0]: frozen",
            ".embedding[1]: frozen",
            ".frozen_norm.scale: frozen",
            ".frozen_norm.running_mean: state",
        ]
    );
}

#[test]
fn the_by_value_and_mutable_walks_report_the_same_kinds() {
    let (pairs, _) = pytree_std::flatten_with_path(net());
    let by_value: Vec<&str> = pairs.iter().map(|(p, _)| p.kind()).collect();
    let mut by_mut = Vec::new();
    let mut n = net();
    pytree_std::paths::zip_mut_with_path([&mut n], [], |p, [_], []| by_mut.push(p.kind())).unwrap();
    assert_eq!(by_value, by_mut);
    assert_eq!(
        by_value,
        ["param", "param", "param", "state", "frozen", "frozen", "frozen", "state"]
    );
}

#[derive(PyTree, Clone, Debug, PartialEq)]
enum Layer {
    Dense {
        w: f32,
        #[pytree(kind = "state")]
        steps: f32,
    },
    Norm(#[pytree(kind = "state")] f32, f32),
}

#[test]
fn enum_variant_fields_carry_their_kinds() {
    let t = vec![Layer::Dense { w: 1.0, steps: 2.0 }, Layer::Norm(3.0, 4.0)];
    assert_eq!(
        kinds(&pytree_std::paths::leaves_with_path(&t)),
        [
            "[0]::Dense.w: param",
            "[0]::Dense.steps: state",
            "[1]::Norm.0: state",
            "[1]::Norm.1: param",
        ]
    );
}

#[test]
fn a_kind_under_a_map_or_option_is_inherited_by_every_value() {
    #[derive(PyTree)]
    struct Stats {
        #[pytree(kind = "state")]
        by_name: BTreeMap<String, Option<f32>>,
        lr: f32,
    }
    let s = Stats {
        by_name: BTreeMap::from([("a".into(), Some(1.0)), ("b".into(), None)]),
        lr: 0.1,
    };
    assert_eq!(
        kinds(&pytree_std::paths::leaves_with_path(&s)),
        [".by_name[\"a\"]: state", ".lr: param"]
    );
}

#[test]
fn kind_is_not_part_of_a_paths_identity() {
    let (pairs, _) = pytree_std::flatten_with_path(net());
    let state = &pairs[3].0;
    assert_eq!(state.kind(), "state");
    let by_hand = KeyPath::root().field("norm").field("running_mean");
    assert_eq!(by_hand.kind(), KeyPath::DEFAULT_KIND);
    assert_eq!(*state, by_hand);
    assert_eq!(
        pytree_std::paths::get(&net(), &by_hand),
        Ok(&4.0),
        "a path built by hand finds the leaf"
    );
}

#[test]
fn the_derive_records_kinds_in_the_schema() {
    let def = pytree_std::structure(&BatchNorm {
        scale: 1.0f32,
        running_mean: 0.0,
    });
    let pytree_std::NodeView::Struct { schema, .. } = def.root_node() else {
        panic!("a struct at the root: {def}")
    };
    let fields: Vec<(&str, Option<&str>)> =
        schema.fields().iter().map(|f| (f.name, f.kind)).collect();
    assert_eq!(fields, [("scale", None), ("running_mean", Some("state"))]);
}
