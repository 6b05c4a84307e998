//! Key paths as strings (JAX's `keystr(path, simple=, separator=)`) and
//! back (`TreeDef::parse_key_path`), on typed trees and on `Tree<L>`.

use std::collections::BTreeMap;

use pytree_std::{paths::KeyEntry, paths::KeyStr, tree, KeyPath, PyTree, Tree};

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Linear {
    w: f32,
    b: f32,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
enum Act {
    Scaled { by: f32 },
    Pair(f32, f32),
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Model {
    layers: Vec<Linear>,
    act: Act,
    by_id: BTreeMap<u32, f32>,
    by_name: BTreeMap<String, Option<f32>>,
    pair: (f32, [f32; 2]),
}

fn model() -> Model {
    Model {
        layers: vec![Linear { w: 1.0, b: 2.0 }, Linear { w: 3.0, b: 4.0 }],
        act: Act::Scaled { by: 5.0 },
        by_id: BTreeMap::from([(7, 6.0), (11, 7.0)]),
        by_name: BTreeMap::from([("x.y".to_string(), Some(8.0)), ("z".to_string(), None)]),
        pair: (9.0, [10.0, 11.0]),
    }
}

fn keystrs(style: KeyStr<'_>) -> Vec<String> {
    pytree_std::paths::leaves_with_path(&model())
        .iter()
        .map(|(p, _)| p.keystr(style))
        .collect()
}

#[test]
fn the_full_style_is_what_display_prints_and_the_root_is_empty() {
    let paths = keystrs(KeyStr::FULL);
    let shown: Vec<String> = pytree_std::paths::leaves_with_path(&model())
        .iter()
        .map(|(p, _)| p.to_string())
        .collect();
    assert_eq!(paths, shown);
    assert_eq!(paths[4], ".act::Scaled.by");
    assert_eq!(paths[5], ".by_id[7]");
    assert_eq!(paths[7], r#".by_name["x.y"]"#);
    assert_eq!(KeyPath::root().keystr(KeyStr::FULL), "");
    assert_eq!(KeyPath::root().to_string(), "<root>");
}

#[test]
fn the_simple_style_writes_bare_entries_with_a_chosen_separator() {
    assert_eq!(
        keystrs(KeyStr::SIMPLE),
        [
            "layers.0.w",
            "layers.0.b",
            "layers.1.w",
            "layers.1.b",
            "act.Scaled.by",
            "by_id.7",
            "by_id.11",
            "by_name.x.y",
            "pair.0",
            "pair.1.0",
            "pair.1.1",
        ]
    );
    let slashed = keystrs(KeyStr::SIMPLE.separator("/"));
    assert_eq!(slashed[0], "layers/0/w");
    assert_eq!(slashed[7], "by_name/x.y");
    let spaced = keystrs(KeyStr::FULL.separator(" "));
    assert_eq!(spaced[9], ".pair [1] [0]");
}

#[test]
fn every_leaf_path_reads_back_in_every_style() {
    let m = model();
    let def = pytree_std::structure(&m);
    for style in [
        KeyStr::FULL,
        KeyStr::SIMPLE,
        KeyStr::SIMPLE.separator("/"),
        KeyStr::FULL.separator(" "),
        KeyStr::SIMPLE.separator(""),
    ] {
        for (path, leaf) in pytree_std::paths::leaves_with_path(&m) {
            let text = path.keystr(style);
            let back = def.parse_key_path(&text, style).unwrap();
            assert_eq!(back, path, "{text:?} in {style:?}");
            assert_eq!(pytree_std::paths::get(&m, &back).unwrap(), leaf);
        }
    }
}

#[test]
fn the_structure_resolves_what_the_simple_style_leaves_ambiguous() {
    let m = model();
    let def = pytree_std::structure(&m);
    // `x.y` is one key (the separator inside a key), `7` an integer key,
    // `1.0` a sequence index after a tuple index.
    let p = def.parse_key_path("by_name.x.y", KeyStr::SIMPLE).unwrap();
    assert_eq!(p, KeyPath::root().field("by_name").key("x.y".to_string()));
    let p = def.parse_key_path("by_id.7", KeyStr::SIMPLE).unwrap();
    assert_eq!(p.entries()[1], KeyEntry::key(7u32));
    let p = def.parse_key_path("pair.1.0", KeyStr::SIMPLE).unwrap();
    assert_eq!(p.to_string(), ".pair[1][0]");
    // A path may stop at a subtree, and "" is the root.
    let p = def.parse_key_path(".layers[1]", KeyStr::FULL).unwrap();
    assert_eq!(p, KeyPath::root().field("layers").index(1));
    assert!(def.parse_key_path("", KeyStr::SIMPLE).unwrap().is_root());
    assert!(def
        .parse_key_path("<root>", KeyStr::FULL)
        .unwrap()
        .is_root());
}

#[test]
fn a_string_that_names_no_child_is_an_error_at_the_deepest_place_reached() {
    let def = pytree_std::structure(&model());
    let err = def
        .parse_key_path(".layers[2].w", KeyStr::FULL)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"at .layers: cannot read "[2].w" as a key path here: the children are [0], [1]"#
    );
    let err = def
        .parse_key_path("act.Pair.0", KeyStr::SIMPLE)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"at .act: cannot read "Pair.0" as a key path here: the children are Scaled.by"#
    );
    let err = def
        .parse_key_path("layers.0.w.x", KeyStr::SIMPLE)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"at .layers[0].w: cannot read ".x" as a key path here: a leaf has no children"#
    );
    let err = def.parse_key_path(".layersX", KeyStr::FULL).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("at <root>: cannot read \".layersX\""),
        "{err}"
    );
    // A key of the wrong type is not the map's key: `"7"` is a string.
    let err = def
        .parse_key_path(r#".by_id["7"]"#, KeyStr::FULL)
        .unwrap_err();
    pytree_tests::assert_mentions(&err, "the children are [7], [11]");
}

#[test]
fn dynamic_tree_paths_are_written_and_read_the_same_way() {
    let t: Tree<f32> = tree! { "layers" => [{ "w" => 1.0 }, { "w" => 2.0 }], "lr" => 0.1 };
    let def = pytree_std::structure(&t);
    let paths: Vec<String> = pytree_std::paths::leaves_with_path(&t)
        .iter()
        .map(|(p, _)| p.keystr(KeyStr::SIMPLE.separator("/")))
        .collect();
    assert_eq!(paths, ["layers/0/w", "layers/1/w", "lr"]);
    for text in &paths {
        let path = def
            .parse_key_path(text, KeyStr::SIMPLE.separator("/"))
            .unwrap();
        // The simple string with `/` is also the tree's own path syntax.
        assert_eq!(t.subtree(&path), t.subtree(text.as_str()));
        assert_eq!(
            def.parse_key_path(&path.to_string(), KeyStr::FULL).unwrap(),
            path
        );
    }
    let err = def
        .parse_key_path("layers/0/b", KeyStr::SIMPLE.separator("/"))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"at ["layers"][0]: cannot read "b" as a key path here: the children are w"#
    );
}
