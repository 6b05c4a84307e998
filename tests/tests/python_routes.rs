//! The Rust routes for what Python decides at run time (the guide, "What
//! Python decides at run time"): `is_leaf=` (a namespace, a leaf type,
//! `flatten_up_to` with a prefix) and `none_is_leaf=True` (a namespace in
//! which `Option<L>` is the leaf, a leaf type of one's own, or
//! `replace_nones`).

use pytree_std::{tree, PyTree, Tree, TreeDef};

// `is_leaf=lambda x: isinstance(x, list)`: a `Vec<f32>` is one leaf.
pytree_std::namespace!(pub struct Tensors; leaves = [Vec<f32>]);

// `none_is_leaf=True`: an `Option<f32>` is one leaf, `None` included.
pytree_std::namespace!(pub struct NoneIsLeaf; leaves = [Option<f32>]);

#[derive(PyTree, Clone, Debug, PartialEq)]
#[pytree(namespace = Tensors, namespace = pytree_std::Std)]
struct Layer {
    w: Vec<f32>,
    b: Vec<f32>,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
#[pytree(namespace = NoneIsLeaf)]
struct Masked {
    x: Option<f32>,
    rest: Vec<Option<f32>>,
}

/// An `in_axes` entry: `None` as a leaf of its own type.
#[derive(PyTree, Clone, Copy, Debug, PartialEq)]
#[pytree(leaf)]
enum Axis {
    Mapped(usize),
    NotMapped,
}

fn layer() -> Layer {
    Layer {
        w: vec![1.0, 2.0],
        b: vec![3.0],
    }
}

#[test]
fn is_leaf_by_namespace_makes_a_container_one_leaf_everywhere() {
    let (leaves, def) = pytree_core::ops::basic::flatten::<Tensors, _>(vec![layer(), layer()]);
    assert_eq!(leaves.len(), 4);
    assert_eq!(leaves[0], [1.0, 2.0]);
    assert_eq!(
        def.to_string(),
        "[Layer { w: *, b: * }, Layer { w: *, b: * }]"
    );
    // The same type in the standard namespace has scalar leaves.
    assert_eq!(pytree_std::leaves(&layer()).len(), 3);
}

#[test]
fn is_leaf_for_one_call_is_a_prefix() {
    let prefix = pytree_std::structure(&layer()).one_level();
    let subs = pytree_std::nested::flatten_up_to(&prefix, layer()).unwrap();
    let lists: Vec<&[f32]> = subs.iter().map(|s| s.leaves()).collect();
    assert_eq!(lists, [&[1.0, 2.0][..], &[3.0][..]]);
    // On a dynamic tree: stop at depth one.
    let t: Tree<f32> = tree! { "w" => [1.0, 2.0], "b" => { "x" => 3.0 } };
    let prefix = pytree_std::structure(&t).one_level();
    let subs = pytree_std::nested::flatten_up_to(&prefix, t).unwrap();
    assert_eq!(subs[1].def().to_string(), r#"{"x": *}"#);
}

#[test]
fn none_is_leaf_by_namespace_keeps_none_as_a_leaf() {
    let m = Masked {
        x: None,
        rest: vec![Some(1.0), None],
    };
    let (leaves, def) = pytree_core::ops::basic::flatten::<NoneIsLeaf, _>(m.clone());
    assert_eq!(leaves, [None, Some(1.0), None]);
    assert_eq!(def.to_string(), "Masked { x: *, rest: [*, *] }");
    // Every leaf, `None` included, goes through the function.
    let filled = pytree_core::ops::basic::map::<NoneIsLeaf, _, _>(m, |x| x.or(Some(0.0)));
    assert_eq!(filled.rest, [Some(1.0), Some(0.0)]);
    assert_eq!(filled.x, Some(0.0));
}

#[test]
fn none_is_leaf_by_leaf_type_or_by_filling_the_holes() {
    let in_axes = (Axis::NotMapped, vec![Axis::Mapped(0), Axis::NotMapped]);
    assert_eq!(pytree_std::leaves(&in_axes).len(), 3);
    assert_eq!(pytree_std::structure(&in_axes).to_string(), "(*, [*, *])");
    // Holes of the dynamic tree become leaves.
    let t: Tree<f32> = tree! { "x" => None, "rest" => [1.0, None] };
    assert_eq!(pytree_std::leaves(&t).len(), 1);
    let filled: Tree<f32> = pytree_std::split::replace_nones(t, || f32::NAN).unwrap();
    assert_eq!(pytree_std::leaves(&filled).len(), 3);
    assert_eq!(
        pytree_std::structure(&filled),
        TreeDef::dict_in_order([
            ("x".to_string(), TreeDef::leaf()),
            ("rest".to_string(), TreeDef::seq(vec![TreeDef::leaf(); 2])),
        ])
        .unwrap()
    );
}
