//! Partitions with a fill value instead of `None` holes (equinox's
//! `partition(.., replace=)` / `filter(.., replace=)`) and `replace_nones`
//! (optree's `tree_replace_nones`), on typed trees and on `Tree<L>`.

mod models;
mod shaped;

use models::Linear;
use pytree_std::{tree, ErrorKind, PyTree, Tree};
use shaped::{v, Vector};

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Model<T> {
    layers: Vec<Linear<T>>,
    #[pytree(kind = "state")]
    count: T,
    bias: Option<T>,
}

fn model() -> Model<f32> {
    Model {
        layers: vec![Linear { w: 1.0, b: -2.0 }, Linear { w: -3.0, b: 4.0 }],
        count: 5.0,
        bias: None,
    }
}

#[test]
fn partition_fill_gives_two_trees_of_the_same_type() {
    let (params, state) =
        pytree_std::split::partition_fill(model(), |path, _| path.kind() == "param", |_, _| 0.0)
            .unwrap();
    assert_eq!(
        params,
        Model {
            layers: vec![Linear { w: 1.0, b: -2.0 }, Linear { w: -3.0, b: 4.0 }],
            count: 0.0,
            bias: None,
        }
    );
    assert_eq!(state.count, 5.0);
    assert!(state.layers.iter().all(|l| *l == Linear { w: 0.0, b: 0.0 }));
    // Adding the halves gives the tree back.
    let sum = pytree_std::walk::map_n(&params, [&state], |a, [b]| a + b).unwrap();
    assert_eq!(sum, model());
}

#[test]
fn the_fill_sees_the_leaf_it_stands_in_for() {
    let mut filled = Vec::new();
    let (pos, neg) = pytree_std::split::partition_fill(
        model(),
        |_, x| *x > 0.0,
        |path, x| {
            filled.push(path.to_string());
            -x
        },
    )
    .unwrap();
    assert_eq!(filled.len(), 5); // once per leaf, for the side that lacks it
    assert_eq!(pos.layers[0], Linear { w: 1.0, b: 2.0 });
    assert_eq!(neg.layers[0], Linear { w: -1.0, b: -2.0 });
    // Array leaves are filled with zeros of their own shape.
    let arrays = Linear {
        w: v(&[1.0, 2.0]),
        b: v(&[3.0]),
    };
    let only_w = pytree_std::split::partition_fill(
        arrays,
        |path, _| path.to_string() == ".w",
        |_, x: &Vector| Vector(vec![0.0; x.0.len()]),
    )
    .map(|(kept, _)| kept)
    .unwrap();
    assert_eq!(only_w.b, v(&[0.0]));
    assert_eq!(only_w.w, v(&[1.0, 2.0]));
}

#[test]
fn filter_fill_keeps_what_the_predicate_keeps() {
    let kept = pytree_std::split::partition_fill(model(), |_, x| *x > 0.0, |_, _| f32::NAN)
        .map(|(kept, _)| kept)
        .unwrap();
    assert_eq!(kept.layers[1].b, 4.0);
    assert!(kept.layers[1].w.is_nan());
    assert_eq!(kept.bias, None); // structure, not a leaf: untouched
}

#[test]
fn dynamic_trees_are_filled_in_place_of_their_leaves() {
    let t: Tree<i32> = tree! { "a" => 1, "x" => { "c" => -2, "d" => None } };
    let (pos, neg) = pytree_std::split::partition_fill(t.clone(), |_, x| *x > 0, |_, _| 0).unwrap();
    assert_eq!(pos, tree! { "a" => 1, "x" => { "c" => 0, "d" => None } });
    assert_eq!(neg, tree! { "a" => 0, "x" => { "c" => -2, "d" => None } });
    let kept = pytree_std::split::partition_fill(t, |path, _| path.len() == 1, |_, _| 99)
        .map(|(kept, _)| kept)
        .unwrap();
    assert_eq!(kept, tree! { "a" => 1, "x" => { "c" => 99, "d" => None } });
}

#[test]
fn replace_nones_turns_option_holes_back_into_leaves_where_the_type_wants_one() {
    let (kept, rest): (Model<Option<f32>>, Model<Option<f32>>) =
        pytree_std::split::partition(model(), |_, x| *x > 0.0).unwrap();
    let dense: Model<f32> = pytree_std::split::replace_nones(kept, || 0.0).unwrap();
    assert_eq!(dense.layers[0], Linear { w: 1.0, b: 0.0 });
    assert_eq!(dense.count, 5.0);
    // `bias: Option<T>` is an `Option` of `Model<f32>` too: it stays `None`.
    assert_eq!(dense.bias, None);
    let other: Model<f32> = pytree_std::split::replace_nones(rest, || 0.0).unwrap();
    let sum = pytree_std::walk::map_n(&dense, [&other], |a, [b]| a + b).unwrap();
    assert_eq!(sum, model());
    // Plain leaves stay; a `Some` around a subtree is not a leaf.
    let mixed = (Some(1i32), 2i32, None::<i32>);
    let r: (i32, i32, i32) = pytree_std::split::replace_nones(mixed, || -1).unwrap();
    assert_eq!(r, (1, 2, -1));
    let err = pytree_std::split::replace_nones::<_, (i32, i32)>((Some((1i32, 2i32)), 3i32), || 0)
        .unwrap_err();
    assert_eq!(err.path().to_string(), "[0]");
    assert!(
        matches!(err.kind(), ErrorKind::NodeMismatch { .. }),
        "{err}"
    );
    // Another structure elsewhere is an error naming the place.
    let err = pytree_std::split::replace_nones::<_, Vec<i32>>(vec![Some(1i32), None], || 0)
        .and_then(|v| pytree_std::split::replace_nones::<_, (i32, i32)>(v, || 0))
        .unwrap_err();
    pytree_tests::assert_mentions(&err, "expected a tuple of arity 2");
}

#[test]
fn a_dynamic_tree_gets_a_leaf_for_every_none() {
    let t: Tree<f32> = tree! { "w" => [1.0, None], "b" => None };
    let filled: Tree<f32> = pytree_std::split::replace_nones(t, || 0.0).unwrap();
    assert_eq!(filled, tree! { "w" => [1.0, 0.0], "b" => 0.0 });
    // The halves of a typed partition read as a tree: `Some` is looked
    // through and `None` filled.
    let (kept, _): (Linear<Option<f32>>, Linear<Option<f32>>) =
        pytree_std::split::partition(Linear { w: 1.0f32, b: 2.0 }, |path, _| {
            path.to_string() == ".w"
        })
        .unwrap();
    let as_tree: Tree<f32> = pytree_std::split::replace_nones(kept, || -1.0).unwrap();
    assert_eq!(as_tree, tree! { "w" => 1.0, "b" => -1.0 });
}
