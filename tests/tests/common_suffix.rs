//! Prefix predicates (strict prefix, suffix, strict suffix: optree's
//! `treespec_is_prefix` / `treespec_is_suffix`) and the common suffix of
//! two trees (optree's `tree_broadcast_common`,
//! `broadcast_to_common_suffix`), on typed trees and on `Tree<L>`.

use std::collections::BTreeMap;

use pytree_std::{tree, ErrorKind, PyTree, Tree, TreeDef};

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Linear<W, B> {
    w: W,
    b: B,
}

#[test]
fn strict_prefixes_and_suffixes_follow_the_prefix_relation() {
    let full = pytree_std::structure(&(1.0f32, vec![2.0f32, 3.0], None::<f32>));
    let prefix = pytree_std::structure(&(0u8, 0u8, None::<u8>));
    assert!(prefix.is_prefix_of(&full));
    assert!(prefix.is_strict_prefix_of(&full));
    assert!(full.is_suffix_of(&prefix));
    assert!(full.is_strict_suffix_of(&prefix));
    // Not strict: the same structure.
    assert!(full.is_prefix_of(&full) && !full.is_strict_prefix_of(&full));
    assert!(full.is_suffix_of(&full) && !full.is_strict_suffix_of(&full));
    // Not a prefix at all: `None` only stands for `None`.
    let holes = pytree_std::structure(&(None::<u8>, 0u8, None::<u8>));
    assert!(!holes.is_prefix_of(&full));
    assert!(!holes.is_strict_prefix_of(&full));
    assert!(!full.is_suffix_of(&holes));
    // A leaf standing for a leaf is not strict, for any other subtree it is.
    let same_leaves = pytree_std::structure(&(0u8, vec![0u8, 0], None::<u8>));
    assert!(same_leaves.is_prefix_of(&full) && !same_leaves.is_strict_prefix_of(&full));
    assert!(TreeDef::leaf().is_strict_prefix_of(&TreeDef::none()));
    assert!(TreeDef::leaf().is_strict_prefix_of(&TreeDef::tuple([])));
    assert!(!TreeDef::leaf().is_strict_prefix_of(&TreeDef::leaf()));
}

#[test]
fn static_fields_and_keys_must_agree_for_a_prefix() {
    let a = pytree_std::structure(&BTreeMap::from([("a", 0u8), ("b", 0u8)]));
    let b = pytree_std::structure(&BTreeMap::from([("a", (0u8, 0u8)), ("c", (0u8, 0u8))]));
    assert!(!a.is_prefix_of(&b));
    assert!(!a.is_strict_prefix_of(&b));
    assert!(!b.is_suffix_of(&a));
}

#[test]
fn dynamic_tree_prefixes_pair_map_entries_by_key() {
    let full: Tree<i32> = tree! { "x" => { "c" => 1, "d" => [2, 3] }, "w" => 4 };
    let prefix: Tree<i32> = tree! { "w" => 0, "x" => 0 };
    let (full, prefix) = (pytree_std::structure(&full), pytree_std::structure(&prefix));
    assert!(prefix.is_strict_prefix_of(&full));
    assert!(full.is_strict_suffix_of(&prefix));
    // The same entries in another order: a prefix, not a strict one.
    let reordered: Tree<i32> = tree! { "w" => 4, "x" => { "d" => [2, 3], "c" => 1 } };
    let reordered = pytree_std::structure(&reordered);
    assert_ne!(reordered, full);
    assert!(reordered.is_prefix_of(&full) && !reordered.is_strict_prefix_of(&full));
    assert!(full.is_suffix_of(&reordered) && !full.is_strict_suffix_of(&reordered));
}

#[test]
fn broadcast_common_spells_out_each_side_where_the_other_goes_deeper() {
    // optree: tree_broadcast_common([1, (2, 3), 4], [5, 6, (7, 8)])
    //   == ([1, (2, 3), (4, 4)], [5, (6, 6), (7, 8)])
    type Common = (i32, (i32, i32), (i32, i32));
    let (a, b): (Common, Common) = pytree_std::nested::broadcast_common(
        (1i32, (2i32, 3i32), 4i32),
        (5i32, 6i32, (7i32, 8i32)),
    )
    .unwrap();
    assert_eq!(a, (1, (2, 3), (4, 4)));
    assert_eq!(b, (5, (6, 6), (7, 8)));
    // Each side keeps its own leaf type.
    type Pair<L> = Linear<L, (L, L)>;
    let (w, names): (Pair<f32>, Pair<String>) = pytree_std::nested::broadcast_common(
        Linear {
            w: 1.0f32,
            b: (2.0f32, 3.0f32),
        },
        Linear {
            w: "w".to_string(),
            b: "b".to_string(),
        },
    )
    .unwrap();
    assert_eq!(w.b, (2.0, 3.0));
    assert_eq!(names.b, ("b".to_string(), "b".to_string()));
    let full = pytree_std::structure(&w);
    let def_a = pytree_std::structure(&Linear {
        w: 0u8,
        b: (0u8, 0u8),
    });
    assert_eq!(
        def_a
            .broadcast_to_common_suffix(&pytree_std::structure(&Linear { w: 0u8, b: 0u8 }))
            .unwrap()
            .to_string(),
        full.to_string()
    );
}

