//! Reductions and queries (`fold`, `reduce`, `all`, `any`, `count`,
//! `num_leaves`, `sum`, `min`, `max`) and `tree_equal` with a tolerance.

mod models;

use std::collections::BTreeMap;
use std::ops::Add;

use models::{Linear, Mlp};
use pytree_std::{elements::ApproxEq, elements::Tolerance, PyTree};

fn mlp() -> Mlp<f32> {
    Mlp {
        layers: vec![Linear { w: 1.0, b: -2.0 }, Linear { w: 3.0, b: 4.0 }],
        name: "mlp".into(),
    }
}

#[test]
fn fold_sees_leaves_in_pre_order() {
    let order = pytree_std::reductions::fold(&mlp(), Vec::new(), |mut acc, x| {
        acc.push(*x);
        acc
    });
    assert_eq!(order, [1.0, -2.0, 3.0, 4.0]);
}

#[test]
fn fold_of_a_tree_without_leaves_is_the_initial_value() {
    assert_eq!(
        pytree_std::reductions::fold(&Vec::<f32>::new(), 7.5, |a, x| a + x),
        7.5
    );
    assert_eq!(
        pytree_std::reductions::fold(&None::<i32>, 1, |a, x| a * x),
        1
    );
}

#[test]
fn reduce_combines_leaves_by_value_left_to_right() {
    let words = (
        String::from("a"),
        vec![String::from("b"), String::from("c")],
    );
    assert_eq!(
        pytree_std::flatten(words)
            .0
            .into_iter()
            .reduce(|a, b| format!("({a}{b})")),
        Some("((ab)c)".to_string())
    );
}

#[test]
fn reduce_of_one_leaf_is_that_leaf_and_of_none_is_none() {
    assert_eq!(
        pytree_std::flatten(Some(4))
            .0
            .into_iter()
            .reduce(|a, b| a + b),
        Some(4)
    );
    assert_eq!(
        pytree_std::flatten(Vec::<i32>::new())
            .0
            .into_iter()
            .reduce(|a, b| a + b),
        None
    );
}

#[test]
fn all_any_and_count_test_every_leaf() {
    let m = mlp();
    assert!(pytree_std::generic::reduce::all::<pytree_std::Std, _, _>(
        &m,
        |x| x.is_finite()
    ));
    assert!(!pytree_std::generic::reduce::all::<pytree_std::Std, _, _>(
        &m,
        |x| *x > 0.0
    ));
    assert!(pytree_std::generic::reduce::any::<pytree_std::Std, _, _>(
        &m,
        |x| *x < 0.0
    ));
    assert!(!pytree_std::generic::reduce::any::<pytree_std::Std, _, _>(
        &m,
        |x| *x > 10.0
    ));
    assert_eq!(
        pytree_std::generic::reduce::count::<pytree_std::Std, _, _>(&m, |x| *x > 0.0),
        3
    );
}

#[test]
fn all_is_true_and_any_false_for_a_tree_without_leaves() {
    let empty: BTreeMap<String, f32> = BTreeMap::new();
    assert!(pytree_std::generic::reduce::all::<pytree_std::Std, _, _>(
        &empty,
        |_| false
    ));
    assert!(!pytree_std::generic::reduce::any::<pytree_std::Std, _, _>(
        &empty,
        |_| true
    ));
    assert_eq!(
        pytree_std::generic::reduce::count::<pytree_std::Std, _, _>(&empty, |_| true),
        0
    );
}

#[test]
fn all_stops_asking_after_the_first_false() {
    let mut asked = 0;
    assert!(!pytree_std::generic::reduce::all::<pytree_std::Std, _, _>(
        &vec![1i32, -1, 2, 3],
        |x| {
            asked += 1;
            *x > 0
        }
    ));
    assert_eq!(asked, 2);
}

#[test]
fn num_leaves_counts_leaves_not_nodes() {
    assert_eq!(pytree_std::leaves(&mlp()).len(), 4);
    assert_eq!(
        pytree_std::leaves(&(None::<f32>, vec![1.0f32; 1000])).len(),
        1000
    );
    assert_eq!(
        pytree_std::leaves(&mlp()).len(),
        pytree_std::structure(&mlp()).num_leaves()
    );
}

