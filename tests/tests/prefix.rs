//! Prefix trees (seeds 000 and 001: `vmap`'s `in_axes`): a tree whose leaves
//! each stand for a whole subtree of a fuller tree. JAX's `None` axis is a
//! leaf there; in typed Rust an axis is a leaf type of its own (`Axis`),
//! because `Option` is structure (`None` is a prefix only of `None`).

mod models;

use std::collections::BTreeMap;

use models::Linear;
use pytree_std::{ErrorKind, PyTree, TreeDef};

/// An `in_axes` entry: map over this axis, or do not map.
#[derive(PyTree, Clone, Copy, Debug, PartialEq, Eq)]
#[pytree(leaf)]
enum Axis {
    Mapped(usize),
    NotMapped,
}
use Axis::{Mapped, NotMapped};

/// The seed's arguments `(a1, {"k1": a2, "k2": a3})`.
type Args = (f32, BTreeMap<String, f32>);

fn args() -> Args {
    (
        1.0,
        BTreeMap::from([("k1".to_string(), 2.0), ("k2".to_string(), 3.0)]),
    )
}

type SpelledAxes = (Axis, BTreeMap<String, Axis>);

fn spelled(a1: Axis, k1: Axis, k2: Axis) -> SpelledAxes {
    (
        a1,
        BTreeMap::from([("k1".to_string(), k1), ("k2".to_string(), k2)]),
    )
}

#[test]
fn a_prefix_leaf_applies_to_the_whole_subtree_below_it() {
    // (None, 0) is equivalent to (None, {"k1": 0, "k2": 0}).
    let short = (NotMapped, Mapped(0));
    let full = spelled(NotMapped, Mapped(0), Mapped(0));
    let b_short: SpelledAxes = pytree_std::nested::broadcast(&short, &args()).unwrap();
    let b_full: SpelledAxes = pytree_std::nested::broadcast(&full, &args()).unwrap();
    assert_eq!(b_short, full);
    assert_eq!(b_full, full);
}

#[test]
fn a_single_leaf_is_a_prefix_of_the_whole_argument_tuple() {
    let b: SpelledAxes = pytree_std::nested::broadcast(&Mapped(0), &args()).unwrap();
    assert_eq!(b, spelled(Mapped(0), Mapped(0), Mapped(0)));
    assert_eq!(
        pytree_std::generic::prefix::broadcast_prefix::<pytree_std::Std, _, _>(&Mapped(0), &args())
            .unwrap(),
        [&Mapped(0); 3]
    );
}

#[test]
fn a_fully_spelled_prefix_can_map_only_one_entry() {
    // (None, {"k1": None, "k2": 0}): only k2 is mapped.
    let in_axes = spelled(NotMapped, NotMapped, Mapped(0));
    let mapped: (bool, BTreeMap<String, bool>) =
        pytree_std::nested::map_with_prefix(&args(), &in_axes, |_, axis| *axis != NotMapped)
            .unwrap();
    assert_eq!(
        mapped,
        (
            false,
            BTreeMap::from([("k1".into(), false), ("k2".into(), true)])
        )
    );
}

#[test]
fn none_is_a_prefix_only_of_none() {
    // With `Option` as the axis type, `None` is structure: it does not
    // stand for a leaf (equinox PR 753), and `Some(_)` is not a leaf either.
    let in_axes: (Option<usize>, Option<usize>) = (None, Some(0));
    let err =
        pytree_std::generic::prefix::broadcast_prefix::<pytree_std::Std, _, _>(&in_axes, &args())
            .unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree structures differ (2 mismatches found)\n  \
         tree 1 at [0]: node mismatch: expected None, found a leaf\n  \
         tree 1 at [1]: node mismatch: expected Some(_), found a map of 2 entries"
    );
    // `None` against `None` is fine, and a leaf under `Some` broadcasts.
    let full = (None::<f32>, Some(vec![1.0f32, 2.0]));
    let b: (Option<usize>, Option<Vec<usize>>) =
        pytree_std::nested::broadcast(&(None::<usize>, Some(7usize)), &full).unwrap();
    assert_eq!(b, (None, Some(vec![7, 7])));
}

