//! Several trees at once: a mismatch lists every place where the trees
//! differ (JAX's "Mismatch details (N found)"), each with its key path, its
//! tree and both sides; and the structural diff behind it.

use std::collections::BTreeMap;

use pytree_std::{ErrorKind, NodeRef, PyTree, TreeDef, TreeDefBuilder};

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Layer {
    w: Vec<f32>,
    b: Option<f32>,
    #[pytree(static)]
    name: &'static str,
}

fn layer(n: usize, b: Option<f32>, name: &'static str) -> Layer {
    Layer {
        w: vec![1.0; n],
        b,
        name,
    }
}

#[test]
fn map2_lists_every_mismatch_with_its_path_and_both_sides() {
    let a = vec![layer(2, Some(0.0), "l0"), layer(1, None, "l1")];
    let b = vec![layer(3, None, "l0"), layer(1, None, "out")];
    let err = pytree_std::walk::map_n(&a, [&b], |x, [y]| x + y).unwrap_err();
    let ErrorKind::Mismatches(all) = err.kind() else {
        panic!("expected every mismatch, got {err}");
    };
    assert_eq!(all.len(), 3);
    assert_eq!(all[0].path().to_string(), "[0].w");
    assert_eq!(
        err.to_string(),
        "tree structures differ (3 mismatches found)\n  \
         tree 1 at [0].w: sequence length mismatch: expected 2, found 3\n  \
         tree 1 at [0].b: node mismatch: expected Some(_), found None\n  \
         tree 1 at [1].name: static data mismatch: expected \"l1\", found \"out\""
    );
}

#[test]
fn one_mismatch_is_reported_as_itself() {
    let a = BTreeMap::from([("a", 1), ("b", 2)]);
    let b = BTreeMap::from([("a", 1), ("c", 3)]);
    let err = pytree_std::walk::map_n(&a, [&b], |x, [y]| x + y).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::KeyMismatch { .. }));
    assert_eq!(err.tree_index(), Some(1));
}

#[test]
fn map_n_compares_each_tree_with_the_first() {
    let first = (vec![1, 2], Some(3));
    let err = pytree_std::map_n(
        &first,
        [&(vec![1], Some(3)), &(vec![1, 2], None)],
        |a, [b, c]| a + b + c,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree structures differ (2 mismatches found)\n  \
         tree 1 at [0]: sequence length mismatch: expected 2, found 1\n  \
         tree 2 at [1]: node mismatch: expected Some(_), found None"
    );
}

#[test]
fn zip_mut_lists_every_mismatch_and_updates_nothing() {
    let mut params = (vec![1.0f64, 2.0], vec![3.0], vec![4.0]);
    let grads = (vec![1.0, 1.0], vec![1.0, 1.0], vec![]);
    let err = pytree_std::zip_mut([&mut params], [&grads], |[p], [g]| *p -= g).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree structures differ (2 mismatches found)\n  \
         tree 1 at [1]: sequence length mismatch: expected 1, found 2\n  \
         tree 1 at [2]: sequence length mismatch: expected 1, found 0"
    );
    assert_eq!(params, (vec![1.0, 2.0], vec![3.0], vec![4.0]));
}

#[test]
fn nested_maps_report_key_mismatches_at_each_level_and_below_common_keys() {
    let a = BTreeMap::from([
        ("a", BTreeMap::from([("v", vec![1])])),
        ("x", BTreeMap::from([("c", vec![1]), ("d", vec![1, 2])])),
    ]);
    let b = BTreeMap::from([
        ("a", BTreeMap::from([("v", vec![1])])),
        ("b", BTreeMap::from([("v", vec![1])])),
        ("x", BTreeMap::from([("d", vec![1])])),
    ]);
    let diff: Vec<String> = pytree_std::structure(&a)
        .diff(&pytree_std::structure(&b))
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        diff,
        [
            "at <root>: map key mismatch; expected key(s): [\"a\", \"x\"], got key(s): [\"a\", \"b\", \"x\"], extra key(s): [\"b\"]",
            "at [\"x\"]: map key mismatch; expected key(s): [\"c\", \"d\"], got key(s): [\"d\"], missing key(s): [\"c\"]",
            "at [\"x\"][\"d\"]: sequence length mismatch: expected 2, found 1",
        ]
    );
}

#[derive(PyTree, Clone, Debug, PartialEq)]
enum Shape {
    Circle { r: f32 },
    Rect { w: f32, h: f32 },
}

#[test]
fn the_diff_names_variants_leaves_and_node_kinds() {
    let a = pytree_std::structure(&(Shape::Circle { r: 1.0 }, 1.0f32, (1.0f32, 2.0f32)));
    let b = pytree_std::structure(&(Shape::Rect { w: 1.0, h: 1.0 }, vec![1.0f32], [1.0f32, 2.0]));
    let diff: Vec<String> = a.diff(&b).iter().map(ToString::to_string).collect();
    assert_eq!(
        diff,
        [
            "at [0]: node mismatch: expected variant Shape::Circle, found variant Shape::Rect",
            "at [1]: node mismatch: expected a leaf, found a sequence of length 1",
            "at [2]: node mismatch: expected a tuple of arity 2, found a sequence of length 2",
        ]
    );
}

#[test]
fn equal_structures_have_an_empty_diff() {
    let a = pytree_std::structure(&vec![layer(2, None, "x")]);
    assert!(a.diff(&a.clone()).is_empty());
    // Leaf types do not matter to the structure.
    let t1 = (1.0f32, BTreeMap::from([("k", vec![1.0f32])]));
    let t2 = (1u8, BTreeMap::from([("k", vec![1u8])]));
    pytree_std::generic::multi::check_same_structure::<pytree_std::Std, _, _>(&t1, &t2).unwrap();
}

#[test]
fn check_same_structure_lists_every_difference() {
    let err = pytree_std::generic::multi::check_same_structure::<pytree_std::Std, _, _>(
        &(1, vec![1, 2], Some(1)),
        &(1, vec![1], None::<i32>),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree structures differ (2 mismatches found)\n  \
         tree 1 at [1]: sequence length mismatch: expected 2, found 1\n  \
         tree 1 at [2]: node mismatch: expected Some(_), found None"
    );
}

/// `depth` nested `Some` around a leaf (or around `None`): deeper than
/// the default limits allow a builder, so they are lifted.
fn deep(depth: usize, bottom_is_leaf: bool) -> TreeDef {
    let mut limits = pytree_std::TreeDefLimits::DEFAULT;
    limits.max_depth = depth;
    let mut b = TreeDefBuilder::new();
    for _ in 0..depth {
        b.node(NodeRef::Some);
    }
    if bottom_is_leaf {
        b.leaf();
    } else {
        b.node(NodeRef::None);
    }
    limits.scope(|| b.finish()).unwrap()
}

#[test]
fn deep_treedefs_are_compared_and_composed_without_recursion() {
    let (a, b) = (deep(200_000, true), deep(200_000, false));
    let diff = a.diff(&b);
    assert_eq!(diff.len(), 1);
    assert_eq!(
        diff[0].to_string(),
        "at <root>: node mismatch: expected a leaf, found None"
    );
    assert!(TreeDef::leaf().is_prefix_of(&a));
    // A leaf is a prefix of any subtree, `None` included; `None` only of `None`.
    assert!(a.is_prefix_of(&b));
    assert!(!b.is_prefix_of(&a));
    assert_eq!(a.compose(&a).unwrap().num_nodes(), 400_001);
}