#[test]
fn sum_adds_leaves_and_an_empty_tree_sums_to_zero() {
    assert_eq!(
        pytree_std::generic::reduce::sum::<pytree_std::Std, _>(&mlp()),
        6.0
    );
    assert_eq!(
        pytree_std::generic::reduce::sum::<pytree_std::Std, _>(&(1u64, [2u64, 3])),
        6
    );
    assert_eq!(
        pytree_std::generic::reduce::sum::<pytree_std::Std, _>(&Vec::<f64>::new()),
        0.0
    );
}

#[test]
fn sum_works_for_a_leaf_type_that_adds_by_reference() {
    #[derive(PyTree, Clone, Debug, PartialEq)]
    #[pytree(leaf)]
    struct Money(i64);
    impl<'a> Add<&'a Money> for Money {
        type Output = Money;
        fn add(self, other: &'a Money) -> Money {
            Money(self.0 + other.0)
        }
    }
    impl<'a> std::iter::Sum<&'a Money> for Money {
        fn sum<I: Iterator<Item = &'a Money>>(iter: I) -> Money {
            iter.fold(Money(0), |a, b| a + b)
        }
    }
    let wallet = vec![Money(5), Money(7)];
    assert_eq!(
        pytree_std::generic::reduce::sum::<pytree_std::Std, _>(&wallet),
        Money(12)
    );
}

#[test]
fn min_and_max_find_the_extreme_leaves() {
    assert_eq!(
        pytree_std::generic::reduce::min::<pytree_std::Std, _>(&mlp()),
        Some(&-2.0)
    );
    assert_eq!(
        pytree_std::generic::reduce::max::<pytree_std::Std, _>(&mlp()),
        Some(&4.0)
    );
    assert_eq!(
        pytree_std::generic::reduce::max::<pytree_std::Std, _>(&(
            String::from("b"),
            [String::from("c")]
        ))
        .map(String::as_str),
        Some("c")
    );
}

#[test]
fn min_and_max_of_a_tree_without_leaves_are_none() {
    assert_eq!(
        pytree_std::generic::reduce::min::<pytree_std::Std, _>(&Vec::<f32>::new()),
        None
    );
    assert_eq!(
        pytree_std::generic::reduce::max::<pytree_std::Std, _>(&None::<u8>),
        None
    );
}

#[test]
fn min_and_max_return_the_first_of_equal_leaves() {
    let t = (1.0f32, 1.0f32);
    assert!(std::ptr::eq(
        pytree_std::generic::reduce::min::<pytree_std::Std, _>(&t).unwrap(),
        &t.0
    ));
    assert!(std::ptr::eq(
        pytree_std::generic::reduce::max::<pytree_std::Std, _>(&t).unwrap(),
        &t.0
    ));
}

#[test]
fn a_nan_leaf_makes_min_and_max_nan_wherever_it_is() {
    for t in [
        vec![f64::NAN, 1.0, 2.0],
        vec![1.0, f64::NAN, 2.0],
        vec![1.0, 2.0, f64::NAN],
    ] {
        assert!(
            pytree_std::generic::reduce::min::<pytree_std::Std, _>(&t)
                .unwrap()
                .is_nan(),
            "{t:?}"
        );
        assert!(
            pytree_std::generic::reduce::max::<pytree_std::Std, _>(&t)
                .unwrap()
                .is_nan(),
            "{t:?}"
        );
    }
}

#[test]
fn with_several_nans_min_returns_the_first_one() {
    let t = (2.0f32, f32::NAN, -f32::NAN);
    let found = pytree_std::generic::reduce::min::<pytree_std::Std, _>(&t).unwrap();
    assert!(std::ptr::eq(found, &t.1));
    assert!(found.is_sign_positive());
}

#[test]
fn infinities_are_ordinary_extremes() {
    let t = vec![1.0, f64::NEG_INFINITY, f64::INFINITY];
    assert_eq!(
        pytree_std::generic::reduce::min::<pytree_std::Std, _>(&t),
        Some(&f64::NEG_INFINITY)
    );
    assert_eq!(
        pytree_std::generic::reduce::max::<pytree_std::Std, _>(&t),
        Some(&f64::INFINITY)
    );
}

// ---- tree_equal ----

#[test]
fn tree_equal_is_exact_without_tolerance() {
    let mut other = mlp();
    assert!(pytree_std::elements::tree_equal(
        &mlp(),
        &other,
        Tolerance::EXACT
    ));
    other.layers[1].b += 1e-6;
    assert!(!pytree_std::elements::tree_equal(
        &mlp(),
        &other,
        Tolerance::EXACT
    ));
}

