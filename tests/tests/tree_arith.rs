//! Arithmetic on trees, treevalue's `FastTreeValue` style: operators
//! combine two trees leaf by leaf through the strict structural map (and
//! panic on a mismatch), the `try_*` methods return the mismatch, scalars
//! apply to every leaf.

use pytree_std::{tree, ErrorKind, Tree};

fn t1() -> Tree<i64> {
    tree! { "a" => 2, "b" => 30, "x" => { "c" => 4, "d" => 9 } }
}

fn t2() -> Tree<i64> {
    tree! { "a" => 4, "b" => 48, "x" => { "c" => 6, "d" => 54 } }
}

fn gcd(mut a: i64, mut b: i64) -> i64 {
    loop {
        let r = a % b;
        a = b;
        b = r;
        if r == 0 {
            return a;
        }
    }
}

#[test]
fn the_seeds_gcd_of_two_trees_through_the_strict_map() {
    assert_eq!(gcd(9, 12), 3);
    let r = pytree_std::walk::map_n(&t1(), [&t2()], |a, [b]| gcd(*a, *b)).unwrap();
    assert_eq!(
        r,
        tree! { "a" => 2, "b" => 6, "x" => { "c" => 2, "d" => 9 } }
    );
}

#[test]
fn operators_combine_trees_leaf_by_leaf() {
    assert_eq!(
        &t1() + &t2(),
        tree! { "a" => 6, "b" => 78, "x" => { "c" => 10, "d" => 63 } }
    );
    assert_eq!(
        t2() - t1(),
        tree! { "a" => 2, "b" => 18, "x" => { "c" => 2, "d" => 45 } }
    );
    assert_eq!(
        &t1() * t2(),
        tree! { "a" => 8, "b" => 1440, "x" => { "c" => 24, "d" => 486 } }
    );
    assert_eq!(
        t2() / &t1(),
        tree! { "a" => 2, "b" => 1, "x" => { "c" => 1, "d" => 6 } }
    );
    assert_eq!(
        &t2() % &t1(),
        tree! { "a" => 0, "b" => 18, "x" => { "c" => 2, "d" => 0 } }
    );
}

#[test]
fn scalars_apply_to_every_leaf() {
    assert_eq!(
        t1() * 2,
        tree! { "a" => 4, "b" => 60, "x" => { "c" => 8, "d" => 18 } }
    );
    assert_eq!(
        &t1() + 1,
        tree! { "a" => 3, "b" => 31, "x" => { "c" => 5, "d" => 10 } }
    );
    assert_eq!(
        -&t1(),
        tree! { "a" => -2, "b" => -30, "x" => { "c" => -4, "d" => -9 } }
    );
    let halves: Tree<f64> = tree!([1.0, 3.0]) / 2.0;
    assert_eq!(halves, tree!([0.5, 1.5]));
}

#[test]
fn assignment_operators_update_in_place() {
    let mut t = t1();
    t += &t2();
    t *= 10;
    assert_eq!(
        t,
        tree! { "a" => 60, "b" => 780, "x" => { "c" => 100, "d" => 630 } }
    );
}

#[test]
fn map_entries_are_paired_by_key_not_by_position() {
    let reordered = tree! { "x" => { "d" => 54, "c" => 6 }, "b" => 48, "a" => 4 };
    assert_eq!(&t1() + &reordered, &t1() + &t2());
}

#[test]
fn try_add_returns_a_mismatch_as_an_error() {
    let missing_b = tree! { "a" => 1, "x" => { "c" => 1, "d" => 1 } };
    let err = t1().try_add(&missing_b).unwrap_err();
    assert_eq!(err.tree_index(), Some(1));
    assert_eq!(
        err.kind(),
        &ErrorKind::KeyMismatch {
            expected: vec![r#""a""#.into(), r#""b""#.into(), r#""x""#.into()],
            found: vec![r#""a""#.into(), r#""x""#.into()],
        }
    );
    let leaf_vs_tree = tree! { "a" => 1, "b" => 1, "x" => 6 };
    let err = t1().try_mul(&leaf_vs_tree).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"tree 1 at ["x"]: node mismatch: expected a map of 2 entries, found a leaf"#
    );
}

#[test]
#[should_panic(expected = "tree + tree: tree 1 at <root>: map key mismatch")]
fn the_operator_panics_on_a_mismatch() {
    let _ = &t1() + &tree! { "a" => 1 };
}

#[test]
#[should_panic(expected = "tree += tree: tree 1 at [\"x\"]: node mismatch")]
fn the_assignment_operator_panics_on_a_mismatch() {
    let mut t = t1();
    t += &tree! { "a" => 1, "b" => 1, "x" => 6 };
}
