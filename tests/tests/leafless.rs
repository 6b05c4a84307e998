//! Trees with no leaves (`(vec![], None)`, a struct without data fields,
//! `Tree::none()`, an empty map) through the multi-tree operations. The
//! rule behind every case: an operation that puts something *at the
//! leaves* (a count, a pair, a function's result) has nowhere to put it,
//! so the result is the leafless structure itself and nothing is called;
//! the structure checks still apply. See the guide's "Trees with no
//! leaves".

use std::collections::BTreeMap;

use pytree_std::{tree, treelize::mode, treelize::Treelize, PyTree, Tree, TreeDef};

/// A struct with no data fields: its leaf type is `Infallible`.
#[derive(PyTree, Clone, Debug, PartialEq)]
struct Config {
    #[pytree(static)]
    name: String,
}

type Empty = (Vec<f32>, Option<f32>);

/// `Empty` with a pair at every leaf.
type Zipped = (Vec<(f32, f32)>, Option<(f32, f32)>);

fn empty() -> Empty {
    (vec![], None)
}

fn empty_tree() -> Tree<f32> {
    tree! { "a" => None, "b" => [], "c" => {} }
}

#[test]
fn subside_of_leafless_trees_is_the_leafless_tree_and_forgets_how_many() {
    // The count of stacked trees lives in the leaves (each becomes a
    // sequence of n): with no leaves, it is not in the result.
    let s: (Vec<Vec<f32>>, Option<Vec<f32>>) =
        pytree_std::nested::subside(vec![empty(), empty(), empty()]).unwrap();
    assert_eq!(s, (vec![], None));
    let back: Vec<Empty> = pytree_std::nested::rise(s).unwrap();
    assert!(back.is_empty(), "rise cannot know there were 3");
    let t: Tree<f32> = pytree_std::nested::subside(vec![empty_tree(), empty_tree()]).unwrap();
    assert_eq!(t, empty_tree());
    let back: Vec<Tree<f32>> = pytree_std::nested::rise(t).unwrap();
    assert!(back.is_empty());
    let c: Config = pytree_std::nested::subside(vec![Config { name: "c".into() }; 2]).unwrap();
    assert_eq!(c.name, "c");
    // Still checked: leafless trees of different structures do not subside.
    let err = pytree_std::nested::subside::<_, (Vec<Vec<f32>>, Option<Vec<f32>>)>(vec![
        empty(),
        (vec![], Some(1.0)),
    ])
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at [1]: node mismatch: expected None, found Some(_)"
    );
}

#[test]
fn transpose_keeps_whichever_structure_is_left() {
    // inner leafless: outer.compose(inner) has no leaves, and
    // inner.compose(outer) is the inner structure alone.
    let outer = pytree_std::structure(&vec![0u8; 2]);
    let inner = TreeDef::none();
    let t: Option<f32> =
        pytree_std::nested::transpose(&outer, &inner, vec![None::<f32>, None]).unwrap();
    assert_eq!(t, None);
    // outer leafless: the result is inner with outer at every leaf.
    let pair = pytree_std::structure(&(0u8, 0u8));
    let t: (Option<f32>, Option<f32>) =
        pytree_std::nested::transpose(&TreeDef::none(), &pair, None::<f32>).unwrap();
    assert_eq!(t, (None, None));
    // The structure is checked, not only the leaf count (0 = 0).
    let err = pytree_std::nested::transpose::<_, Option<f32>>(&outer, &inner, vec![None::<f32>])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "at <root>: sequence length mismatch: expected 2, found 1"
    );
}

#[test]
fn pair_leaves_and_unpair_leaves_of_leafless_trees_give_the_structure_back() {
    let z: Zipped =
        pytree_std::generic::transpose::pair_leaves::<pytree_std::Std, _, _, _>(empty(), empty())
            .unwrap();
    assert_eq!(z, (vec![], None));
    let (a, b): (Empty, Empty) =
        pytree_std::generic::transpose::unpair_leaves::<pytree_std::Std, _, _, _>(z).unwrap();
    assert_eq!((a, b), (empty(), empty()));
    let (a, b): (Tree<f32>, Tree<f32>) =
        pytree_std::generic::transpose::unpair_leaves::<pytree_std::Std, _, _, _>(empty_tree())
            .unwrap();
    assert_eq!((a, b), (empty_tree(), empty_tree()));
}