#[test]
fn tree_equal_with_atol_accepts_small_absolute_differences() {
    let mut other = mlp();
    other.layers[0].w += 0.01;
    assert!(pytree_std::elements::tree_equal(
        &mlp(),
        &other,
        Tolerance::new(0.0, 0.02)
    ));
    assert!(!pytree_std::elements::tree_equal(
        &mlp(),
        &other,
        Tolerance::new(0.0, 0.005)
    ));
}

#[test]
fn tree_equal_with_rtol_scales_with_the_second_tree() {
    let a = vec![1000.0, 1.0];
    let b = vec![1001.0, 1.0];
    assert!(pytree_std::elements::tree_equal(
        &a,
        &b,
        Tolerance::new(1e-3, 0.0)
    ));
    assert!(!pytree_std::elements::tree_equal(
        &a,
        &b,
        Tolerance::new(1e-4, 0.0)
    ));
}

#[test]
fn tree_equal_never_calls_nan_close_but_equal_infinities_are() {
    let tol = Tolerance::new(1.0, 1.0);
    assert!(!pytree_std::elements::tree_equal(
        &vec![f64::NAN],
        &vec![f64::NAN],
        tol
    ));
    assert!(pytree_std::elements::tree_equal(
        &vec![f64::INFINITY],
        &vec![f64::INFINITY],
        Tolerance::EXACT
    ));
    assert!(!pytree_std::elements::tree_equal(
        &vec![f64::INFINITY],
        &vec![f64::NEG_INFINITY],
        tol
    ));
}

#[test]
fn tree_equal_compares_integer_leaves_exactly_whatever_the_tolerance() {
    assert!(!pytree_std::elements::tree_equal(
        &vec![1, 2],
        &vec![1, 3],
        Tolerance::new(1.0, 10.0)
    ));
    assert!(pytree_std::elements::tree_equal(
        &vec![1, 2],
        &vec![1, 2],
        Tolerance::new(1.0, 10.0)
    ));
}

#[test]
fn tree_equal_is_false_for_other_structures_whatever_the_tolerance() {
    let tol = Tolerance::new(1.0, 1e9);
    let mut longer = mlp();
    longer.layers.push(Linear { w: 0.0, b: 0.0 });
    assert!(!pytree_std::elements::tree_equal(&mlp(), &longer, tol));
    let mut renamed = mlp();
    renamed.name = "other".into();
    assert!(
        !pytree_std::elements::tree_equal(&mlp(), &renamed, tol),
        "static data differs"
    );
    let a = BTreeMap::from([("a", 1.0)]);
    let b = BTreeMap::from([("b", 1.0)]);
    assert!(
        !pytree_std::elements::tree_equal(&a, &b, tol),
        "map keys differ"
    );
    assert!(!pytree_std::elements::tree_equal(
        &Some(1.0),
        &None::<f64>,
        tol
    ));
}

#[test]
fn tree_equal_compares_trees_of_different_types_by_their_treedefs() {
    assert!(pytree_std::elements::tree_equal(
        &vec![1.0, 2.0],
        &[1.0, 2.0],
        Tolerance::EXACT
    ));
    assert!(!pytree_std::elements::tree_equal(
        &vec![1.0, 2.0],
        &(1.0, 2.0),
        Tolerance::EXACT
    ));
}

#[test]
fn tree_equal_uses_a_user_leafs_approx_eq() {
    #[derive(PyTree, Clone, Debug, PartialEq)]
    #[pytree(leaf)]
    struct Tensor(Vec<f64>);
    impl ApproxEq for Tensor {
        fn approx_eq(&self, other: &Self, tol: Tolerance) -> bool {
            self.0.len() == other.0.len()
                && self.0.iter().zip(&other.0).all(|(a, b)| tol.close(*a, *b))
        }
    }
    let a = Linear {
        w: Tensor(vec![1.0, 2.0]),
        b: Tensor(vec![0.0]),
    };
    let b = Linear {
        w: Tensor(vec![1.0, 2.001]),
        b: Tensor(vec![0.0]),
    };
    assert!(pytree_std::elements::tree_equal(
        &a,
        &b,
        Tolerance::new(0.0, 0.01)
    ));
    assert!(!pytree_std::elements::tree_equal(&a, &b, Tolerance::EXACT));
}
