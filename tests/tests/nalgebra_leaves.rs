//! nalgebra's dynamic matrices and vectors as leaves (feature `nalgebra`):
//! one leaf type `DMatrix<T>` lent as views, shapes compared before
//! anything changes, a vector read from a wide matrix is an error.

use pytree_std::nalgebra::{DMatrix, DVector};
use pytree_std::Unflatten;
use pytree_std::{tree_equal::Tolerance, KeyPath, Leaf, PyTree, Std};

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Linear {
    w: DMatrix<f64>,
    b: DVector<f64>,
}

fn linear(scale: f64) -> Linear {
    Linear {
        w: DMatrix::from_fn(3, 2, |i, j| scale * (i * 2 + j) as f64),
        b: DVector::from_element(3, scale),
    }
}

#[test]
fn matrices_and_vectors_share_one_leaf_type_and_round_trip() {
    let m = vec![linear(1.0), linear(2.0)];
    let (leaves, def): (Vec<DMatrix<f64>>, _) = pytree_std::flatten(m.clone());
    let shapes: Vec<(usize, usize)> = leaves.iter().map(DMatrix::shape).collect();
    assert_eq!(shapes, [(3, 2), (3, 1), (3, 2), (3, 1)]);
    assert_eq!(
        def.to_string(),
        "[Linear { w: *, b: * }, Linear { w: *, b: * }]"
    );
    let back: Vec<Linear> = pytree_std::unflatten(&def, leaves.clone()).unwrap();
    assert_eq!(back, m);
    let mut wrong = leaves;
    wrong.swap(2, 3);
    let err = pytree_std::unflatten::<Vec<Linear>>(&def, wrong).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at [1].b: not a column vector: expected f64[_,1], found f64[3,2]"
    );
}

#[test]
fn views_shapes_and_in_place_updates() {
    let mut p = linear(1.0);
    let sigs: Vec<String> = pytree_std::leaves(&p)
        .iter()
        .map(|x| {
            <DMatrix<f64> as Leaf<Std>>::signature(x)
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(sigs, ["f64[3,2]", "f64[3,1]"]);
    let g = linear(2.0);
    pytree_std::zip_mut(&mut p, [&g], |mut x, [y]| x -= y * 0.5).unwrap();
    assert_eq!(p.b, DVector::from_element(3, 0.0));

    let before = p.clone();
    let mut bad = linear(1.0);
    bad.b = DVector::zeros(4);
    let err = pytree_std::zip_mut(&mut p, [&bad], |mut x, [y]| x += y).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at .b: leaf signature mismatch: expected f64[3,1], found f64[4,1]"
    );
    assert_eq!(p, before);
    let sum = pytree_std::multi::map2(&g, &g, |x, y| x + y).unwrap();
    assert_eq!(sum.b, DVector::from_element(3, 4.0));
    for mut x in pytree_std::leaves_mut(&mut p) {
        x.fill(1.0);
    }
    assert_eq!(p.w, DMatrix::from_element(3, 2, 1.0));
}

#[test]
fn set_keeps_shapes_and_map_keeps_vectors_vectors() {
    let mut p = linear(1.0);
    let b = KeyPath::root().field("b");
    let old = pytree_std::paths::set(&mut p, &b, DMatrix::from_element(3, 1, 5.0)).unwrap();
    assert_eq!(old, DMatrix::from_element(3, 1, 1.0));
    assert_eq!(p.b, DVector::from_element(3, 5.0));
    let before = p.clone();
    let err = pytree_std::paths::set(&mut p, &b, DMatrix::zeros(1, 3)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .b: leaf signature mismatch: expected f64[3,1], found f64[1,3]"
    );
    assert_eq!(p, before);

    let t = |m: DMatrix<f64>| m.transpose();
    let err = pytree_std::basic::map_into::<Linear, Linear>(linear(1.0), t).unwrap_err();
    assert_eq!(err.path().to_string(), ".b");
    let caught = std::panic::catch_unwind(|| pytree_std::map(linear(1.0), t)).unwrap_err();
    let message = caught.downcast_ref::<String>().unwrap();
    assert!(message.contains("f64[1,3] for a DVector"), "{message}");
    assert!(message.contains("pytree_std::basic::map_into or try_map"));
}

#[test]
fn tree_equal_within_the_tolerance() {
    let a = linear(1.0);
    let mut b = linear(1.0);
    b.w[(2, 1)] += 1e-9;
    assert!(!pytree_std::tree_equal::tree_equal(
        &a,
        &b,
        Tolerance::EXACT
    ));
    assert!(pytree_std::tree_equal::tree_equal(
        &a,
        &b,
        Tolerance::new(0.0, 1e-6)
    ));
}

#[test]
fn the_prechecked_passes_never_hand_the_function_shapes_that_differ() {
    use pytree_std::Flatten;
    let a = linear(1.0);
    let mut b = linear(2.0);
    b.b = DVector::zeros(5);
    let sum = Unflatten::<Std>::zip_with_prechecked(&a, [&b], &mut |x, [y]| x + y);
    assert_eq!(sum.b, DVector::from_element(3, 2.0));
    let mut p = a.clone();
    Flatten::<Std>::zip_mut_prechecked(&mut p, [&b], &mut |mut x, [y]| x += y);
    assert_eq!(p.b, a.b);
    assert_eq!(p.w, &a.w * 3.0);
}

#[test]
fn ravel_in_c_order_and_back() {
    let m = linear(1.0);
    let (flat, plan) = pytree_std::ravel::ravel(&m).unwrap();
    assert_eq!(flat[..6], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]); // w[(i, j)] = 2i + j, row by row
    assert_eq!(plan.unravel(&flat).unwrap(), m);
}
