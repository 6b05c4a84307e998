//! The `Std` namespace's containers: what each flattens to, how it prints,
//! and that it round-trips.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::rc::Rc;
use std::sync::Arc;

use pytree_std::{PyTree, TreeDef};

fn round_trip<T: PyTree + PartialEq + std::fmt::Debug + Clone>(tree: T) -> (Vec<T::Leaf>, TreeDef)
where
    T::Leaf: Clone,
{
    let (leaves, def) = pytree_std::flatten(tree.clone());
    assert_eq!(
        pytree_std::structure(&tree),
        def,
        "structure() agrees with flatten()"
    );
    let back: T = pytree_std::unflatten(&def, leaves.clone()).unwrap();
    assert_eq!(back, tree);
    (leaves, def)
}

#[test]
fn vec_vecdeque_and_arrays_are_sequences() {
    let (l, d) = round_trip(vec![vec![1, 2], vec![], vec![3]]);
    assert_eq!(
        (l, d.to_string()),
        (vec![1, 2, 3], "[[*, *], [], [*]]".to_string())
    );
    let (l, d) = round_trip(VecDeque::from([1u8, 2]));
    assert_eq!((l, d.to_string()), (vec![1, 2], "[*, *]".to_string()));
    let (l, d) = round_trip([[1i64, 2], [3, 4]]);
    assert_eq!(
        (l, d.to_string()),
        (vec![1, 2, 3, 4], "[[*, *], [*, *]]".to_string())
    );
}

#[test]
fn tuples_up_to_twelve() {
    let (l, d) = round_trip((1u16,));
    assert_eq!((l, d.to_string()), (vec![1], "(*,)".to_string()));
    let twelve = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
    let (l, d) = round_trip(twelve);
    assert_eq!(l, (1..=12).collect::<Vec<i32>>());
    assert_eq!(d.to_string(), "(*, *, *, *, *, *, *, *, *, *, *, *)");
}

#[test]
fn btreemap_flattens_in_key_order_and_keeps_keys_in_the_treedef() {
    let m = BTreeMap::from([("b".to_string(), 2.0), ("a".to_string(), 1.0)]);
    let (l, d) = round_trip(m);
    assert_eq!(l, [1.0, 2.0]);
    assert_eq!(d.to_string(), "{\"a\": *, \"b\": *}");
}

#[test]
fn hashmap_flattens_in_sorted_key_order() {
    let m: HashMap<u32, f32> = (0..50).map(|k| (k * 7 % 50, k as f32)).collect();
    let (l, d) = round_trip(m.clone());
    let mut expected: Vec<(u32, f32)> = m.into_iter().collect();
    expected.sort_by_key(|(k, _)| *k);
    assert_eq!(l, expected.iter().map(|(_, v)| *v).collect::<Vec<_>>());
    assert!(d.to_string().starts_with("{0: *, 1: *, 2: *"));
    // The same keys give the same TreeDef as a BTreeMap, whatever the hash order.
    let b: BTreeMap<u32, f32> = expected.into_iter().collect();
    assert_eq!(pytree_std::structure(&b), d);
}

#[test]
fn option_none_is_structure_not_a_leaf() {
    let (l, d) = round_trip(vec![Some(1), None, Some(3)]);
    assert_eq!(
        (l, d.to_string()),
        (vec![1, 3], "[Some(*), None, Some(*)]".to_string())
    );
}

#[test]
fn box_rc_and_arc_are_transparent() {
    assert_eq!(
        pytree_std::structure(&Box::new((1, 2))),
        pytree_std::structure(&(1, 2))
    );
    let shared = Rc::new(vec![1.0, 2.0]);
    let (l, _) = round_trip(shared.clone());
    assert_eq!(l, [1.0, 2.0]);
    let arc = Arc::new((1u8, 2u8));
    assert_eq!(round_trip(arc).1.to_string(), "(*, *)");
}

#[test]
fn mutating_a_shared_rc_clones_it_first() {
    let original = Rc::new(vec![1i32, 2]);
    let mut copy = original.clone();
    pytree_std::for_each_mut(&mut copy, |x| *x += 10);
    assert_eq!(*original, [1, 2]);
    assert_eq!(*copy, [11, 12]);
}

#[test]
fn primitive_leaf_types() {
    let (l, d) = round_trip(("s".to_string(), "t".to_string()));
    assert_eq!((l.len(), d.num_leaves()), (2, 2));
    round_trip((true, false));
    round_trip(('a', 'b'));
    round_trip((1i8, 2i8));
    round_trip((1u128, 2u128));
    round_trip((1isize, 2isize));
    round_trip((1.5f32, 2.5f32));
}
