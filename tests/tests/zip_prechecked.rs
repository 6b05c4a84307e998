//! The two passes of a zip: `zip_check` finds every kind of mismatch, and
//! the prechecked passes never panic when called without the check (a part
//! that differs is replaced by `self`'s, or left alone in place).

mod models;

use std::collections::{BTreeMap, HashMap};

use models::Shape;
use pytree_std::Unflatten;
use pytree_std::{tree, Flatten, PyTree, Std, Tree};

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Tagged {
    #[pytree(static)]
    tag: &'static str,
    x: f64,
}

fn add(x: &f64, [y]: [&f64; 1]) -> f64 {
    x + y
}

#[test]
fn zip_check_names_each_kind_of_mismatch() {
    let check = |a: &Shape, b: &Shape| a.zip_check([b]).map_err(|e| e.to_string());
    assert_eq!(
        check(&Shape::Rect(1.0, 2.0), &Shape::Rect(3.0, 4.0)),
        Ok(())
    );
    assert_eq!(
        check(&Shape::Rect(1.0, 2.0), &Shape::Empty),
        Err("tree 1 at <root>: node mismatch: expected variant Shape::Rect, found variant Shape::Empty".into())
    );
    let tagged = |tag| Tagged { tag, x: 0.0 };
    assert_eq!(
        tagged("a")
            .zip_check([&tagged("a"), &tagged("b")])
            .map_err(|e| e.to_string()),
        Err("tree 2 at .tag: static data mismatch: expected \"a\", found \"b\"".into())
    );
    let m = |keys: &[&'static str]| keys.iter().map(|k| (*k, 0.0)).collect::<BTreeMap<_, f64>>();
    assert!(m(&["a", "b"]).zip_check([&m(&["a", "c"])]).is_err());
    let h = |keys: &[&'static str]| {
        keys.iter()
            .map(|k| (*k, vec![0.0]))
            .collect::<HashMap<_, _>>()
    };
    let mut shorter = h(&["a", "b", "c"]);
    shorter.insert("b", vec![]);
    assert_eq!(
        h(&["a", "b", "c"])
            .zip_check([&shorter])
            .map_err(|e| e.to_string()),
        Err("tree 1 at [\"b\"]: sequence length mismatch: expected 1, found 0".into())
    );
    assert!(Some(1.0).zip_check([&None]).is_err());
    assert!(vec![[1.0, 2.0]].zip_check([&vec![]]).is_err());
}

#[test]
fn zip_with_prechecked_replaces_differing_parts_by_self_without_panicking() {
    let rect = Shape::Rect(1.0, 2.0);
    assert_eq!(
        rect.zip_with_prechecked([&Shape::Empty], &mut add),
        Shape::Rect(2.0, 4.0),
        "another variant: self's fields stand in"
    );
    let v = vec![1.0, 2.0];
    assert_eq!(
        Unflatten::<Std>::zip_with_prechecked(&v, [&vec![10.0]], &mut add),
        [2.0, 4.0]
    );
    assert_eq!(
        Unflatten::<Std>::zip_with_prechecked(&Some(1.0), [&None], &mut add),
        Some(2.0)
    );
    let a = BTreeMap::from([("a", 1.0), ("b", 2.0)]);
    let b = BTreeMap::from([("a", 10.0), ("c", 20.0)]);
    assert_eq!(
        Unflatten::<Std>::zip_with_prechecked(&a, [&b], &mut add),
        BTreeMap::from([("a", 11.0), ("b", 22.0)]),
        "values of maps of one size are paired by position"
    );
    let c = BTreeMap::from([("a", 10.0)]);
    assert_eq!(
        Unflatten::<Std>::zip_with_prechecked(&a, [&c], &mut add),
        BTreeMap::from([("a", 2.0), ("b", 4.0)]),
        "a map of another size: self stands in"
    );
    let a = HashMap::from([("a", 1.0), ("b", 2.0)]);
    let b = HashMap::from([("a", 10.0)]);
    assert_eq!(
        Unflatten::<Std>::zip_with_prechecked(&a, [&b], &mut add),
        HashMap::from([("a", 11.0), ("b", 4.0)])
    );
    let t: Tree<f64> = tree! { "p" => 1.0, "q" => [2.0, 3.0] };
    let u: Tree<f64> = tree! { "p" => 10.0, "q" => [20.0] };
    assert_eq!(
        t.zip_with_prechecked([&u], &mut add),
        tree! { "p" => 11.0, "q" => [4.0, 6.0] }
    );
}

#[test]
fn zip_mut_prechecked_leaves_differing_parts_alone_without_panicking() {
    let sub = &mut |x: &mut f64, [y]: [&f64; 1]| *x -= y;
    let mut rect = Shape::Rect(1.0, 2.0);
    rect.zip_mut_prechecked([&Shape::Circle { r: 1.0 }], sub);
    assert_eq!(rect, Shape::Rect(1.0, 2.0));
    let mut t = (vec![1.0, 2.0], Some(3.0), 4.0);
    t.zip_mut_prechecked([&(vec![1.0], None, 1.0)], sub);
    assert_eq!(t, (vec![1.0, 2.0], Some(3.0), 3.0));
    let mut m = BTreeMap::from([("a", 1.0)]);
    m.zip_mut_prechecked([&BTreeMap::from([("b", 1.0), ("c", 1.0)])], sub);
    assert_eq!(m, BTreeMap::from([("a", 1.0)]));
    let mut h = HashMap::from([("a", 1.0), ("b", 2.0)]);
    h.zip_mut_prechecked([&HashMap::from([("a", 1.0)])], sub);
    assert_eq!(h, HashMap::from([("a", 0.0), ("b", 2.0)]));
}

#[test]
fn zip_with_is_the_check_then_the_prechecked_pass() {
    let (a, b) = (Shape::Circle { r: 1.0 }, Shape::Circle { r: 2.0 });
    assert_eq!(
        a.zip_with([&b], &mut add).unwrap(),
        a.zip_with_prechecked([&b], &mut add)
    );
    assert_eq!(
        a.zip_with([&Shape::Empty], &mut add)
            .unwrap_err()
            .to_string(),
        a.zip_check([&Shape::Empty]).unwrap_err().to_string()
    );
    let mut calls = 0;
    let mut p = (vec![1.0, 2.0], vec![3.0]);
    let g = (vec![1.0, 1.0], vec![]);
    assert!(p
        .zip_mut([&g], &mut |x: &mut f64, [y]: [&f64; 1]| {
            calls += 1;
            *x -= y
        })
        .is_err());
    assert_eq!(
        (calls, p),
        (0, (vec![1.0, 2.0], vec![3.0])),
        "checked before any update"
    );
}

#[test]
fn the_element_walk_of_a_check_is_skipped_only_where_no_element_can_fail() {
    // Leaves and containers of leaves check in O(1) past the lengths and keys.
    const { assert!(matches!(<f64 as Flatten<Std>>::UNIFORM_LEAVES, Some(1))) };
    const {
        assert!(matches!(
            <(f64, [f64; 2], Box<f64>) as Flatten<Std>>::UNIFORM_LEAVES,
            Some(4)
        ))
    };
    // Elements that can differ are walked.
    const { assert!(<Vec<f64> as Flatten<Std>>::UNIFORM_LEAVES.is_none()) };
    const { assert!(<(f64, Option<f64>) as Flatten<Std>>::UNIFORM_LEAVES.is_none()) };
    let a = BTreeMap::from([("k", vec![1.0])]);
    let b = BTreeMap::from([("k", vec![])]);
    assert_eq!(
        a.zip_check([&b]).map_err(|e| e.to_string()),
        Err("tree 1 at [\"k\"]: sequence length mismatch: expected 1, found 0".into())
    );
}

#[derive(pytree_std::PyTree, Clone, Debug, PartialEq)]
struct Numbered {
    x: f64,
    #[pytree(static)]
    tag: u8,
}

#[derive(pytree_std::PyTree, Clone, Debug, PartialEq)]
struct Plain {
    x: f64,
    y: (f64, f64),
}

#[test]
fn a_struct_is_uniform_only_without_static_fields() {
    const { assert!(matches!(<Plain as Flatten<Std>>::UNIFORM_LEAVES, Some(3))) };
    const { assert!(<Numbered as Flatten<Std>>::UNIFORM_LEAVES.is_none()) };
    // So the elements of a Vec of them are still compared.
    let a = vec![Numbered { x: 1.0, tag: 1 }, Numbered { x: 2.0, tag: 2 }];
    let mut b = a.clone();
    b[1].tag = 3;
    assert_eq!(
        a.zip_check([&b]).map_err(|e| e.to_string()),
        Err("tree 1 at [1].tag: static data mismatch: expected 2, found 3".to_string())
    );
}
