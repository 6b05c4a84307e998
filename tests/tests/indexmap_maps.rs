//! `IndexMap` as an insertion-ordered map node (optree's
//! `dict_insertion_ordered`): flattened in insertion order, keys recorded
//! unordered, entries paired by key in multi-tree operations.

use pytree_std::indexmap::IndexMap;
use pytree_std::{elements::Tolerance, ErrorKind, KeyPath, PyTree, Tree, TreeDef};

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Model {
    heads: IndexMap<String, Vec<f32>>,
    #[pytree(static)]
    name: &'static str,
}

fn heads(entries: &[(&str, &[f32])]) -> IndexMap<String, Vec<f32>> {
    entries
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_vec()))
        .collect()
}

fn model() -> Model {
    Model {
        heads: heads(&[("z", &[1.0, 2.0]), ("a", &[3.0])]),
        name: "m",
    }
}

#[test]
fn flattens_in_insertion_order_and_round_trips() {
    let m = model();
    let (leaves, def): (Vec<f32>, TreeDef) = pytree_std::flatten(m.clone());
    assert_eq!(leaves, [1.0, 2.0, 3.0]);
    assert_eq!(
        def.to_string(),
        r#"Model { heads: {"z": [*, *], "a": [*]}, name: "m" }"#
    );
    let back: Model = pytree_std::unflatten(&def, leaves).unwrap();
    assert_eq!(back, m);
    assert!(back.heads.keys().eq(["z", "a"]));
    let paths: Vec<String> = pytree_std::paths::leaves_with_path(&m)
        .iter()
        .map(|(p, _)| p.to_string())
        .collect();
    assert_eq!(
        paths,
        [
            r#".heads["z"][0]"#,
            r#".heads["z"][1]"#,
            r#".heads["a"][0]"#
        ]
    );
}

#[test]
fn multi_tree_operations_pair_entries_by_key() {
    let a = model();
    let b = Model {
        heads: heads(&[("a", &[30.0]), ("z", &[10.0, 20.0])]),
        name: "m",
    };
    let sum = pytree_std::walk::map_n(&a, [&b], |x, [y]| x + y).unwrap();
    assert_eq!(sum.heads, heads(&[("z", &[11.0, 22.0]), ("a", &[33.0])]));
    assert!(sum.heads.keys().eq(["z", "a"])); // the first tree's order
    let mut p = a.clone();
    pytree_std::zip_mut([&mut p], [&b, &b], |[x], [y, z]| *x += y + z).unwrap();
    assert_eq!(p.heads["a"], [63.0]);
    // The order is structure: the TreeDefs differ, so tree_equal says no.
    assert_ne!(pytree_std::structure(&a), pytree_std::structure(&b));
    assert!(!pytree_std::elements::tree_equal(
        &a,
        &b,
        Tolerance::new(1e3, 1e3)
    ));
}

#[test]
fn key_and_length_mismatches_are_errors_at_their_paths() {
    let a = model();
    let other_keys = Model {
        heads: heads(&[("z", &[1.0, 2.0]), ("b", &[3.0])]),
        name: "m",
    };
    let mut p = a.clone();
    let err = pytree_std::zip_mut([&mut p], [&other_keys], |[x], [y]| *x += y).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::KeyMismatch { .. }), "{err}");
    assert_eq!(err.path().to_string(), ".heads");
    assert_eq!(p, a);
    let longer = Model {
        heads: heads(&[("a", &[3.0, 4.0]), ("z", &[1.0, 2.0])]),
        name: "m",
    };
    let err = pytree_std::walk::map_n(&a, [&longer], |x, [y]| x + y).unwrap_err();
    assert_eq!(err.path().to_string(), r#".heads["a"]"#);
    assert!(
        matches!(
            err.kind(),
            ErrorKind::LengthMismatch {
                expected: 1,
                found: 2
            }
        ),
        "{err}"
    );
}

#[test]
fn map_in_place_get_set_and_dynamic_trees() {
    let m = pytree_std::map(model(), |x| x * 10.0);
    assert_eq!(m.heads["z"], [10.0, 20.0]);
    let mut m = m;
    let at = KeyPath::root().field("heads").key("a".to_string()).index(0);
    assert_eq!(pytree_std::paths::get(&m, &at).unwrap(), &30.0);
    assert_eq!(pytree_std::paths::set(&mut m, &at, 5.0).unwrap(), 30.0);
    let t: Tree<f32> = Tree::from_pytree(m.clone()).unwrap();
    assert_eq!(
        format!("{t:?}"),
        r#"{"heads": {"z": [10.0, 20.0], "a": [5.0]}}"#
    );
    let back: Model = t.to_pytree(&pytree_std::structure(&m)).unwrap();
    assert_eq!(back, m);
}

#[test]
fn a_repeated_key_in_a_treedef_is_an_error() {
    use pytree_std::{NodeRef, StaticValue, TreeDefBuilder};
    let mut b = TreeDefBuilder::new();
    b.node(NodeRef::Map(2));
    b.leaf();
    b.leaf();
    b.map_keys(StaticValue::keys(vec!["k", "k"]));
    let def = b.finish().unwrap();
    let err = pytree_std::unflatten::<IndexMap<&str, i32>>(&def, [1, 2]).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"at ["k"]: map key "k" appears twice in the TreeDef"#
    );
}

pytree_std::namespace!(pub struct Coarse; leaves = [Vec<f32>]);

#[test]
fn a_user_namespace_gets_indexmap_too() {
    // In `Coarse`, a `Vec<f32>` is one leaf, and IndexMap is a map node.
    let m: IndexMap<&str, Vec<f32>> = IndexMap::from([("w", vec![1.0, 2.0]), ("b", vec![3.0])]);
    let (leaves, def) = pytree_core::ops::basic::flatten::<Coarse, _>(m.clone());
    assert_eq!(leaves, [vec![1.0, 2.0], vec![3.0]]);
    assert_eq!(def.to_string(), r#"{"w": *, "b": *}"#);
    let back: IndexMap<&str, Vec<f32>> =
        pytree_core::ops::basic::unflatten::<Coarse, _, _>(&def, leaves).unwrap();
    assert_eq!(back, m);
}
