//! The `rayon` forms give the results of the sequential ones, check
//! before they change anything, and report a failing leaf at its path.

use pytree_std::PyTree;

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Layer {
    w: Vec<f64>,
    b: f64,
    #[pytree(kind = "state")]
    count: f64,
}

fn model(n: usize, seed: f64) -> Vec<Layer> {
    (0..n)
        .map(|i| Layer {
            w: (0..(i % 7) * 13)
                .map(|j| seed + (i * 31 + j) as f64 * 0.01)
                .collect(),
            b: seed * i as f64,
            count: 0.0,
        })
        .collect()
}

fn adam(p: &mut f64, m: &mut f64, v: &mut f64, g: f64) {
    *m = 0.9 * *m + 0.1 * g;
    *v = 0.999 * *v + 0.001 * g * g;
    *p -= 0.01 * *m / (v.sqrt() + 1e-8);
}

#[test]
fn par_zip_mut_n_equals_zip_mut_n() {
    let grads = model(200, 0.3);
    let (mut p1, mut m1, mut v1) = (model(200, 1.0), model(200, 0.0), model(200, 0.0));
    let (mut p2, mut m2, mut v2) = (p1.clone(), m1.clone(), v1.clone());
    for _ in 0..3 {
        pytree_std::walk::zip_mut([&mut p1, &mut m1, &mut v1], [&grads], |[p, m, v], [g]| {
            adam(p, m, v, *g)
        })
        .unwrap();
        pytree_std::parallel::par_zip_mut(
            [&mut p2, &mut m2, &mut v2],
            [&grads],
            |[p, m, v], [g]| adam(p, m, v, *g),
        )
        .unwrap();
    }
    assert_eq!((p1, m1, v1), (p2, m2, v2));
}

#[test]
fn par_zip_mut_and_par_for_each_mut_equal_their_sequential_forms() {
    let g = model(100, 0.5);
    let (mut a, mut b) = (model(100, 1.0), model(100, 1.0));
    pytree_std::zip_mut([&mut a], [&g], |[p], [g]| *p -= 0.1 * g).unwrap();
    pytree_std::parallel::par_zip_mut([&mut b], [&g], |[p], [g]| *p -= 0.1 * g).unwrap();
    assert_eq!(a, b);
    pytree_std::for_each_mut(&mut a, |x| *x = x.sin());
    pytree_std::parallel::par_zip_mut([&mut b], [], |[x], []| *x = x.sin()).unwrap();
    assert_eq!(a, b);
}

#[test]
fn par_map_equals_map() {
    let t = model(150, 2.0);
    assert_eq!(
        pytree_std::parallel::par_map(t.clone(), |x| x * x - 1.0).unwrap(),
        pytree_std::map(t, |x| x * x - 1.0)
    );
}

#[test]
fn a_mismatch_changes_nothing_in_any_tree() {
    let (mut p, mut m) = (model(50, 1.0), model(50, 0.0));
    let mut g = model(50, 0.5);
    g[49].w.push(1.0);
    let err = pytree_std::parallel::par_zip_mut([&mut p, &mut m], [&g], |[p, m], [g]| {
        *m += g;
        *p -= g;
    })
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 2 at [49].w: sequence length mismatch: expected 0, found 1"
    );
    assert_eq!((p, m), (model(50, 1.0), model(50, 0.0)));
}

#[test]
fn the_first_failing_leaf_in_leaf_order_is_reported() {
    let mut t = model(300, 1.0);
    t[120].b = -1.0;
    t[250].b = -1.0;
    let err = pytree_std::parallel::par_zip_mut([&mut t], [], |[x], []| {
        if *x < 0.0 {
            Err("negative")
        } else {
            *x = x.sqrt();
            Ok(())
        }
    })
    .unwrap_err();
    assert_eq!(err.to_string(), "at [120].b: the function failed: negative");
}
