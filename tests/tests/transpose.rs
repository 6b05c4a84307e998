//! Transposes: treevalue's `subside` / `rise` (seed 004) and JAX's
//! `tree.transpose`, typed. The seed's `check([t1, t2, t3], ...)` example
//! runs on a derived tree holding a `BTreeMap`.

use std::collections::BTreeMap;

use pytree_std::{ErrorKind, PyTree};

/// The seed's trees `{'a': _, 'b': _, 'x': {'c': _, 'd': _}}`.
#[derive(PyTree, Clone, Debug, PartialEq)]
struct Seed<L> {
    a: L,
    b: L,
    x: BTreeMap<&'static str, L>,
}

fn seed(a: i32, b: i32, c: i32, d: i32) -> Seed<i32> {
    Seed {
        a,
        b,
        x: BTreeMap::from([("c", c), ("d", d)]),
    }
}

/// The seed's `check`: the first position where `target` holds, and how
/// many positions it holds at.
fn check(arr: &[&i32], target: impl Fn(i32) -> bool) -> (Option<usize>, usize) {
    let mut position = None;
    let mut count = 0;
    for (i, item) in arr.iter().enumerate() {
        if target(**item) {
            position.get_or_insert(i);
            count += 1;
        }
    }
    (position, count)
}

#[test]
fn the_seed_check_example_subsides_then_rises() {
    let t1 = seed(2, 4, 7, 9);
    let t2 = seed(4, 48, 2, 53);
    let t3 = seed(9, -12, 3, 7);
    let def = pytree_std::structure(&t1);
    // subside: three trees become one tree whose leaves are lists
    let stacked: Seed<Vec<i32>> = pytree_std::nested::subside([t1, t2, t3]).unwrap();
    assert_eq!(stacked.x["c"], [7, 2, 3]);
    // check runs once per position, on the list of values there
    let columns = pytree_std::nested::flatten_up_to(&def, stacked).unwrap();
    let results = columns
        .iter()
        .map(|column| check(&column.leaves().iter().collect::<Vec<_>>(), |x| x % 2 == 0));
    // unflatten_pairs: one tree of (position, count) pairs becomes two trees
    let (tr1, tr2): (Seed<Option<usize>>, Seed<usize>) =
        pytree_std::generic::transpose::unflatten_pairs::<pytree_std::Std, _, _, _, _>(
            &def, results,
        )
        .unwrap();
    assert_eq!(
        tr1,
        Seed {
            a: Some(0),
            b: Some(0),
            x: BTreeMap::from([("c", Some(1)), ("d", None)]),
        }
    );
    assert_eq!(
        tr2,
        Seed {
            a: 2,
            b: 3,
            x: BTreeMap::from([("c", 1), ("d", 0)]),
        }
    );
}

#[test]
fn subside_and_rise_are_inverse() {
    // treevalue's torch.stack / torch.split example, with Vec for tensors.
    let trees: Vec<Seed<i32>> = (0..10).map(|k| seed(k, 10 + k, 20 + k, 30 + k)).collect();
    let stacked: Seed<Vec<i32>> = pytree_std::nested::subside(trees.clone()).unwrap();
    assert_eq!(stacked.a, (0..10).collect::<Vec<_>>());
    let back: Vec<Seed<i32>> = pytree_std::nested::rise(stacked).unwrap();
    assert_eq!(back, trees);
}

#[test]
fn subsiding_trees_of_different_structures_lists_every_mismatch() {
    let odd = Seed {
        x: BTreeMap::from([("c", 0)]),
        ..seed(0, 0, 0, 0)
    };
    let err =
        pytree_std::nested::subside::<_, Seed<Vec<i32>>>([seed(1, 2, 3, 4), odd.clone(), odd])
            .unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Mismatches(all) if all.len() == 2));
    assert_eq!(
        err.to_string(),
        "tree structures differ (2 mismatches found)\n  \
         tree 1 at .x: map key mismatch; expected key(s): [\"c\", \"d\"], got key(s): [\"c\"], \
         missing key(s): [\"d\"]\n  \
         tree 2 at .x: map key mismatch; expected key(s): [\"c\", \"d\"], got key(s): [\"c\"], \
         missing key(s): [\"d\"]"
    );
}