#[test]
fn map_prefix_hands_the_function_whole_subtrees() {
    // JAX: map(f, [1, 2], [[3, 4], 5]) gives [(1, [3, 4]), (2, 5)].
    let mut seen = Vec::new();
    let out: ((i32, Vec<i32>), (i32, Vec<i32>)) =
        pytree_std::generic::prefix::map_prefix::<pytree_std::Std, _, _, _, _, _>(
            &(1i32, 2i32),
            &(vec![3i32, 4], 5i32),
            |p, sub| {
                seen.push(sub.def().to_string());
                (*p, sub.leaves().iter().map(|x| **x).collect::<Vec<i32>>())
            },
        )
        .unwrap();
    assert_eq!(out, ((1, vec![3, 4]), (2, vec![5])));
    assert_eq!(seen, ["[*, *]", "*"]);
}

#[test]
fn broadcast_spells_a_prefix_out_to_the_full_structure() {
    // broadcast([1, {x: 2}], [(1, 2), {x: [3, 4]}]) gives [(1, 1), {x: [2, 2]}].
    let prefix = (1, BTreeMap::from([("x", 2)]));
    let full = ((1, 2), BTreeMap::from([("x", vec![3, 4])]));
    let b: ((i32, i32), BTreeMap<&str, Vec<i32>>) =
        pytree_std::nested::broadcast(&prefix, &full).unwrap();
    assert_eq!(b, ((1, 1), BTreeMap::from([("x", vec![2, 2])])));
    assert_eq!(
        pytree_std::generic::prefix::broadcast_prefix::<pytree_std::Std, _, _>(&prefix, &full)
            .unwrap(),
        [&1, &1, &2, &2]
    );
}

#[test]
fn flatten_up_to_gives_one_subtree_per_prefix_leaf() {
    let prefix = pytree_std::structure(&(0, 0));
    let subs = pytree_std::nested::flatten_up_to(&prefix, args()).unwrap();
    assert_eq!(subs.len(), 2);
    assert!(subs[0].is_leaf());
    assert_eq!(subs[0].leaves(), [1.0]);
    assert_eq!(subs[1].def().to_string(), "{\"k1\": *, \"k2\": *}");
    let (def, leaves) = subs[1].clone().into_parts();
    let dict: BTreeMap<String, f32> = pytree_std::unflatten(&def, leaves).unwrap();
    assert_eq!(dict, args().1);
}

#[test]
fn flatten_up_to_keeps_subtrees_without_leaves() {
    let prefix = pytree_std::structure(&(0u8, 0u8, 0u8));
    let subs =
        pytree_std::nested::flatten_up_to(&prefix, (Vec::<u8>::new(), None::<u8>, 5u8)).unwrap();
    let defs: Vec<String> = subs.iter().map(|s| s.def().to_string()).collect();
    assert_eq!(defs, ["[]", "None", "*"]);
    assert_eq!(subs[2].leaves(), [5]);
}

#[test]
fn flatten_up_to_lists_every_place_that_is_not_a_prefix() {
    let prefix = pytree_std::structure(&(0, vec![0, 0], BTreeMap::from([("a", 0)])));
    let tree = (vec![1.0], vec![2.0], BTreeMap::from([("b", 3.0)]));
    let err = pytree_std::nested::flatten_up_to(&prefix, tree).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree structures differ (2 mismatches found)\n  \
         at [1]: sequence length mismatch: expected 2, found 1\n  \
         at [2]: map key mismatch; expected key(s): [\"a\"], got key(s): [\"b\"], \
         missing key(s): [\"a\"], extra key(s): [\"b\"]"
    );
}

#[test]
fn a_prefix_deeper_than_the_tree_is_an_error() {
    let err = pytree_std::nested::map_with_prefix::<_, _, f32, (f32, f32)>(
        &(1.0f32, 2.0f32),
        &(0u8, vec![0u8]),
        |x, _| *x,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at [1]: node mismatch: expected a leaf, found a sequence of length 1"
    );
}