#[test]
fn broadcast_common_lists_every_place_the_structures_cannot_meet() {
    type T = (i32, Vec<i32>, Option<i32>);
    let err = pytree_std::nested::broadcast_common::<_, _, T, T>(
        (1i32, vec![1i32, 2, 3], Some(1i32)),
        (BTreeMap::from([("a", 1i32)]), vec![1i32, 2], None::<i32>),
    )
    .unwrap_err();
    let ErrorKind::Mismatches(all) = err.kind() else {
        panic!("{err}")
    };
    // A leaf against a map is broadcast, not a mismatch.
    let shown: Vec<String> = all.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        shown,
        [
            "tree 1 at [1]: sequence length mismatch: expected 3, found 2",
            "tree 1 at [2]: node mismatch: expected Some(_), found None",
        ]
    );
    assert_eq!(
        TreeDef::leaf()
            .broadcast_to_common_suffix(&TreeDef::leaf())
            .unwrap(),
        TreeDef::leaf()
    );
}

#[test]
fn dynamic_trees_keep_their_own_key_order() {
    // optree: tree_broadcast_common([1, {'a': (2, 3)}, {'a': 4, 'b': 5}],
    //                               [6, 7, {'a': 8, 'b': (9, 10)}])
    let a: Tree<i32> = tree!([1, { "a" => [2, 3] }, { "a" => 4, "b" => 5 }]);
    let b: Tree<i32> = tree!([6, 7, { "b" => [9, 10], "a" => 8 }]);
    let (x, y): (Tree<i32>, Tree<i32>) =
        pytree_std::nested::broadcast_common(a.clone(), b.clone()).unwrap();
    assert_eq!(
        format!("{x:?}"),
        r#"[1, {"a": [2, 3]}, {"a": 4, "b": [5, 5]}]"#
    );
    assert_eq!(
        format!("{y:?}"),
        r#"[6, {"a": [7, 7]}, {"b": [9, 10], "a": 8}]"#
    );
    // Both results have the common structure, up to key order, and are
    // suffixes of both inputs.
    let (dx, dy) = (pytree_std::structure(&x), pytree_std::structure(&y));
    for d in [&dx, &dy] {
        assert!(d.is_suffix_of(&pytree_std::structure(&a)));
        assert!(d.is_suffix_of(&pytree_std::structure(&b)));
    }
    let common = pytree_std::structure(&a)
        .broadcast_to_common_suffix(&pytree_std::structure(&b))
        .unwrap();
    assert_eq!(common, dx);
    // optree's failing example: {'b': 4} against {'a': 7, 'b': (8, 9)}.
    let err = pytree_std::nested::broadcast_common::<_, _, Tree<i32>, Tree<i32>>(
        tree!([1, { "b" => 4 }]),
        tree!([5, { "a" => 7, "b" => [8, 9] }]),
    )
    .unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::KeyMismatch { .. }), "{err}");
    assert_eq!(err.path().to_string(), "[1]");
}

#[test]
fn a_leaf_is_cloned_only_where_it_is_copied() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static CLONES: AtomicUsize = AtomicUsize::new(0);
    #[derive(PyTree, Debug, PartialEq)]
    #[pytree(leaf)]
    struct Counted(u32);
    impl Clone for Counted {
        fn clone(&self) -> Self {
            CLONES.fetch_add(1, Ordering::Relaxed);
            Counted(self.0)
        }
    }
    let (a, b): (Vec<Vec<Counted>>, Vec<Vec<Counted>>) = pytree_std::nested::broadcast_common(
        vec![Counted(1), Counted(2)],
        vec![vec![Counted(3), Counted(4), Counted(5)], vec![Counted(6)]],
    )
    .unwrap();
    assert_eq!(
        a,
        [vec![Counted(1), Counted(1), Counted(1)], vec![Counted(2)]]
    );
    assert_eq!(b[0][2], Counted(5));
    assert_eq!(CLONES.load(Ordering::Relaxed), 2);
}