#[test]
fn maps_over_several_leafless_trees_call_nothing_and_check_the_structure() {
    let mut calls = 0;
    let r = pytree_std::map_n(&empty(), [&empty(), &empty()], |x, _| {
        calls += 1;
        *x
    })
    .unwrap();
    assert_eq!((r, calls), (empty(), 0));
    let err = pytree_std::walk::map_n(&empty(), [&(vec![], Some(1.0))], |x, [_]| *x).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at [1]: node mismatch: expected None, found Some(_)"
    );
    let r: Tree<f32> = pytree_std::map_n(&empty_tree(), [&empty_tree()], |x, _| *x).unwrap();
    assert_eq!(r, empty_tree());
    let c = Config { name: "c".into() };
    assert_eq!(
        // A diverging closure names its return type (else `!` falls back to `()`).
        pytree_std::map_n(&c, [&c], |x, [_]| -> std::convert::Infallible {
            match *x {}
        })
        .unwrap(),
        c
    );
    let mut p = empty();
    pytree_std::zip_mut([&mut p], [&empty()], |[_], _| calls += 1).unwrap();
    assert_eq!(calls, 0);
}

#[test]
fn treelize_of_leafless_trees_is_the_merged_structure() {
    let mut calls = 0;
    let mut add = Treelize::new(|a: &f32, b: &f32| {
        calls += 1;
        a + b
    })
    .mode(mode::Outer)
    .missing(0.0);
    let a: Tree<f32> = tree! { "a" => None };
    let b: Tree<f32> = tree! { "b" => [] };
    let r: Tree<f32> = add.call2(&a, &b).unwrap();
    assert_eq!(r, tree! { "a" => None, "b" => [] });
    assert_eq!(calls, 0);
    let mut mean = Treelize::new(|xs: &[&f32]| xs.iter().copied().sum::<f32>());
    let r: Empty = mean.call_many([&empty(), &empty()]).unwrap();
    assert_eq!(r, empty());
}

#[test]
fn reductions_of_no_leaves_are_their_identities() {
    assert_eq!(
        pytree_std::flatten(empty())
            .0
            .into_iter()
            .reduce(|a, b| a + b),
        None
    );
    assert_eq!(pytree_std::reductions::fold(&empty(), 7, |n, _| n + 1), 7);
    assert_eq!(
        pytree_std::generic::reduce::sum::<pytree_std::Std, _>(&empty()),
        0.0
    );
    assert_eq!(
        pytree_std::generic::reduce::max::<pytree_std::Std, _>(&empty()),
        None
    );
    assert!(pytree_std::generic::reduce::all::<pytree_std::Std, _, _>(
        &empty(),
        |_| false
    ));
    assert!(!pytree_std::generic::reduce::any::<pytree_std::Std, _, _>(
        &empty_tree(),
        |_| true
    ));
}

#[test]
fn a_prefix_leaf_may_stand_for_a_leafless_subtree() {
    let full = (1.0f32, BTreeMap::<String, f32>::new(), None::<f32>);
    let b = pytree_std::generic::prefix::broadcast_prefix::<pytree_std::Std, _, _>(
        &(0u8, 1u8, 2u8),
        &full,
    )
    .unwrap();
    assert_eq!(b, [&0u8]); // 1 and 2 stand for subtrees with no leaves
    let subs =
        pytree_std::nested::flatten_up_to(&TreeDef::tuple(vec![TreeDef::leaf(); 3]), full).unwrap();
    assert_eq!(subs[1].def().to_string(), "{}");
    assert!(subs[2].leaves().is_empty());
    let (x, y): (Tree<f32>, Tree<f32>) =
        pytree_std::nested::broadcast_common(Tree::leaf(1.0), empty_tree()).unwrap();
    assert_eq!((x, y), (empty_tree(), empty_tree()));
    assert!(TreeDef::leaf().is_strict_prefix_of(&pytree_std::structure(&empty_tree())));
}
