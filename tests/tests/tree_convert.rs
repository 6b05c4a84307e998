//! Typed pytrees to `Tree` and back, through key paths: a derived model
//! becomes a tree a user can inspect or edit, and a tree (say, loaded from
//! a checkpoint) becomes the typed model given its TreeDef.

mod models;

use std::collections::HashMap;

use models::{two_layers, Linear, Shape};
use pytree_std::{tree, ErrorKind, PyTree, Tree, TreeDef};

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Mlp<T> {
    layers: Vec<Linear<T>>,
    #[pytree(static)]
    name: String,
    head: Option<T>,
}

fn mlp() -> Mlp<f32> {
    Mlp {
        layers: two_layers(),
        name: "mlp".into(),
        head: Some(5.0),
    }
}

#[test]
fn a_derived_model_becomes_a_tree_keyed_by_field_names() {
    let t = Tree::from_pytree(mlp()).unwrap();
    assert_eq!(
        format!("{t:?}"),
        r#"{"layers": [{"w": 1.0, "b": 2.0}, {"w": 3.0, "b": 4.0}], "head": 5.0}"#
    );
    assert_eq!(t.subtree("layers/1/w").and_then(Tree::as_leaf), Some(&3.0));
    let paths: Vec<String> = t.iter().map(|(p, _)| p.to_string()).collect();
    assert_eq!(paths[0], r#"["layers"][0]["w"]"#);
}

#[test]
fn a_tree_unflattens_from_the_treedef_of_a_derived_struct() {
    let (leaves, def) = pytree_std::flatten(mlp());
    let t: Tree<f32> = pytree_std::unflatten(&def, leaves).unwrap();
    assert_eq!(t, Tree::from_pytree(mlp()).unwrap());
    let err = pytree_std::unflatten::<Tree<f32>>(&def, [1.0, 2.0, 3.0]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .layers[1].b: too few leaves for TreeDef: expected 5, got 3"
    );
}

#[test]
fn the_tree_flattens_to_the_typed_leaves_in_the_same_order() {
    let typed = pytree_std::flatten(mlp()).0;
    let dynamic = pytree_std::flatten(Tree::from_pytree(mlp()).unwrap()).0;
    assert_eq!(typed, dynamic);
}

#[test]
fn a_tree_becomes_the_typed_model_given_its_treedef() {
    let def: TreeDef = pytree_std::structure(&mlp());
    // As if loaded from a file: other key order, edited values.
    let t: Tree<f32> = tree! {
        "head" => 50.0,
        "layers" => [{ "b" => 20.0, "w" => 10.0 }, { "w" => 30.0, "b" => 40.0 }],
    };
    let back: Mlp<f32> = t.to_pytree(&def).unwrap();
    assert_eq!(
        back,
        Mlp {
            layers: vec![Linear { w: 10.0, b: 20.0 }, Linear { w: 30.0, b: 40.0 }],
            name: "mlp".into(),
            head: Some(50.0),
        }
    );
}

#[test]
fn a_round_trip_through_a_tree_gives_the_model_back() {
    let def = pytree_std::structure(&mlp());
    let t = Tree::from_pytree(mlp()).unwrap();
    assert_eq!(t.to_pytree::<Mlp<f32>>(&def).unwrap(), mlp());
}

/// The error of converting [`mlp`]'s tree, edited by `edit`, back to an
/// `Mlp`.
fn edited_mlp_err(edit: impl FnOnce(&mut Tree<f32>)) -> pytree_std::Error {
    let mut t = Tree::from_pytree(mlp()).unwrap();
    edit(&mut t);
    t.to_pytree::<Mlp<f32>>(&pytree_std::structure(&mlp()))
        .unwrap_err()
}

#[test]
fn a_missing_or_extra_key_is_an_error_with_the_path() {
    let err = edited_mlp_err(|t| drop(t.remove("layers/1/b")));
    assert_eq!(err.path().to_string(), r#"["layers"][1]"#);
    assert!(matches!(err.kind(), ErrorKind::KeyMismatch { .. }));
    assert_eq!(
        err.to_string(),
        r#"at ["layers"][1]: map key mismatch; expected key(s): ["w", "b"], got key(s): ["w"], missing key(s): ["b"]"#
    );
    let err = edited_mlp_err(|t| drop(t.insert("layers/0/bias2", 0.0).unwrap()));
    assert_eq!(err.path().to_string(), r#"["layers"][0]"#);
}

#[test]
fn a_wrong_length_or_kind_is_an_error_with_the_path() {
    let err = edited_mlp_err(|t| drop(t.remove("layers/1")));
    assert_eq!(
        err.to_string(),
        r#"at ["layers"]: sequence length mismatch: expected 2, found 1"#
    );
    let err = edited_mlp_err(|t| drop(t.insert("head", Tree::none()).unwrap()));
    assert_eq!(
        err.to_string(),
        r#"at ["head"]: node mismatch: expected a leaf, found None"#
    );
}

#[test]
fn enum_variants_become_one_entry_maps_and_tuple_fields_are_numbered() {
    let shapes = models::shapes();
    let t = Tree::from_pytree(shapes.clone()).unwrap();
    assert_eq!(
        format!("{t:?}"),
        r#"[{"Circle": {"r": 1.0}}, {"Rect": {"0": 2.0, "1": 3.0}}, {"Empty": {}}]"#
    );
    let def = pytree_std::structure(&shapes);
    assert_eq!(t.to_pytree::<Vec<Shape>>(&def).unwrap(), shapes);
}

#[test]
fn typed_map_keys_become_strings_and_options_are_transparent() {
    let m: HashMap<u32, (f32, Option<f32>)> =
        HashMap::from([(2, (1.0, None)), (10, (2.0, Some(3.0)))]);
    let t = Tree::from_pytree(m.clone()).unwrap();
    assert_eq!(format!("{t:?}"), r#"{"2": [1.0, None], "10": [2.0, 3.0]}"#);
    let def = pytree_std::structure(&m);
    assert_eq!(
        t.to_pytree::<HashMap<u32, (f32, Option<f32>)>>(&def)
            .unwrap(),
        m
    );
}

#[test]
fn static_fields_are_not_in_the_tree_but_come_back_from_the_treedef() {
    let t = Tree::from_pytree(mlp()).unwrap();
    assert!(t.subtree("name").is_none());
    let mut other = mlp();
    other.name = "renamed".into();
    let def = pytree_std::structure(&other);
    assert_eq!(t.to_pytree::<Mlp<f32>>(&def).unwrap().name, "renamed");
}

#[test]
fn a_treedef_of_another_shape_is_an_error_not_a_wrong_value() {
    let def = pytree_std::structure(&(1.0f32, 2.0f32));
    let t = tree! { "a" => 1.0f32, "b" => 2.0 };
    let err = t.to_pytree::<(f32, f32)>(&def).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at <root>: node mismatch: expected a sequence of length 2, found a map of 2 entries"
    );
}
