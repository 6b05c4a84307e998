//! nalgebra's dynamic matrices and vectors as leaves (feature `nalgebra`):
//! one leaf type `DMatrix<T>` lent as views, shapes compared before
//! anything changes, a vector read from a wide matrix is an error; saved
//! and loaded against a file NumPy wrote (`tests/fixtures/nalgebra/`, made
//! and checked by `make_fixture.py` there), trained as ndarray arrays are.

use pytree_std::nalgebra::{DMatrix, DVector};
use pytree_std::Unflatten;
use pytree_std::{elements::Tolerance, KeyPath, PyTree, Std};

mod models;

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
    let sigs = pytree_std::elements::signatures(&p).unwrap();
    let sigs: Vec<String> = pytree_std::leaves(&sigs)
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(sigs, ["f64[3,2]", "f64[3,1]"]);
    let g = linear(2.0);
    pytree_std::zip_mut([&mut p], [&g], |[mut x], [y]| x -= y * 0.5).unwrap();
    assert_eq!(p.b, DVector::from_element(3, 0.0));

    let before = p.clone();
    let mut bad = linear(1.0);
    bad.b = DVector::zeros(4);
    let err = pytree_std::zip_mut([&mut p], [&bad], |[mut x], [y]| x += y).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at .b: leaf signature mismatch: expected f64[3,1], found f64[4,1]"
    );
    assert_eq!(p, before);
    let sum = pytree_std::walk::map_n(&g, [&g], |x, [y]| x + y).unwrap();
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
    let err = pytree_std::walk::map_into::<Linear, Linear, _>(linear(1.0), t).unwrap_err();
    assert_eq!(err.path().to_string(), ".b");
    let caught = std::panic::catch_unwind(|| pytree_std::map(linear(1.0), t)).unwrap_err();
    let message = caught.downcast_ref::<String>().unwrap();
    assert!(message.contains("f64[1,3] for a DVector"), "{message}");
    assert!(message.contains("pytree_std::walk::map_into (one tree) or map_n"));
}

#[test]
fn tree_equal_within_the_tolerance() {
    let a = linear(1.0);
    let mut b = linear(1.0);
    b.w[(2, 1)] += 1e-9;
    assert!(!pytree_std::elements::tree_equal(&a, &b, Tolerance::EXACT));
    assert!(pytree_std::elements::tree_equal(
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
    let (flat, plan) = pytree_std::elements::ravel(&m).unwrap();
    assert_eq!(flat[..6], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]); // w[(i, j)] = 2i + j, row by row
    assert_eq!(plan.unravel(&flat).unwrap(), m);
}

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Mlp {
    layers: Vec<Linear>,
}

fn numpy_fixture() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/nalgebra/mlp_numpy.safetensors")
}

/// The values `make_fixture.py` wrote: `w[l][i, j] = 100 l + 10 i + j +
/// 0.5`, `b[l][i] = -(100 l + i) - 0.25`, weights `[out, in]`.
fn numpy_mlp() -> Mlp {
    let layer = |l: usize, rows: usize, cols: usize| Linear {
        w: DMatrix::from_fn(rows, cols, |i, j| (100 * l + 10 * i + j) as f64 + 0.5),
        b: DVector::from_fn(rows, |i, _| -((100 * l + i) as f64) - 0.25),
    };
    Mlp {
        layers: vec![layer(0, 3, 2), layer(1, 1, 3)],
    }
}

#[test]
fn a_numpy_file_loads_by_type_like_and_into_and_saves_back_bit_for_bit() {
    use pytree_std::checkpoint::{self, Save};
    let want = numpy_mlp();
    let by_type: Mlp = checkpoint::load(numpy_fixture()).unwrap();
    assert_eq!(by_type, want);
    let like = checkpoint::Load::new()
        .open(numpy_fixture())
        .unwrap()
        .load_like(&want)
        .unwrap()
        .0;
    assert_eq!(like, want);
    let mut zero = pytree_std::map(want.clone(), |m| m * 0.0);
    assert!(checkpoint::Load::new()
        .open(numpy_fixture())
        .unwrap()
        .load_into(&mut zero)
        .unwrap()
        .is_complete());
    assert_eq!(zero, want);

    // Written back: NumPy's names, dtypes, shapes (biases 1-d) and bytes
    // (C order), read with the reference implementation of the format.
    let dir = pytree_tests::out_dir("PYTREE_NALGEBRA_OUT", "nalgebra");
    let out = dir.join("mlp_nalgebra.safetensors");
    Save::new().save(&out, &want).unwrap();
    let (written, fixture) = (std::fs::read(&out), std::fs::read(numpy_fixture()));
    models::assert_same_safetensors(&written.unwrap(), &fixture.unwrap());
}

