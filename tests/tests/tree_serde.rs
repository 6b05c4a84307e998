//! serde (feature `serde`, on for these tests): a JSON document round-trips
//! through `Tree<serde_json::Value>`, a `TreeDef` round-trips (struct
//! schemas interned), any pytree round-trips as TreeDef + leaves, and a
//! malformed document is an error with the path, never a panic.

use pytree_std::serialized::Serialized;
use pytree_std::tree::MAX_SERDE_DEPTH;
use pytree_std::{tree, NodeView, PyTree, Tree, TreeDef};
use serde_json::{json, Value};

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Linear<T> {
    w: T,
    b: T,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Mlp<T> {
    layers: Vec<Linear<T>>,
    #[pytree(static)]
    name: String,
    #[pytree(static)]
    width: usize,
    head: Option<T>,
}

fn mlp() -> Mlp<f32> {
    Mlp {
        layers: vec![Linear { w: 1.0, b: 2.0 }, Linear { w: 3.0, b: 4.0 }],
        name: "mlp".into(),
        width: 8,
        head: None,
    }
}

const DOCUMENT: &str = r#"{"name":"run-7","lr":0.001,"layers":[{"w":[1,2],"b":0},{"w":[3,4],"b":-1}],"tags":["a","b"],"done":false,"parent":null}"#;

#[test]
fn a_json_document_round_trips_through_a_tree_of_values() {
    let t: Tree<Value> = serde_json::from_str(DOCUMENT).unwrap();
    assert_eq!(t["name"], Tree::leaf(json!("run-7")));
    assert_eq!(
        t.subtree("layers/1/w/0").and_then(Tree::as_leaf),
        Some(&json!(3))
    );
    assert!(t["parent"].is_none());
    assert_eq!(serde_json::to_string(&t).unwrap(), DOCUMENT);
}

#[test]
fn document_order_is_kept_and_scalars_are_leaves() {
    let t: Tree<Value> = serde_json::from_str(r#"{"z": 1, "a": [true, "s"], "m": {}}"#).unwrap();
    assert_eq!(
        t.as_map().unwrap().keys().collect::<Vec<_>>(),
        ["z", "a", "m"]
    );
    assert_eq!(t.num_leaves(), 3);
    assert_eq!(
        format!("{t:?}"),
        r#"{"z": Number(1), "a": [Bool(true), String("s")], "m": {}}"#
    );
}

#[test]
fn a_numeric_tree_reads_json_numbers_as_its_leaf_type() {
    let t: Tree<f64> = serde_json::from_str(r#"{"a": 2, "x": {"c": 4.5, "d": [9]}}"#).unwrap();
    assert_eq!(t, tree! { "a" => 2.0, "x" => { "c" => 4.5, "d" => [9.0] } });
    assert_eq!(
        serde_json::to_value(&t).unwrap(),
        json!({"a": 2.0, "x": {"c": 4.5, "d": [9.0]}})
    );
}

#[test]
fn a_malformed_document_is_an_error_with_the_path() {
    let wrong_leaf =
        serde_json::from_str::<Tree<f64>>(r#"{"a": 1, "x": {"c": [1, "no"]}}"#).unwrap_err();
    assert_eq!(
        wrong_leaf.to_string(),
        r#"at ["x"]["c"][1]: invalid type: string "no", expected f64 at line 1 column 28"#
    );
    let syntax = serde_json::from_str::<Tree<f64>>(r#"{"a": 1, "x": [1 2]}"#).unwrap_err();
    assert!(
        syntax
            .to_string()
            .starts_with(r#"at ["x"]: expected `,` or `]`"#),
        "{syntax}"
    );
    let repeated = serde_json::from_str::<Tree<f64>>(r#"{"a": 1, "a": 2}"#).unwrap_err();
    assert!(
        repeated
            .to_string()
            .starts_with(r#"at ["a"]: the key "a" appears twice"#),
        "{repeated}"
    );
    let truncated = serde_json::from_str::<Tree<f64>>(r#"{"a": [1"#).unwrap_err();
    assert!(
        truncated.to_string().starts_with(r#"at ["a"]: EOF"#),
        "{truncated}"
    );
}

#[test]
fn too_deep_a_tree_is_refused_both_ways() {
    let mut t = Tree::leaf(1.0f64);
    for _ in 0..MAX_SERDE_DEPTH {
        t = Tree::seq([t]);
    }
    let json = serde_json::to_string(&t).unwrap();
    let back: Tree<f64> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, t);

    let deeper = Tree::seq([t]);
    let err = serde_json::to_string(&deeper).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the tree is 128 levels deep; serde reads and writes at most 127"
    );
    // A `Value` has no depth limit of its own; the tree's limit applies.
    let mut value = json!(1.0);
    for _ in 0..=MAX_SERDE_DEPTH {
        value = Value::Array(vec![value]);
    }
    let err = <Tree<f64> as serde::Deserialize>::deserialize(value).unwrap_err();
    pytree_tests::assert_mentions(&err, "the document is deeper than 127 levels");
}

#[test]
fn a_treedef_round_trips_and_equals_the_original() {
    let def = pytree_std::structure(&mlp());
    let json = serde_json::to_string(&def).unwrap();
    let back: TreeDef = serde_json::from_str(&json).unwrap();
    assert_eq!(back, def);
    assert_eq!(back.to_string(), def.to_string());
    let rebuilt: Mlp<f32> = pytree_std::unflatten(&back, [5.0, 6.0, 7.0, 8.0]).unwrap();
    assert_eq!(rebuilt.layers[1].b, 8.0);
    assert_eq!((rebuilt.name.as_str(), rebuilt.width), ("mlp", 8));
}

#[test]
fn the_treedef_format_is_flat_and_readable() {
    let def = pytree_std::structure(&vec![Linear { w: 0.0f32, b: 0.0 }]);
    insta::assert_snapshot!("treedef_json", serde_json::to_string_pretty(&def).unwrap());
    let map_def = pytree_std::structure(
        &tree! { "a" => 1, "x" => (None::<i32>).map_or(Tree::none(), Tree::leaf) },
    );
    assert_eq!(
        serde_json::to_string(&map_def).unwrap(),
        r#"{"schemas":[],"nodes":[{"map":{"len":2,"keys":{"String":["a","x"]}}},{"leaves":1},"none"]}"#
    );
}

#[test]
fn deserialized_schemas_are_interned_once() {
    let json = serde_json::to_string(&pytree_std::structure(&mlp())).unwrap();
    let a: TreeDef = serde_json::from_str(&json).unwrap();
    let b: TreeDef = serde_json::from_str(&json).unwrap();
    let (NodeView::Struct { schema: sa, .. }, NodeView::Struct { schema: sb, .. }) =
        (a.root_node(), b.root_node())
    else {
        panic!("the root is a struct");
    };
    assert!(std::ptr::eq(sa, sb));
}

#[test]
fn a_malformed_treedef_is_an_error() {
    let cases = [
        (
            r#"{"schemas":[],"nodes":[{"seq":2},{"leaves":1}]}"#,
            "the TreeDef is incomplete: the records end with 1 subtree(s) still to describe",
        ),
        (
            r#"{"schemas":[],"nodes":[{"leaves":1},{"leaves":1}]}"#,
            "TreeDef record 1: the tree is complete, 1 record(s) left over",
        ),
        (
            r#"{"schemas":[],"nodes":[{"struct":{"schema":3,"statics":[]}}]}"#,
            "TreeDef record 0: no schema number 3",
        ),
        (
            r#"{"schemas":[],"nodes":[{"map":{"len":2,"keys":{"String":["a"]}}},{"leaves":2}]}"#,
            "TreeDef record 0: a map of 2 entries with 1 key(s)",
        ),
        (
            r#"{"schemas":[],"nodes":[{"seq":1},{"leaves":0}]}"#,
            "TreeDef record 1: a run of 0 leaves",
        ),
    ];
    for (json, message) in cases {
        let err = serde_json::from_str::<TreeDef>(json).unwrap_err();
        assert!(err.to_string().starts_with(message), "{json}: {err}");
    }
    assert!(serde_json::from_str::<TreeDef>(r#"{"nodes": 3}"#).is_err());
}

#[test]
fn a_static_field_of_an_unsupported_type_cannot_be_serialized() {
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    enum Activation {
        Relu,
    }
    #[derive(PyTree)]
    struct Layer {
        w: f32,
        #[pytree(static)]
        act: Activation,
    }
    let def = pytree_std::structure(&Layer {
        w: 1.0,
        act: Activation::Relu,
    });
    let err = serde_json::to_string(&def).unwrap_err();
    assert!(
        err.to_string().starts_with("the static value Relu of type tree_serde::a_static_field_of_an_unsupported_type_cannot_be_serialized::Activation cannot be serialized"),
        "{err}"
    );
}

#[test]
fn any_pytree_round_trips_as_treedef_and_leaves() {
    let json = serde_json::to_string(&Serialized(mlp())).unwrap();
    let Serialized(back): Serialized<Mlp<f32>> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, mlp());
}

#[test]
fn a_serialized_pytree_of_another_structure_is_an_error() {
    let json = serde_json::to_string(&Serialized((1.0f32, 2.0f32))).unwrap();
    let err = serde_json::from_str::<Serialized<Linear<f32>>>(&json).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("at <root>: node mismatch: expected Linear, found a tuple of arity 2"),
        "{err}"
    );
    let short = json.replace("[1.0,2.0]", "[1.0]");
    let err = serde_json::from_str::<Serialized<(f32, f32)>>(&short).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("at [1]: too few leaves for TreeDef: expected 2, got 1"),
        "{err}"
    );
}

#[test]
fn a_typed_model_saved_as_a_tree_loads_back_through_its_treedef() {
    // Save: the parameters as a readable document, the structure beside it.
    let params = serde_json::to_string(&Tree::from_pytree(mlp()).unwrap()).unwrap();
    let structure = serde_json::to_string(&pytree_std::structure(&mlp())).unwrap();
    assert_eq!(
        params,
        r#"{"layers":[{"w":1.0,"b":2.0},{"w":3.0,"b":4.0}],"head":null}"#
    );
    // Load.
    let t: Tree<f32> = serde_json::from_str(&params).unwrap();
    let def: TreeDef = serde_json::from_str(&structure).unwrap();
    assert_eq!(t.to_pytree::<Mlp<f32>>(&def).unwrap(), mlp());
}
