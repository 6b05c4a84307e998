//! The `try_` forms: a leaf function that returns `Result` (as candle's
//! operations do). The first error comes back as an `Error` at the failing
//! leaf's key path with the function's error as its source; in-place forms
//! leave the leaves before the failing one updated and the rest untouched.

use std::error::Error as _;
use std::fmt;

use pytree_std::{ErrorKind, PyTree};

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Linear {
    w: f64,
    b: f64,
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Mlp {
    layers: Vec<Linear>,
    #[pytree(static)]
    name: String,
}

fn mlp(values: [f64; 4]) -> Mlp {
    Mlp {
        layers: vec![
            Linear {
                w: values[0],
                b: values[1],
            },
            Linear {
                w: values[2],
                b: values[3],
            },
        ],
        name: "mlp".into(),
    }
}

/// A leaf function's own error type, to check that it comes back as the
/// source.
#[derive(Debug, PartialEq)]
struct NotFinite(f64);

impl fmt::Display for NotFinite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} is not finite", self.0)
    }
}

impl std::error::Error for NotFinite {}

fn finite(x: f64) -> Result<f64, NotFinite> {
    if x.is_finite() {
        Ok(x)
    } else {
        Err(NotFinite(x))
    }
}

#[test]
fn try_map_names_the_failing_leaf_and_keeps_the_functions_error_as_source() {
    let err =
        pytree_std::walk::map_into::<_, Mlp, Result<_, _>>(mlp([1.0, 2.0, f64::NAN, 4.0]), finite)
            .unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .layers[1].w: the function failed: NaN is not finite"
    );
    assert!(matches!(err.kind(), ErrorKind::LeafFn(_)));
    let source = err.source().expect("the function's error");
    assert!(source
        .downcast_ref::<NotFinite>()
        .is_some_and(|e| e.0.is_nan()));
}

#[test]
fn try_map_may_change_the_leaf_type() {
    let rounded: Vec<i64> = pytree_std::walk::map_into(vec![1.4f64, 2.6], |x| {
        if x.is_finite() {
            Ok(x.round() as i64)
        } else {
            Err("nan")
        }
    })
    .unwrap();
    assert_eq!(rounded, [1, 3]);
}

#[test]
fn try_map2_checks_structures_before_calling_the_function() {
    let a = mlp([1.0, 2.0, 3.0, 4.0]);
    let mut b = a.clone();
    b.layers.pop();
    let mut calls = 0;
    let err = pytree_std::walk::map_n(&a, [&b], |x, [y]| {
        calls += 1;
        finite(x + y)
    })
    .unwrap_err();
    assert_eq!(calls, 0);
    assert_eq!(
        err.to_string(),
        "tree 1 at .layers: sequence length mismatch: expected 2, found 1"
    );
}

#[test]
fn try_map2_returns_the_first_error_in_leaf_order() {
    let a = mlp([1.0, f64::INFINITY, 3.0, f64::NAN]);
    let b = mlp([0.0; 4]);
    let err = pytree_std::walk::map_n(&a, [&b], |x, [y]| finite(x + y)).unwrap_err();
    assert_eq!(err.path().to_string(), ".layers[0].b");
    let ok = pytree_std::walk::map_n(&b, [&b], |x, [y]| finite(x + y)).unwrap();
    assert_eq!(ok, b);
}

#[test]
fn try_map_n_combines_three_trees() {
    let a = mlp([1.0, 2.0, 3.0, 4.0]);
    let t = pytree_std::walk::map_n(&a, [&a, &a], |x, [y, z]| finite(x + y + z)).unwrap();
    assert_eq!(t, mlp([3.0, 6.0, 9.0, 12.0]));
}

#[test]
fn try_zip_mut_updates_up_to_the_failing_leaf_and_no_further() {
    let mut params = mlp([1.0, 1.0, 1.0, 1.0]);
    let grads = mlp([0.5, 0.5, f64::NAN, 0.5]);
    let err = pytree_std::walk::zip_mut([&mut params], [&grads], |[p], [g]| {
        *p -= g; // the failing leaf is as the function left it
        finite(*p).map(drop)
    })
    .unwrap_err();
    assert_eq!(err.path().to_string(), ".layers[1].w");
    assert_eq!(params.layers[0], Linear { w: 0.5, b: 0.5 });
    assert!(params.layers[1].w.is_nan());
    assert_eq!(
        params.layers[1].b, 1.0,
        "leaves after the failing one are untouched"
    );
}

