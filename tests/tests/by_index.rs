//! Leaves by position in leaf order without flattening (`leaf_at`,
//! `leaf_at_mut`, `leaf_path_at`), and the paths of a structure's leaves
//! (optree's `treespec.paths()`; `accessors()` is `leaf_paths()` with
//! `get`), on typed trees and on `Tree<L>`.

use std::collections::BTreeMap;

use pytree_std::{tree, PyTree, Tree};

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Block {
    w: Vec<f32>,
    norm: Option<(f32, f32)>,
    #[pytree(kind = "state")]
    stats: BTreeMap<String, f32>,
}

fn block() -> Block {
    Block {
        w: vec![1.0, 2.0, 3.0],
        norm: Some((4.0, 5.0)),
        stats: BTreeMap::from([("mean".into(), 6.0), ("var".into(), 7.0)]),
    }
}

#[test]
fn leaf_at_is_the_leaf_of_that_index_in_leaves() {
    let b = block();
    let all = pytree_std::leaves(&b);
    for (i, leaf) in all.iter().enumerate() {
        assert_eq!(pytree_std::paths::get(&b, i).unwrap(), *leaf, "leaf {i}");
    }
    let err = pytree_std::paths::get(&b, all.len()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at <root>: no leaf at index 7: expected an index below 7, the number of leaves"
    );
    let empty: Vec<f32> = Vec::new();
    assert!(pytree_std::paths::get(&empty, 0).is_err());
}

#[test]
fn leaf_at_mut_changes_one_leaf_in_place() {
    let mut b = block();
    *pytree_std::generic::by_index::leaf_at_mut::<pytree_std::Std, _>(&mut b, 1).unwrap() = 20.0;
    *pytree_std::generic::by_index::leaf_at_mut::<pytree_std::Std, _>(&mut b, 4).unwrap() += 50.0;
    assert_eq!(b.w, [1.0, 20.0, 3.0]);
    assert_eq!(b.norm, Some((4.0, 55.0)));
    assert!(pytree_std::generic::by_index::leaf_at_mut::<pytree_std::Std, _>(&mut b, 9).is_err());
}

#[test]
fn the_path_of_leaf_i_agrees_with_the_walk_and_the_structure() {
    let b = block();
    let def = pytree_std::structure(&b);
    let walked = pytree_std::paths::leaves_with_path(&b);
    let paths = def.leaf_paths().unwrap();
    assert_eq!(paths.len(), walked.len());
    for (i, (path, leaf)) in walked.iter().enumerate() {
        let at = pytree_std::generic::by_index::leaf_path_at::<pytree_std::Std, _>(&b, i).unwrap();
        assert_eq!(&at, path);
        assert_eq!(at.kind(), path.kind());
        assert_eq!(def.leaf_path(i).as_ref(), Some(path));
        assert_eq!(&paths[i], path);
        // The path is an accessor: `get` fetches the leaf from the tree.
        assert_eq!(pytree_std::paths::get(&b, &paths[i]).unwrap(), *leaf);
    }
    assert_eq!(
        pytree_std::generic::by_index::leaf_path_at::<pytree_std::Std, _>(&b, 6)
            .unwrap()
            .kind(),
        "state"
    );
    assert_eq!(
        pytree_std::generic::by_index::leaf_path_at::<pytree_std::Std, _>(&b, 6)
            .unwrap()
            .to_string(),
        r#".stats["var"]"#
    );
    assert!(pytree_std::generic::by_index::leaf_path_at::<pytree_std::Std, _>(&b, 7).is_err());
}

#[test]
fn accessors_from_one_structure_fetch_the_leaves_of_every_tree_of_it() {
    let def = pytree_std::structure(&block());
    let mut other = block();
    pytree_std::for_each_mut(&mut other, |x| *x *= 10.0);
    let fetched: Vec<f32> = def
        .leaf_paths()
        .unwrap()
        .iter()
        .map(|p| *pytree_std::paths::get(&other, p).unwrap())
        .collect();
    assert_eq!(fetched, [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0]);
}

#[test]
fn dynamic_trees_are_indexed_in_insertion_order() {
    let mut t: Tree<i32> = tree! { "b" => [1, None, 2], "a" => { "y" => 3, "x" => 4 } };
    assert_eq!(pytree_std::paths::get(&t, 2).unwrap(), &3);
    assert_eq!(
        pytree_std::generic::by_index::leaf_path_at::<pytree_std::Std, _>(&t, 1)
            .unwrap()
            .to_string(),
        r#"["b"][2]"#
    );
    assert_eq!(
        pytree_std::structure(&t).leaf_path(3).unwrap().to_string(),
        r#"["a"]["x"]"#
    );
    *pytree_std::generic::by_index::leaf_at_mut::<pytree_std::Std, _>(&mut t, 3).unwrap() = 40;
    assert_eq!(
        t,
        tree! { "b" => [1, None, 2], "a" => { "y" => 3, "x" => 40 } }
    );
    for (i, path) in pytree_std::structure(&t)
        .leaf_paths()
        .unwrap()
        .iter()
        .enumerate()
    {
        assert_eq!(
            t.subtree(path).and_then(Tree::as_leaf),
            Some(pytree_std::paths::get(&t, i).unwrap())
        );
    }
}