#[test]
fn bad_tensors_for_a_matrix_are_errors_at_their_paths() {
    use pytree_std::checkpoint::Load;
    use safetensors::tensor::{serialize, TensorView};
    use safetensors::Dtype;
    let file = |name: &str, dtype: Dtype, shape: Vec<usize>, data: &[u8]| {
        let bytes =
            serialize([(name, TensorView::new(dtype, shape, data).unwrap())], None).unwrap();
        Load::new().from_bytes(bytes).unwrap()
    };
    #[derive(PyTree, Debug, PartialEq)]
    struct One {
        m: DMatrix<f32>,
    }
    let data: Vec<u8> = (0..8).flat_map(|x| (x as f32).to_le_bytes()).collect();
    let err = file("m", Dtype::F32, vec![2, 2, 2], &data)
        .load::<One>()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .m: tensor `m`: expected a 1-d or 2-d tensor for a nalgebra matrix, found f32[2,2,2]"
    );
    let f64s: Vec<u8> = (0..4).flat_map(|x| (x as f64).to_le_bytes()).collect();
    assert!(file("m", Dtype::F64, vec![4], &f64s).load::<One>().is_err());
    // A 2-d column [n, 1] and a 1-d tensor both load as a column.
    let col = file("m", Dtype::F32, vec![4, 1], &data[..16])
        .load::<One>()
        .unwrap()
        .0;
    let flat = file("m", Dtype::F32, vec![4], &data[..16])
        .load::<One>()
        .unwrap()
        .0;
    assert_eq!((col.m.shape(), &col), ((4, 1), &flat));
    // In place, another shape is an error and nothing is written.
    let mut two = One {
        m: DMatrix::from_element(2, 2, 7.0),
    };
    assert!(file("m", Dtype::F32, vec![4], &data[..16])
        .load_into(&mut two)
        .is_err());
    assert_eq!(two.m, DMatrix::from_element(2, 2, 7.0));
}

/// Adam over nalgebra leaves gives the bits of Adam over ndarray arrays
/// of the same values (the same kernels; the element order differs,
/// which an element-wise update does not see).
#[test]
fn adam_on_matrices_is_adam_on_ndarray_arrays_bit_for_bit() {
    use pytree_optim::{adam, chain, clip_by_global_norm, GradientTransformation};
    use pytree_std::ndarray::{Array1, Array2};

    #[derive(PyTree, Clone, Debug, PartialEq)]
    struct Arrays {
        w: Array2<f64>,
        b: Array1<f64>,
    }
    let to_arrays = |l: &Linear| Arrays {
        w: Array2::from_shape_fn(l.w.shape(), |(i, j)| l.w[(i, j)]),
        b: Array1::from_iter(l.b.iter().copied()),
    };
    let grad = |l: &Linear| Linear {
        w: l.w.map(|x| (x * 0.7).sin()),
        b: l.b.map(|x| x.cos()),
    };
    let opt = adam(0.05);
    let mut p = linear(1.0);
    let mut q = to_arrays(&p);
    let (mut sp, mut sq) = (opt.init(&p).unwrap(), opt.init(&q).unwrap());
    for _ in 0..5 {
        let mut g = grad(&p);
        let mut h = to_arrays(&g);
        opt.step(&mut p, &mut g, &mut sp).unwrap();
        opt.step(&mut q, &mut h, &mut sq).unwrap();
        assert_eq!(to_arrays(&p), q);
    }
    // With the clip the norms are summed in another order: close, not equal.
    let opt = chain(clip_by_global_norm(0.1), adam(0.05));
    let (mut sp, mut sq) = (opt.init(&p).unwrap(), opt.init(&q).unwrap());
    let mut g = grad(&p);
    let mut h = to_arrays(&g);
    opt.step(&mut p, &mut g, &mut sp).unwrap();
    opt.step(&mut q, &mut h, &mut sq).unwrap();
    assert!(to_arrays(&p)
        .w
        .iter()
        .zip(q.w.iter())
        .all(|(a, b)| (a - b).abs() < 1e-12));
    // A gradient of another shape: an error at its path, nothing changed.
    let before = p.clone();
    let mut bad = grad(&p);
    bad.b = DVector::zeros(4);
    let err = opt.step(&mut p, &mut bad, &mut sp).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at .b: leaf signature mismatch: expected f64[3,1], found f64[4,1]"
    );
    assert_eq!(p, before);
}

#[test]
fn summary_lists_matrices_with_their_shapes_and_bytes() {
    let s = pytree_std::elements::summary(&Mlp {
        layers: vec![linear(1.0)],
    });
    let leaves: Vec<(String, String, usize, Option<usize>)> = s
        .rows()
        .iter()
        .filter(|r| r.is_leaf)
        .map(|r| {
            (
                r.path.to_string(),
                r.signature.as_ref().unwrap().to_string(),
                r.elements,
                r.bytes,
            )
        })
        .collect();
    assert_eq!(
        leaves,
        [
            (
                ".layers[0].w".to_string(),
                "f64[3,2]".to_string(),
                6,
                Some(48)
            ),
            (
                ".layers[0].b".to_string(),
                "f64[3,1]".to_string(),
                3,
                Some(24)
            ),
        ]
    );
}
