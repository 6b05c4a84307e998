//! Building and inspecting TreeDefs node by node (optree's
//! `treespec_leaf/none/tuple/list/dict`, `child`, `entries`, `one_level`,
//! `walk` (`fold` here), `transform`; JAX's `treedef_tuple`, `treedef_children`,
//! `flatten_one_level`), on typed structures and on `Tree<L>`'s.

use std::collections::{BTreeMap, HashMap};

use pytree_std::{tree, NodeView, PyTree, Tree, TreeDef};

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Linear {
    w: f32,
    b: Vec<f32>,
    #[pytree(static)]
    name: String,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
enum Shape {
    Circle { r: f32 },
    Square(f32),
}

fn linear() -> Linear {
    Linear {
        w: 1.0,
        b: vec![2.0, 3.0],
        name: "l".into(),
    }
}

#[test]
fn the_constructors_give_the_treedefs_of_the_matching_values() {
    let leaf = TreeDef::leaf;
    assert_eq!(TreeDef::none(), pytree_std::structure(&None::<f32>));
    assert_eq!(
        TreeDef::some(TreeDef::tuple([leaf(), leaf()])),
        pytree_std::structure(&Some((1.0f32, 2.0f32)))
    );
    assert_eq!(
        TreeDef::seq(vec![TreeDef::seq([leaf()]); 3]),
        pytree_std::structure(&vec![vec![0u8]; 3])
    );
    assert_eq!(TreeDef::tuple([]).to_string(), "()");
    assert_eq!(TreeDef::seq([]), pytree_std::structure(&Vec::<f32>::new()));
    let dict = TreeDef::dict([(2u32, TreeDef::some(leaf())), (1u32, TreeDef::none())]).unwrap();
    assert_eq!(
        dict,
        pytree_std::structure(&BTreeMap::from([(1u32, None), (2u32, Some(0.0f32))]))
    );
    assert_eq!(dict.to_string(), "{1: None, 2: Some(*)}");
    let hash = HashMap::from([("b".to_string(), 1.0f32), ("a".to_string(), 2.0)]);
    let by_name = TreeDef::dict([("b".to_string(), leaf()), ("a".to_string(), leaf())]).unwrap();
    assert_eq!(by_name, pytree_std::structure(&hash));
    // Built equal means hashed equal and read back as the value.
    let v: HashMap<String, f32> = pytree_std::unflatten(&by_name, [2.0, 1.0]).unwrap();
    assert_eq!(v, hash);
}

#[test]
fn dynamic_tree_structures_are_built_in_insertion_order() {
    let t: Tree<f32> = tree! { "w" => 1.0, "x" => { "c" => None, "d" => [2.0, 3.0] } };
    let def = TreeDef::dict_in_order([
        ("w".to_string(), TreeDef::leaf()),
        (
            "x".to_string(),
            TreeDef::dict_in_order([
                ("c".to_string(), TreeDef::none()),
                ("d".to_string(), TreeDef::seq(vec![TreeDef::leaf(); 2])),
            ])
            .unwrap(),
        ),
    ])
    .unwrap();
    assert_eq!(def, pytree_std::structure(&t));
    let back: Tree<f32> = pytree_std::unflatten(&def, [1.0, 2.0, 3.0]).unwrap();
    assert_eq!(back, t);
    let err = TreeDef::dict_in_order([
        ("a".to_string(), TreeDef::leaf()),
        ("a".to_string(), TreeDef::leaf()),
    ])
    .unwrap_err();
    assert_eq!(err.to_string(), r#"at ["a"]: the key "a" appears twice"#);
}

#[test]
fn from_node_rebuilds_any_node_over_its_children() {
    for def in [
        pytree_std::structure(&linear()),
        pytree_std::structure(&Shape::Circle { r: 1.0 }),
        pytree_std::structure(&BTreeMap::from([("k", (1u8, 2u8))])),
        pytree_std::structure(&Some(vec![1u8])),
        pytree_std::structure(&tree! { "a" => 1, "b" => [2, None] }),
        TreeDef::none(),
        TreeDef::leaf(),
    ] {
        let rebuilt = TreeDef::from_node(&def.root_node(), def.children().unwrap()).unwrap();
        assert_eq!(rebuilt, def, "{def}");
        assert_eq!(def.num_children(), def.children().unwrap().len());
    }
    let err = TreeDef::from_node(&NodeView::Seq(2), [TreeDef::leaf()]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at <root>: a sequence of length 2 takes 2 children, got 1"
    );
    let err = TreeDef::from_node(&NodeView::Leaf, [TreeDef::leaf()]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at <root>: a leaf takes no children, got 1"
    );
}

#[test]
fn child_and_entries_say_what_is_below_the_root() {
    let def = pytree_std::structure(&linear());
    assert_eq!(def.child(1).unwrap().to_string(), "[*, *]");
    assert_eq!(def.child(2), None);
    let entries: Vec<String> = def
        .entries()
        .unwrap()
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert_eq!(entries, [".w", ".b"]);
    let circle = pytree_std::structure(&Shape::Circle { r: 1.0 });
    assert_eq!(circle.entries().unwrap()[0].to_string(), "::Circle.r");
    let square = pytree_std::structure(&Shape::Square(1.0));
    assert_eq!(square.entries().unwrap()[0].to_string(), "::Square.0");
    assert!(pytree_std::structure(&Some(1u8)).entries().unwrap()[0].is_root());
    let t: Tree<f32> = tree! { "w" => 1.0, "b" => [2.0] };
    let entries: Vec<String> = pytree_std::structure(&t)
        .entries()
        .unwrap()
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert_eq!(entries, [r#"["w"]"#, r#"["b"]"#]);
    assert!(TreeDef::leaf().entries().unwrap().is_empty());
}

#[test]
fn one_level_keeps_the_root_and_its_static_data() {
    let def = pytree_std::structure(&linear());
    let one = def.one_level();
    assert_eq!(one.to_string(), r#"Linear { w: *, b: *, name: "l" }"#);
    assert!(one.is_one_level());
    assert!(matches!(one.root_node(), NodeView::Struct { .. }));
    assert_eq!(one.compose(&TreeDef::leaf()).unwrap(), one);
    let t: Tree<f32> = tree! { "x" => { "c" => 1.0 } };
    assert_eq!(
        pytree_std::structure(&t).one_level().to_string(),
        r#"{"x": *}"#
    );
    assert_eq!(TreeDef::leaf().one_level(), TreeDef::leaf());
}

#[test]
fn fold_folds_the_structure_with_the_leaves() {
    let def = pytree_std::structure(&(linear(), Some(4.0f32), None::<f32>));
    // A Python-like literal with the given leaves.
    let shown = def
        .fold(
            ["1", "2", "3", "4"],
            str::to_string,
            |node, kids| match node {
                NodeView::Struct { schema, .. } => {
                    format!("{}({})", schema.type_name(), kids.join(", "))
                }
                NodeView::Seq(_) => format!("[{}]", kids.join(", ")),
                NodeView::Tuple(_) => format!("({})", kids.join(", ")),
                NodeView::Map { .. } => format!("{{{}}}", kids.join(", ")),
                NodeView::Some => kids.concat(),
                NodeView::None => "None".to_string(),
                NodeView::Leaf => unreachable!("leaves go to f_leaf"),
            },
        )
        .unwrap();
    assert_eq!(shown, "(Linear(1, [2, 3]), 4, None)");
    let err = def
        .fold([1, 2], |x| x, |_, kids| kids.iter().sum())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "at [0].b[1]: too few leaves for TreeDef: expected 4, got 2"
    );
    let err = def
        .fold(0..9, |x| x, |_, kids| kids.iter().sum())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "at <root>: too many leaves for TreeDef: expected 4, got 9"
    );
    let t: Tree<i32> = tree! { "a" => 1, "x" => { "c" => 2, "d" => 3 } };
    let leaves = pytree_std::leaves(&t).into_iter().copied();
    let total = pytree_std::structure(&t)
        .fold(leaves, |x| x, |_, kids| kids.iter().sum())
        .unwrap();
    assert_eq!(total, 6);
}

#[test]
fn transform_rewrites_nodes_and_leaves_with_their_paths() {
    // Every `Vec` of the structure becomes a tuple, every leaf below `.b`
    // a pair: the TreeDef of a model whose bias holds (value, grad).
    let def = pytree_std::structure(&linear());
    let pair = TreeDef::tuple([TreeDef::leaf(), TreeDef::leaf()]);
    let t = def
        .transform(
            |_, node| {
                Ok(match node.root_node() {
                    NodeView::Seq(n) => TreeDef::tuple(vec![TreeDef::leaf(); n]),
                    _ => node.clone(),
                })
            },
            |path| {
                if path.to_string().starts_with(".b") {
                    pair.clone()
                } else {
                    TreeDef::leaf()
                }
            },
        )
        .unwrap();
    assert_eq!(
        t.to_string(),
        r#"Linear { w: *, b: ((*, *), (*, *)), name: "l" }"#
    );
    // A node may become a deeper structure: its leaves, in order, take
    // the children.
    let nested = pytree_std::structure(&(1u8, 2u8, 3u8))
        .transform(
            |_, _| {
                Ok(TreeDef::tuple([
                    TreeDef::tuple([TreeDef::leaf(), TreeDef::leaf()]),
                    TreeDef::leaf(),
                ]))
            },
            |_| TreeDef::leaf(),
        )
        .unwrap();
    assert_eq!(nested.to_string(), "((*, *), *)");
    // Errors from f_node are placed at the node.
    let t: Tree<f32> = tree! { "x" => { "c" => 1.0 } };
    let err = pytree_std::structure(&t)
        .transform(
            |path, node| {
                if path.is_root() {
                    Ok(node.clone())
                } else {
                    Err(pytree_std::Error::custom("no nested maps"))
                }
            },
            |_| TreeDef::leaf(),
        )
        .unwrap_err();
    assert_eq!(err.to_string(), r#"at ["x"]: no nested maps"#);
}

#[test]
fn flatten_one_level_gives_the_children_as_subtrees() {
    let (children, one) =
        pytree_std::generic::prefix::flatten_one_level::<pytree_std::Std, _>(linear()).unwrap();
    assert_eq!(one.to_string(), r#"Linear { w: *, b: *, name: "l" }"#);
    assert_eq!(children.len(), 2);
    assert!(children[0].is_leaf());
    assert_eq!(children[1].leaves(), [2.0, 3.0]);
    // Rebuilt one level up: each child unflattened as its own type, then
    // the one-level structure over the children's values.
    let (def_b, leaves_b) = children[1].clone().into_parts();
    let b: Vec<f32> = pytree_std::unflatten(&def_b, leaves_b).unwrap();
    assert_eq!(b, [2.0, 3.0]);
    let whole = one.compose(&TreeDef::leaf()).unwrap();
    assert_eq!(whole, one);
    let t: Tree<f32> = tree! { "w" => 1.0, "b" => [2.0, 3.0], "n" => None };
    let (children, one) =
        pytree_std::generic::prefix::flatten_one_level::<pytree_std::Std, _>(t).unwrap();
    assert_eq!(one.to_string(), r#"{"w": *, "b": *, "n": *}"#);
    assert_eq!(children[2].def().to_string(), "None");
    assert!(children[2].leaves().is_empty());
    let err =
        pytree_std::generic::prefix::flatten_one_level::<pytree_std::Std, _>(1.0f32).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at <root>: node mismatch: expected a node, found a leaf"
    );
}