#[test]
fn subsiding_no_trees_is_an_error() {
    let err = pytree_std::nested::subside::<Seed<i32>, Seed<Vec<i32>>>([]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at <root>: cannot subside zero trees: the result's structure is unknown"
    );
}

#[test]
fn rising_a_tree_that_is_not_subsided_names_the_place() {
    let err = pytree_std::nested::rise::<_, (i32, i32)>((vec![1, 2], vec![3, 4, 5])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at [1]: node mismatch: expected a sequence of length 2, found a sequence of length 3"
    );
}

#[test]
fn pair_leaves_and_unpair_leaves_are_inverse() {
    let a = seed(1, 2, 3, 4);
    let b = seed(10, 20, 30, 40);
    let z: Seed<(i32, i32)> =
        pytree_std::generic::transpose::pair_leaves::<pytree_std::Std, _, _, _>(
            a.clone(),
            b.clone(),
        )
        .unwrap();
    assert_eq!(z.x["d"], (4, 40));
    let (a2, b2): (Seed<i32>, Seed<i32>) =
        pytree_std::generic::transpose::unpair_leaves::<pytree_std::Std, _, _, _>(z).unwrap();
    assert_eq!((a2, b2), (a, b));
}

#[test]
fn zipping_trees_of_different_structures_is_an_error() {
    let err =
        pytree_std::generic::transpose::pair_leaves::<pytree_std::Std, _, _, Vec<(i32, i32)>>(
            vec![1, 2],
            vec![1],
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at <root>: sequence length mismatch: expected 2, found 1"
    );
}

#[test]
fn unpair_leaves_needs_every_leaf_in_a_pair_of_leaves() {
    let err =
        pytree_std::generic::transpose::unpair_leaves::<pytree_std::Std, _, Vec<i32>, Vec<i32>>(
            vec![(1, vec![2])],
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "at [0][0]: node mismatch: expected a pair of leaves, found a leaf"
    );
}

#[test]
fn transpose_turns_a_list_of_pairs_into_a_pair_of_lists() {
    let outer = pytree_std::structure(&vec![0; 3]);
    let inner = pytree_std::structure(&(0, 0));
    let t: (Vec<i32>, Vec<i32>) =
        pytree_std::nested::transpose(&outer, &inner, vec![(1, 2), (3, 4), (5, 6)]).unwrap();
    assert_eq!(t, (vec![1, 3, 5], vec![2, 4, 6]));
    let back: Vec<(i32, i32)> = pytree_std::nested::transpose(&inner, &outer, t).unwrap();
    assert_eq!(back, [(1, 2), (3, 4), (5, 6)]);
}

#[test]
fn transpose_checks_the_whole_structure_not_only_the_leaf_count() {
    // jax issue 19810: four leaves, but lists where tuples are expected.
    let outer = pytree_std::structure(&vec![0; 2]);
    let inner = pytree_std::structure(&(0, 0));
    let err = pytree_std::nested::transpose::<_, (Vec<i32>, Vec<i32>)>(
        &outer,
        &inner,
        vec![vec![1, 2], vec![3, 4]],
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree structures differ (2 mismatches found)\n  \
         at [0]: node mismatch: expected a tuple of arity 2, found a sequence of length 2\n  \
         at [1]: node mismatch: expected a tuple of arity 2, found a sequence of length 2"
    );
}

#[test]
fn compose_replaces_every_leaf_by_the_inner_structure() {
    let pair = pytree_std::structure(&(0, 0));
    let triple = pytree_std::structure(&vec![0, 0, 0]);
    assert_eq!(
        pair.compose(&triple).unwrap().to_string(),
        "([*, *, *], [*, *, *])"
    );
    let leaf = pytree_std::TreeDef::leaf();
    assert_eq!(leaf.compose(&triple).unwrap(), triple);
    assert_eq!(triple.compose(&leaf).unwrap(), triple);
    let keyed = pytree_std::structure(&BTreeMap::from([("k", 0)]));
    assert_eq!(keyed.compose(&pair).unwrap().to_string(), "{\"k\": (*, *)}");
}
