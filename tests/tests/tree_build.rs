//! `Tree<L>`: building one (the `tree!` literal, constructors, paths),
//! reading and changing it by path, iterating with paths, and using it
//! with the library's operations.

use std::collections::HashMap;

use pytree_std::{paths::KeyEntry, tree, ErrorKind, KeyPath, Tree};

fn seed_t1() -> Tree<i64> {
    tree! { "a" => 2, "b" => 30, "x" => { "c" => 4, "d" => 9 } }
}

#[test]
fn the_literal_reads_like_the_python_dict() {
    let t = seed_t1();
    assert_eq!(
        format!("{t:?}"),
        r#"{"a": 2, "b": 30, "x": {"c": 4, "d": 9}}"#
    );
    assert_eq!(t["x"]["c"], Tree::leaf(4));
}

#[test]
fn the_literal_takes_sequences_none_expressions_and_subtrees() {
    let jax: Tree<i32> = tree!([1, { "k1" => 2, "k2" => [3, 4] }, 5]);
    assert_eq!(format!("{jax:?}"), r#"[1, {"k1": 2, "k2": [3, 4]}, 5]"#);

    let sub = tree! { "c" => -4 };
    let key = format!("k{}", 2);
    let t = tree! {
        "neg" => -1,
        "sum" => 2 + 3,
        (key) => None,
        "sub" => sub.clone(),
        "empty_seq" => [],
        "empty_map" => {},
        "nested" => [[1], [-2, 3 * 4]],
    };
    assert_eq!(
        format!("{t:?}"),
        r#"{"neg": -1, "sum": 5, "k2": None, "sub": {"c": -4}, "empty_seq": [], "empty_map": {}, "nested": [[1], [-2, 12]]}"#
    );
    assert!(t["sub"].shares_storage_with(&sub));
}

#[test]
fn an_empty_literal_is_an_empty_map() {
    let t: Tree<f32> = tree! {};
    assert!(t.is_map() && t.is_empty());
    assert_eq!(t, Tree::default());
}

#[test]
#[should_panic(expected = "Tree::dict: at [\"a\"]: the key \"a\" appears twice")]
fn a_repeated_key_in_a_literal_panics() {
    let _t: Tree<i32> = tree! { "a" => 1, "a" => 2 };
}

#[test]
fn try_dict_reports_a_repeated_key() {
    let err = Tree::try_dict([("a", Tree::leaf(1)), ("a", Tree::leaf(2))]).unwrap_err();
    assert_eq!(err.path().to_string(), r#"["a"]"#);
}

#[test]
fn maps_keep_insertion_order_and_flatten_in_it() {
    let t = tree! { "b" => 1, "a" => 2 };
    let (leaves, def) = pytree_std::flatten(t.clone());
    assert_eq!(leaves, [1, 2]);
    assert_eq!(def.to_string(), r#"{"b": *, "a": *}"#);

    let mut sorted = t.clone();
    sorted.sort_keys();
    assert_eq!(pytree_std::flatten(sorted.clone()).0, [2, 1]);
    // Equality pairs entries by key, as for Python dicts.
    assert_eq!(sorted, t);
}

#[test]
fn get_accepts_slash_strings_key_paths_and_arrays() {
    let t = tree! { "layers" => [{ "w" => 1.0, "b" => 2.0 }], "x" => { "c" => 4.0 } };
    assert_eq!(t.subtree("layers/0/b").and_then(Tree::as_leaf), Some(&2.0));
    let typed_path = KeyPath::from_entries(vec![
        KeyEntry::Field("layers"),
        KeyEntry::Index(0),
        KeyEntry::Field("w"),
    ]);
    assert_eq!(t.subtree(&typed_path).and_then(Tree::as_leaf), Some(&1.0));
    assert_eq!(t.subtree(&["x", "c"]).and_then(Tree::as_leaf), Some(&4.0));
    assert_eq!(t.subtree(""), Some(&t));
    assert!(t.subtree("layers/1").is_none());
    assert!(t.subtree("layers/w").is_none());
    assert!(t.subtree("x/c/deeper").is_none());
}

#[test]
#[should_panic(expected = "no key \"q\" in this map (keys: [\"a\", \"b\", \"x\"])")]
fn indexing_a_missing_key_panics_like_std() {
    let _ = &seed_t1()["q"];
}

#[test]
#[should_panic(expected = "cannot index a leaf by the key \"c\"")]
fn indexing_a_leaf_panics() {
    let _ = &seed_t1()["a"]["c"];
}

#[test]
fn get_mut_and_index_mut_change_one_place_and_leave_clones_alone() {
    let original = seed_t1();
    let mut t = original.clone();
    *t.subtree_mut("x/c").unwrap() = Tree::leaf(40);
    t["a"] = Tree::leaf(20);
    assert_eq!(
        t,
        tree! { "a" => 20, "b" => 30, "x" => { "c" => 40, "d" => 9 } }
    );
    assert_eq!(original, seed_t1());
}

#[test]
fn insert_creates_missing_containers_and_returns_what_was_there() {
    let mut t: Tree<i32> = Tree::default();
    assert_eq!(t.insert("x/c", 4).unwrap(), None);
    assert_eq!(t.insert("layers/0/w", 1).unwrap(), None);
    assert_eq!(t.insert("layers/1/w", 2).unwrap(), None);
    assert_eq!(t.insert("x/c", 5).unwrap(), Some(Tree::leaf(4)));
    assert_eq!(
        t,
        tree! { "x" => { "c" => 5 }, "layers" => [{ "w" => 1 }, { "w" => 2 }] }
    );
    let old = t.insert("", Tree::leaf(0)).unwrap();
    assert_eq!(t, Tree::leaf(0));
    assert_eq!(old.map(|o| o.num_leaves()), Some(3));
}

#[test]
fn insert_refuses_to_go_through_a_leaf_or_past_the_end() {
    let mut t = seed_t1();
    let err = t.insert("a/b", 1).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"at ["a"]: node mismatch: expected a map or a sequence, found a leaf"#
    );
    let mut s: Tree<i64> = tree!([1]);
    let err = s.insert("5", 1).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at <root>: index 5 is past the end of a sequence of length 1"
    );
    assert_eq!(t, seed_t1());
    assert_eq!(s, tree!([1]));
}

#[test]
fn remove_takes_the_subtree_out() {
    let mut t = seed_t1();
    assert_eq!(t.remove("x"), Some(tree! { "c" => 4, "d" => 9 }));
    assert_eq!(t.remove("x"), None);
    let mut s: Tree<i32> = tree!([1, 2, 3]);
    assert_eq!(s.remove("0"), Some(Tree::leaf(1)));
    assert_eq!(s, tree!([2, 3]));
}

#[test]
fn iteration_gives_every_leaf_with_its_path_in_pre_order() {
    let t = tree! { "a" => 1, "x" => [2, None, { "c" => 3 }] };
    let found: Vec<(String, i32)> = t.iter().map(|(p, x)| (p.to_string(), *x)).collect();
    assert_eq!(
        found,
        [
            (r#"["a"]"#.to_string(), 1),
            (r#"["x"][0]"#.to_string(), 2),
            (r#"["x"][2]["c"]"#.to_string(), 3),
        ]
    );
    for (path, leaf) in &t {
        assert_eq!(t.subtree(&path).and_then(Tree::as_leaf), Some(leaf));
    }
}

#[test]
fn collecting_paths_and_leaves_gives_the_tree_back() {
    let t = tree! { "a" => 1, "x" => { "c" => [2, 3] }, "y" => 4 };
    let back: Tree<i32> = t.clone().into_iter().collect();
    assert_eq!(back, t);
}

#[test]
fn try_from_paths_refuses_to_drop_a_leaf() {
    let twice = Tree::try_from_paths([("a", 1), ("a", 2)]).unwrap_err();
    assert_eq!(twice.to_string(), r#"at ["a"]: two leaves for one path"#);

    let through = Tree::try_from_paths([("a", 1), ("a/b", 2)]).unwrap_err();
    assert_eq!(
        through.kind(),
        &ErrorKind::NodeMismatch {
            expected: "a map or a sequence".into(),
            found: "a leaf".into()
        }
    );
    assert_eq!(through.path().to_string(), r#"["a"]"#);

    let over = Tree::try_from_paths([("a/b", 1), ("a", 2)]).unwrap_err();
    assert_eq!(
        over.to_string(),
        r#"at ["a"]: a leaf where the paths so far put a map of 1 entries"#
    );

    let gap = Tree::try_from_paths([("s/0", 1), ("s/2", 2)]).unwrap_err();
    assert_eq!(
        gap.to_string(),
        r#"at ["s"]: index 2 is past the end of a sequence of length 1"#
    );
}

#[test]
#[should_panic(expected = "conflicting paths: at [\"a\"]: two leaves for one path")]
fn collecting_conflicting_paths_panics() {
    let path = KeyPath::from_entries(vec![KeyEntry::key(String::from("a"))]);
    let _t: Tree<i32> = [(path.clone(), 1), (path, 2)].into_iter().collect();
}

#[test]
fn a_tree_is_a_pytree_for_every_operation() {
    let t = seed_t1();
    let (leaves, def) = pytree_std::flatten(t.clone());
    assert_eq!(leaves, [2, 30, 4, 9]);
    assert_eq!(
        def.to_string(),
        r#"{"a": *, "b": *, "x": {"c": *, "d": *}}"#
    );
    let back: Tree<i64> = pytree_std::unflatten(&def, leaves).unwrap();
    assert_eq!(back, t);
    assert_eq!(pytree_std::structure(&t), def);
    assert_eq!(pytree_std::leaves(&t), [&2, &30, &4, &9]);
    assert_eq!(
        pytree_std::map(t.clone(), |x| x + 1),
        tree! { "a" => 3, "b" => 31, "x" => { "c" => 5, "d" => 10 } }
    );
    let mut m = t.clone();
    pytree_std::for_each_mut(&mut m, |x| *x *= 10);
    assert_eq!(pytree_std::leaves(&m), [&20, &300, &40, &90]);
    assert_eq!(t, seed_t1(), "the clone was copied on write");
}

#[test]
fn map2_pairs_map_entries_by_key_and_names_mismatches() {
    let a = tree! { "x" => 1, "y" => [2, 3] };
    let b = tree! { "y" => [20, 30], "x" => 10 };
    assert_eq!(
        pytree_std::walk::map_n(&a, [&b], |p, [q]| p + q).unwrap(),
        tree! { "x" => 11, "y" => [22, 33] }
    );
    let short = tree! { "x" => 1, "y" => [2] };
    let err = pytree_std::walk::map_n(&a, [&short], |p, [q]| p + q).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"tree 1 at ["y"]: sequence length mismatch: expected 2, found 1"#
    );
    let kinds = tree! { "x" => [1], "y" => [2, 3] };
    let err = pytree_std::walk::map_n(&a, [&kinds], |p, [q]| p + q).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"tree 1 at ["x"]: node mismatch: expected a leaf, found a sequence of length 1"#
    );
}

#[test]
fn zip_mut_updates_nothing_when_the_structures_differ() {
    let mut a: Tree<i32> = tree! { "p" => 1, "q" => 2, "r" => 3 };
    let b = tree! { "p" => 10, "q" => 20, "s" => 30 };
    assert!(pytree_std::zip_mut([&mut a], [&b], |[x], [y]| *x += y).is_err());
    assert_eq!(
        a,
        tree! { "p" => 1, "q" => 2, "r" => 3 },
        "the root's keys differ: nothing done"
    );

    let mut c: Tree<i32> = tree! { "p" => 1, "q" => [2, 3] };
    let d = tree! { "p" => 10, "q" => [20] };
    assert!(pytree_std::zip_mut([&mut c], [&d], |[x], [y]| *x += y).is_err());
    assert_eq!(
        c,
        tree! { "p" => 1, "q" => [2, 3] },
        "the mismatch is below `p`, whose leaf is still not updated"
    );
}

#[test]
fn map_changes_the_leaf_type_and_try_map_ref_names_the_failing_leaf() {
    let t = tree! { "a" => "1", "b" => ["2", "x"] };
    let err = t
        .try_map_ref(|s| {
            s.parse::<i32>()
                .map_err(|e| pytree_std::Error::custom(e.to_string()))
        })
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"at ["b"][1]: invalid digit found in string"#
    );
    let lens = t.map(str::len);
    assert_eq!(lens, tree! { "a" => 1usize, "b" => [1usize, 1] });
}

#[test]
fn clones_share_storage_until_written() {
    let t = seed_t1();
    let c = t.clone();
    assert!(c.shares_storage_with(&t));
    assert!(c["x"].shares_storage_with(&t["x"]));
    let mut w = c.clone();
    w["x"]["c"] = Tree::leaf(0);
    assert!(!w.shares_storage_with(&t));
    assert!(c["x"].shares_storage_with(&t["x"]));
}

#[test]
fn a_tree_is_send_and_sync_when_its_leaves_are() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Tree<f64>>();
    assert_send_sync::<Tree<String>>();
    let t = seed_t1();
    let total = std::thread::spawn(move || t.iter().map(|(_, x)| *x).sum::<i64>())
        .join()
        .unwrap();
    assert_eq!(total, 45);
}

#[test]
fn accessors_report_the_kind_of_node() {
    let t: Tree<i32> = tree! { "s" => [1, 2], "n" => None, "l" => 3 };
    assert!(t["s"].is_seq() && t["n"].is_none() && t["l"].is_leaf() && t.is_map());
    assert_eq!(t["s"].as_seq().map(<[_]>::len), Some(2));
    assert_eq!(
        t.as_map().map(|m| m.keys().collect::<Vec<_>>()),
        Some(vec!["s", "n", "l"])
    );
    assert_eq!(t.len(), 3);
    assert_eq!(t.depth(), 2);
    assert_eq!(t.num_leaves(), 3);
    assert_eq!(t["l"].clone().into_leaf().ok(), Some(3));
    let from_hash: Tree<i32> = Tree::dict(HashMap::from([("only", Tree::leaf(1))]));
    assert_eq!(from_hash, tree! { "only" => 1 });
}

#[test]
fn a_long_literal_with_expressions_expands() {
    let t: Tree<i32> = tree! {
        "k00" => -1, "k01" => 1, "k02" => 2, "k03" => 3, "k04" => 4, "k05" => 5, "k06" => 6,
        "k07" => 7, "k08" => 8, "k09" => 9, "k10" => 10, "k11" => 11, "k12" => 12, "k13" => 13,
        "k14" => 14, "k15" => 15, "k16" => 16, "k17" => 17, "k18" => 18, "k19" => 19,
        "k20" => 20, "k21" => 21, "k22" => 22, "k23" => 23, "k24" => 24, "k25" => 25,
        "k26" => 26, "k27" => 27, "k28" => 28, "k29" => 29, "k30" => 30, "k31" => 31,
        "k32" => 32, "k33" => 33, "k34" => 34, "k35" => 35, "k36" => 36, "k37" => 37,
        "k38" => 38, "k39" => 39, "k40" => 40, "k41" => 41, "k42" => 42, "k43" => 43,
        "k44" => 44, "k45" => 45, "k46" => 46, "k47" => 47, "k48" => 48, "k49" => 2 * 25,
    };
    assert_eq!(t.len(), 50);
    assert_eq!(t["k00"], Tree::leaf(-1));
    assert_eq!(t["k49"], Tree::leaf(50));
}