#[test]
fn try_zip_mut_changes_nothing_when_the_structures_differ() {
    let mut params = mlp([1.0; 4]);
    let mut other = mlp([1.0; 4]);
    other.name = "another".into();
    let err = pytree_std::walk::zip_mut([&mut params], [&other], |[p], [g]| {
        finite(*p - g).map(|x| *p = x)
    })
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"tree 1 at .name: static data mismatch: expected "mlp", found "another""#
    );
    assert_eq!(params, mlp([1.0; 4]));
}

#[test]
fn try_for_each_mut_stops_at_the_first_error() {
    let mut t = mlp([1.0, -1.0, 2.0, -2.0]);
    let mut seen = 0;
    let err = pytree_std::walk::for_each_mut(&mut t, |x| {
        seen += 1;
        *x = finite(x.sqrt())?;
        Ok::<(), NotFinite>(())
    })
    .unwrap_err();
    assert_eq!(seen, 2);
    assert_eq!(err.path().to_string(), ".layers[0].b");
    assert_eq!(t.layers[1], Linear { w: 2.0, b: -2.0 });
}

#[test]
fn zip_mut_n_is_one_pass_of_what_three_zip_muts_do() {
    let grads = mlp([0.5, -1.0, 2.0, 0.25]);
    let (b1, b2, lr) = (0.9, 0.999, 0.1);
    let step = |p: &mut f64, m: &mut f64, v: &mut f64, g: f64| {
        *m = b1 * *m + (1.0 - b1) * g;
        *v = b2 * *v + (1.0 - b2) * g * g;
        *p -= lr * *m / (v.sqrt() + 1e-8);
    };

    let (mut p1, mut m1, mut v1) = (mlp([1.0; 4]), mlp([0.0; 4]), mlp([0.0; 4]));
    pytree_std::walk::zip_mut([&mut p1, &mut m1, &mut v1], [&grads], |[p, m, v], [g]| {
        step(p, m, v, *g)
    })
    .unwrap();

    let (mut p2, mut m2, mut v2) = (mlp([1.0; 4]), mlp([0.0; 4]), mlp([0.0; 4]));
    pytree_std::zip_mut([&mut m2], [&grads], |[m], [g]| {
        *m = b1 * *m + (1.0 - b1) * g
    })
    .unwrap();
    pytree_std::zip_mut([&mut v2], [&grads], |[v], [g]| {
        *v = b2 * *v + (1.0 - b2) * g * g
    })
    .unwrap();
    pytree_std::zip_mut([&mut p2], [&m2, &v2], |[p], [m, v]| {
        *p -= lr * m / (v.sqrt() + 1e-8)
    })
    .unwrap();

    assert_eq!((p1, m1, v1), (p2, m2, v2));
}

#[test]
fn zip_mut_n_checks_every_tree_before_changing_any() {
    let mut p = mlp([1.0; 4]);
    let mut m = mlp([0.0; 4]);
    let mut short = mlp([0.0; 4]);
    short.layers.truncate(1);
    let err = pytree_std::walk::zip_mut([&mut p, &mut m], [&short], |[p, m], [g]| {
        *m += g;
        *p -= g;
    })
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 2 at .layers: sequence length mismatch: expected 2, found 1"
    );
    assert_eq!((p, m), (mlp([1.0; 4]), mlp([0.0; 4])));
}

#[test]
fn try_zip_mut_n_reports_the_failing_leaf_and_keeps_earlier_updates() {
    let mut p = vec![4.0f64, 9.0, 16.0];
    let mut q = vec![0.0f64; 3];
    let err = pytree_std::walk::zip_mut([&mut p, &mut q], [], |[p, q], []| {
        *q = finite(p.sqrt() - 3.0)?;
        if *q == 0.0 {
            return Err(NotFinite(0.0));
        }
        *p = *q;
        Ok(())
    })
    .unwrap_err();
    assert_eq!(err.path().to_string(), "[1]");
    assert_eq!(p, [-1.0, 9.0, 16.0]);
    assert_eq!(q, [-1.0, 0.0, 0.0]);
}
