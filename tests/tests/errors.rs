//! Every error kind, produced by real misuse, with its message: the key
//! path, what was expected and what was found.

use std::collections::BTreeMap;

use pytree_std::{ErrorKind, PyTree};

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Linear {
    w: f32,
    b: f32,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Model {
    layers: Vec<Linear>,
    #[pytree(static)]
    activation: &'static str,
}

fn model(n: usize) -> Model {
    Model {
        layers: (0..n)
            .map(|i| Linear {
                w: i as f32,
                b: -(i as f32),
            })
            .collect(),
        activation: "relu",
    }
}

#[test]
fn too_few_leaves() {
    let def = pytree_std::structure(&model(2));
    let err = pytree_std::unflatten::<Model>(&def, [1.0, 2.0]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .layers[1].w: too few leaves for TreeDef: expected 4, got 2"
    );
}

#[test]
fn too_many_leaves() {
    let def = pytree_std::structure(&model(1));
    let err = pytree_std::unflatten::<Model>(&def, [1.0, 2.0, 3.0]).unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::TooManyLeaves {
            expected: 2,
            found: 3
        }
    );
    assert_eq!(
        err.to_string(),
        "at <root>: too many leaves for TreeDef: expected 2, got 3"
    );
}

#[test]
fn node_kind_mismatch() {
    let def = pytree_std::structure(&(1.0f32, 2.0f32));
    let err = pytree_std::unflatten::<Vec<f32>>(&def, [1.0, 2.0]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at <root>: node mismatch: expected a sequence, found a tuple of arity 2"
    );
    let def = pytree_std::structure(&model(1));
    let err = pytree_std::unflatten::<Linear>(&def, [1.0, 2.0]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at <root>: node mismatch: expected Linear, found Model"
    );
    let def = pytree_std::structure(&vec![Some(1.0f32)]);
    let err = pytree_std::unflatten::<Vec<f32>>(&def, [1.0]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at [0]: node mismatch: expected a leaf, found Some(_)"
    );
}

#[test]
fn a_subtree_where_the_type_has_a_leaf() {
    let def = pytree_std::structure(&(1.0f32, (2.0f32, 3.0f32)));
    let err = pytree_std::unflatten::<(f32, f32)>(&def, [1.0, 2.0, 3.0]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at [1]: node mismatch: expected a leaf, found a tuple of arity 2"
    );
}

#[test]
fn leftover_treedef_records_are_an_error() {
    // A hand-built TreeDef with two roots: the builder refuses it, so no
    // TreeDef has records a reader would silently leave unread.
    let mut builder = pytree_std::TreeDefBuilder::new();
    builder.leaf();
    builder.node(pytree_std::NodeRef::None);
    let err = builder.finish().unwrap_err();
    assert_eq!(
        err.to_string(),
        "at <root>: invalid TreeDef: record 1: the tree is already complete; this record is left over"
    );
}

#[test]
fn static_data_mismatch() {
    let a = model(1);
    let b = Model {
        activation: "tanh",
        ..model(1)
    };
    let err = pytree_std::walk::map_n(&a, [&b], |x, [y]| x + y).unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::StaticMismatch {
            expected: "\"relu\"".into(),
            found: "\"tanh\"".into()
        }
    );
    assert_eq!(
        err.to_string(),
        "tree 1 at .activation: static data mismatch: expected \"relu\", found \"tanh\""
    );
}

#[test]
fn map_key_mismatch_lists_missing_and_extra_keys() {
    let a = BTreeMap::from([("a", 1), ("b", 2)]);
    let b = BTreeMap::from([("a", 1), ("c", 3)]);
    let err = pytree_std::walk::map_n(&a, [&b], |x, [y]| x + y).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at <root>: map key mismatch; expected key(s): [\"a\", \"b\"], got key(s): [\"a\", \"c\"], \
         missing key(s): [\"b\"], extra key(s): [\"c\"]"
    );
}

#[test]
fn sequence_length_mismatch() {
    let err = pytree_std::walk::map_n(&model(2), [&model(3)], |x, [y]| x + y).unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::LengthMismatch {
            expected: 2,
            found: 3
        }
    );
    assert_eq!(
        err.to_string(),
        "tree 1 at .layers: sequence length mismatch: expected 2, found 3"
    );
}

#[test]
fn option_hole_mismatch() {
    let err = pytree_std::map_n(&(Some(1), 2), [&(Some(1), 2), &(None, 2)], |a, [b, c]| {
        a + b + c
    })
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 2 at [0]: node mismatch: expected Some(_), found None"
    );
}

#[test]
fn map_keys_of_another_type_are_a_static_mismatch() {
    let def = pytree_std::structure(&BTreeMap::from([(1u8, 1.0f32)]));
    let err = pytree_std::unflatten::<BTreeMap<String, f32>>(&def, [1.0]).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::StaticMismatch { .. }),
        "{err}"
    );
}

#[test]
fn zip_mut_updates_in_place_and_reports_mismatches() {
    let mut params = model(2);
    let grads = model(2);
    pytree_std::zip_mut([&mut params], [&grads], |[p], [g]| *p -= 0.5 * g).unwrap();
    assert_eq!(pytree_std::flatten(params.clone()).0, [0.0, 0.0, 0.5, -0.5]);
    let err = pytree_std::zip_mut([&mut params], [&model(1)], |[p], [g]| *p -= g).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at .layers: sequence length mismatch: expected 2, found 1"
    );
}

/// Two types of one name in different modules (a `Bert` of one crate and
/// of another): messages name them by module path, never "expected Bert,
/// found Bert".
mod same_name {
    pub mod hub {
        #[derive(pytree_std::PyTree, Clone, Debug, PartialEq)]
        pub struct Bert {
            pub w: f32,
        }
    }
    pub mod local {
        #[derive(pytree_std::PyTree, Clone, Debug, PartialEq)]
        pub struct Bert {
            pub w: f32,
        }
    }
}

#[test]
fn types_of_one_name_in_two_modules_are_named_by_module_path() {
    use same_name::{hub, local};
    let def = pytree_std::structure(&hub::Bert { w: 1.0 });
    let err = pytree_std::unflatten::<local::Bert>(&def, [1.0f32]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at <root>: node mismatch: expected errors::same_name::local::Bert, \
         found errors::same_name::hub::Bert"
    );
    // A TreeDef read back from JSON takes the by-value path.
    let json = serde_json::to_string(&def).unwrap();
    let back: pytree_std::TreeDef = serde_json::from_str(&json).unwrap();
    let err = pytree_std::unflatten::<local::Bert>(&back, [1.0f32]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at <root>: node mismatch: expected errors::same_name::local::Bert, \
         found errors::same_name::hub::Bert"
    );
    // Two TreeDefs lined up.
    let other = pytree_std::structure(&local::Bert { w: 1.0 });
    let err = def.broadcast_to_common_suffix(&other).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at <root>: node mismatch: expected errors::same_name::hub::Bert, \
         found errors::same_name::local::Bert"
    );
    // Types of different names keep their short names.
    let err = pytree_std::unflatten::<Linear>(&def, [1.0f32]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at <root>: node mismatch: expected Linear, found Bert"
    );
}