#[test]
fn is_prefix_of_follows_jax_rules() {
    let full = pytree_std::structure(&args());
    assert!(TreeDef::leaf().is_prefix_of(&full));
    assert!(pytree_std::structure(&(0, 0)).is_prefix_of(&full));
    assert!(full.is_prefix_of(&full));
    assert!(!full.is_prefix_of(&pytree_std::structure(&(0, 0))));
    assert!(!pytree_std::structure(&(None::<u8>, 0u8)).is_prefix_of(&full));
    assert!(pytree_std::structure(&None::<u8>).is_prefix_of(&pytree_std::structure(&None::<f32>)));
}

// The typed spec tree: the same derived struct with another leaf type.

#[derive(PyTree, Clone, Debug, PartialEq)]
#[pytree(leaf)]
struct Tensor(Vec<f32>);

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Model<T> {
    layers: Vec<Linear<T>>,
    scale: T,
}

fn model() -> Model<Tensor> {
    Model {
        layers: vec![
            Linear {
                w: Tensor(vec![1.0, 2.0]),
                b: Tensor(vec![3.0]),
            },
            Linear {
                w: Tensor(vec![4.0]),
                b: Tensor(vec![5.0, 6.0]),
            },
        ],
        scale: Tensor(vec![7.0]),
    }
}

fn batch_len(t: &Tensor, axis: &Axis) -> Option<usize> {
    match axis {
        Mapped(_) => Some(t.0.len()),
        NotMapped => None,
    }
}

#[test]
fn a_model_of_axes_is_the_in_axes_of_a_model_of_tensors() {
    let in_axes = Model {
        layers: vec![
            Linear {
                w: Mapped(0),
                b: NotMapped,
            },
            Linear {
                w: NotMapped,
                b: Mapped(0),
            },
        ],
        scale: NotMapped,
    };
    let lens: Model<Option<usize>> =
        pytree_std::nested::map_with_prefix(&model(), &in_axes, batch_len).unwrap();
    assert_eq!(
        lens,
        Model {
            layers: vec![
                Linear {
                    w: Some(2),
                    b: None
                },
                Linear {
                    w: None,
                    b: Some(2)
                },
            ],
            scale: None,
        }
    );
}

#[test]
fn a_prefix_of_the_model_maps_whole_fields() {
    // A single axis is a prefix of any model; a tuple is not a `Model`.
    let lens: Model<Option<usize>> =
        pytree_std::nested::map_with_prefix(&model(), &Mapped(0), batch_len).unwrap();
    assert_eq!(lens.layers[1].b, Some(2));
    let err = pytree_std::nested::map_with_prefix::<_, _, Option<usize>, Model<Option<usize>>>(
        &model(),
        &(Mapped(0), NotMapped),
        batch_len,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at <root>: node mismatch: expected Model, found a tuple of arity 2"
    );
}

#[test]
fn a_model_of_options_is_no_prefix_of_a_model_of_tensors() {
    // JAX treats `None` in `in_axes` as a leaf; in typed Rust `Option` is
    // structure (`Some(_)` has a child, `None` has none), so the spec tree
    // takes an axis leaf type (`Model<Axis>` above) instead.
    let in_axes: Model<Option<usize>> = Model {
        layers: vec![
            Linear {
                w: Some(0),
                b: None,
            },
            Linear {
                w: None,
                b: Some(0),
            },
        ],
        scale: None,
    };
    let err = pytree_std::nested::map_with_prefix::<_, _, usize, Model<usize>>(
        &model(),
        &in_axes,
        |t, a| t.0.len() + a,
    )
    .unwrap_err();
    let ErrorKind::Mismatches(all) = err.kind() else {
        panic!("expected one mismatch per field, got {err}");
    };
    assert_eq!(all.len(), 5);
    assert_eq!(
        all[1].to_string(),
        "tree 1 at .layers[0].b: node mismatch: expected a leaf, found None"
    );
}
