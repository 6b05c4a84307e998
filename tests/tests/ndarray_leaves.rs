//! ndarray arrays as leaves (feature `ndarray`): a model whose fields are
//! arrays of different ranks has one leaf type, `ArrayD<f32>`, lent as
//! views; every operation works on it, shapes are compared before
//! anything changes, and a wrong rank is an error at its path.

mod models;

use models::arrays::{Linear, Mlp};
use pytree_std::ndarray::{
    arr0, array, ArcArray1, Array1, Array2, Array3, ArrayD, ArrayViewD, IxDyn,
};
use pytree_std::{
    elements::Tolerance, treelize::mode, treelize::Treelize, DType, ErrorKind, KeyPath, Leaf,
    PyTree, Signature, Std, Tree, TreeDef, Unflatten,
};

/// Generic halves for `partition` / `combine`.
#[derive(PyTree, Clone, Debug, PartialEq)]
struct Pair<W, B> {
    w: W,
    b: B,
}

fn linear(scale: f32) -> Linear {
    Linear {
        w: Array2::from_shape_fn((3, 3), |(i, j)| scale * (i * 3 + j) as f32),
        b: Array1::from_elem(3, scale),
    }
}

fn mlp() -> Mlp {
    Mlp {
        layers: vec![linear(1.0), linear(2.0)],
        name: "mlp".into(),
    }
}

fn root() -> KeyPath {
    KeyPath::root()
}

#[test]
fn a_model_of_mixed_ranks_has_one_leaf_type_and_round_trips() {
    let m = mlp();
    let (leaves, def): (Vec<ArrayD<f32>>, TreeDef) = pytree_std::flatten(m.clone());
    let shapes: Vec<&[usize]> = leaves.iter().map(|a| a.shape()).collect();
    assert_eq!(shapes, [&[3, 3][..], &[3], &[3, 3], &[3]]);
    assert_eq!(
        def.to_string(),
        r#"Mlp { layers: [Linear { w: *, b: * }, Linear { w: *, b: * }], name: "mlp" }"#
    );
    assert_eq!(def.num_leaves(), 4);
    let back: Mlp = pytree_std::unflatten(&def, leaves).unwrap();
    assert_eq!(back, m);
}

#[test]
fn unflatten_checks_each_rank_and_names_the_field() {
    let (mut leaves, def) = pytree_std::flatten(mlp());
    leaves.swap(2, 3); // layers[1]: w gets the bias (1-d), b the matrix (2-d)
    let err = pytree_std::unflatten::<Mlp>(&def, leaves.clone()).unwrap_err();
    assert_eq!(err.path().to_string(), ".layers[1].w");
    assert_eq!(
        err.to_string(),
        "at .layers[1].w: array rank mismatch: expected a 2-d array, found f32[3]"
    );
    // A TreeDef read once as `Mlp` is trusted afterwards: the rank is still
    // checked (it is about leaves, not records).
    let (good, _) = pytree_std::flatten(mlp());
    let _: Mlp = pytree_std::unflatten(&def, good).unwrap();
    let again = pytree_std::unflatten::<Mlp>(&def, leaves).unwrap_err();
    assert_eq!(again.path().to_string(), ".layers[1].w");
}

#[test]
fn leaves_are_views_of_their_own_rank() {
    let m = mlp();
    let leaves: Vec<ArrayViewD<'_, f32>> = pytree_std::leaves(&m);
    assert_eq!(leaves.len(), 4);
    assert_eq!(leaves[1].ndim(), 1);
    assert_eq!(leaves[2][[1, 1]], 8.0);
    // The views borrow the model's data: no copy.
    assert_eq!(leaves[0].as_ptr(), m.layers[0].w.as_ptr());
    let paths: Vec<String> = pytree_std::paths::leaves_with_path(&m)
        .iter()
        .map(|(p, x)| format!("{p}: {}", <ArrayD<f32> as Leaf<Std>>::signature(x).unwrap()))
        .collect();
    assert_eq!(
        paths,
        [
            ".layers[0].w: f32[3,3]",
            ".layers[0].b: f32[3]",
            ".layers[1].w: f32[3,3]",
            ".layers[1].b: f32[3]"
        ]
    );
}

#[test]
fn leaves_mut_and_for_each_mut_write_through_views() {
    let mut m = mlp();
    for mut x in pytree_std::leaves_mut(&mut m) {
        x.fill(1.0);
    }
    assert_eq!(m.layers[1].w, Array2::<f32>::ones((3, 3)));
    pytree_std::for_each_mut(&mut m, |mut x| x *= 3.0);
    assert_eq!(m.layers[0].b, array![3.0, 3.0, 3.0]);
    let mut total = 0.0;
    pytree_std::leaves(&m)
        .into_iter()
        .for_each(|x| total += x.sum());
    assert_eq!(total, 3.0 * (9.0 + 3.0) * 2.0);
}

#[test]
fn map_keeps_ranks_and_may_change_shapes_within_a_rank() {
    let doubled = pytree_std::map(mlp(), |x| x * 2.0);
    assert_eq!(doubled.layers[1].b, array![4.0, 4.0, 4.0]);
    // Same rank, another shape: fine.
    let grown = pytree_std::map(linear(1.0), |x| {
        let shape: Vec<usize> = x.shape().iter().map(|d| d + 1).collect();
        ArrayD::zeros(IxDyn(&shape))
    });
    assert_eq!(grown.w.dim(), (4, 4));
    assert_eq!(grown.b.dim(), 4);
}

#[test]
fn a_rank_change_is_an_error_through_map_into_and_a_fallible_map_n_and_a_panic_through_map() {
    let flat = |x: ArrayD<f32>| {
        let n = x.len();
        x.into_shape_with_order(IxDyn(&[n])).unwrap()
    };
    let err = pytree_std::walk::map_into::<Linear, Linear, _>(linear(1.0), flat).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .w: array rank mismatch: expected a 2-d array, found f32[9]"
    );
    // `map` returns the tree itself: it panics, naming the alternatives.
    let caught = std::panic::catch_unwind(|| pytree_std::map(linear(1.0), flat)).unwrap_err();
    let message = caught.downcast_ref::<String>().unwrap();
    assert!(message.contains("returned a 1-d array (f32[9]) for an array of rank 2"));
    assert!(message.contains("pytree_std::walk::map_into (one tree) or map_n"));
    // Several trees: a fallible function rebuilds through the TreeDef too.
    let (a, b) = (linear(1.0), linear(2.0));
    let err = pytree_std::walk::map_n(&a, [&b], |x, [y]| {
        let sum = &x + &y;
        let n = sum.len();
        sum.into_shape_with_order(IxDyn(&[n]))
    })
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .w: array rank mismatch: expected a 2-d array, found f32[9]"
    );
    // An `ArrayD` field takes any rank.
    let free = pytree_std::map(
        Pair {
            w: ArrayD::<f32>::zeros(IxDyn(&[2, 2])),
            b: ArrayD::<f32>::zeros(IxDyn(&[1])),
        },
        flat,
    );
    assert_eq!(free.w.shape(), [4]);
}

#[test]
fn map2_and_map_n_combine_views() {
    let (a, b, c) = (mlp(), mlp(), mlp());
    let sum = pytree_std::walk::map_n(&a, [&b], |x, [y]| &x + &y).unwrap();
    assert_eq!(sum.layers[0].w[[2, 2]], 16.0);
    let three = pytree_std::map_n(&a, [&b, &c], |x, [y, z]| &x + &y + &z).unwrap();
    assert_eq!(three.layers[1].b, array![6.0, 6.0, 6.0]);
}

#[test]
fn a_shape_mismatch_is_an_error_naming_the_path_and_both_shapes() {
    let a = mlp();
    let mut b = mlp();
    b.layers[1].w = Array2::zeros((2, 16));
    let err = pytree_std::walk::map_n(&a, [&b], |x, [y]| &x + &y).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at .layers[1].w: leaf signature mismatch: expected f32[3,3], found f32[2,16]"
    );
    assert_eq!(
        err.kind(),
        &ErrorKind::SignatureMismatch {
            expected: Signature::new(DType::F32, vec![3, 3]),
            found: Signature::new(DType::F32, vec![2, 16]),
        }
    );
    // In map_n, the tree that differs is named.
    let err = pytree_std::map_n(&a, [&a, &b], |x, [y, z]| &x + &y + &z).unwrap_err();
    assert_eq!(err.tree_index(), Some(2));
    assert_eq!(err.path().to_string(), ".layers[1].w");
}

#[test]
fn zip_mut_updates_in_place_and_changes_nothing_on_a_shape_mismatch() {
    let mut params = mlp();
    let grads = mlp();
    pytree_std::zip_mut([&mut params], [&grads], |[mut p], [g]| {
        p.scaled_add(-0.5, &g)
    })
    .unwrap();
    assert_eq!(params.layers[1].b, array![1.0, 1.0, 1.0]);

    let before = params.clone();
    let mut bad = mlp();
    bad.layers[1].b = Array1::zeros(4); // layers[0] still matches: must not be updated
    let err = pytree_std::zip_mut([&mut params], [&bad], |[mut p], [g]| p.scaled_add(-0.5, &g))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at .layers[1].b: leaf signature mismatch: expected f32[3], found f32[4]"
    );
    assert_eq!(params, before);
}

#[test]
fn structural_mismatches_still_list_every_place() {
    let a = mlp();
    let mut b = mlp();
    b.layers.pop();
    b.name = "other".into();
    let err = pytree_std::walk::map_n(&a, [&b], |x, [y]| &x + &y).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Mismatches(all) if all.len() == 2));
}

/// Issue 19: every mismatch is listed, shapes included: two leaves of
/// wrong shape, and a length mismatch beside a shape mismatch.
#[test]
fn every_shape_mismatch_is_listed_beside_the_structural_ones() {
    let a = mlp();
    let mut b = mlp();
    b.layers[0].b = Array1::zeros(4);
    b.layers[1].w = Array2::zeros((2, 16));
    let want = "tree structures differ (2 mismatches found)
  tree 1 at .layers[0].b: leaf signature mismatch: expected f32[3], found f32[4]
  tree 1 at .layers[1].w: leaf signature mismatch: expected f32[3,3], found f32[2,16]";
    let err = pytree_std::walk::map_n(&a, [&b], |x, [y]| &x + &y).unwrap_err();
    assert_eq!(err.to_string(), want);
    let mut c = mlp();
    let err = pytree_std::zip_mut([&mut c], [&b], |[mut p], [g]| p += &g).unwrap_err();
    assert_eq!(err.to_string(), want);
    assert_eq!(c, mlp());
    let err =
        pytree_std::walk::zip_mut::<_, 1, 1, Result<(), String>>([&mut c], [&b], |_, _| Ok(()))
            .unwrap_err();
    assert_eq!(err.to_string(), want);

    // A length mismatch (layers) and a shape mismatch (layers[0].b), in
    // two trees of a map_n: each named with its tree.
    let mut short = mlp();
    short.layers.pop();
    short.layers[0].b = Array1::zeros(1);
    let err = pytree_std::map_n(&a, [&short, &b], |x, [y, z]| &x + &y + &z).unwrap_err();
    let ErrorKind::Mismatches(all) = err.kind() else {
        panic!("{err}")
    };
    let listed: Vec<String> = all.iter().map(|e| e.to_string()).collect();
    assert_eq!(listed.len(), 4, "{err}");
    assert!(
        listed[0].starts_with("tree 1 at .layers: sequence length mismatch: expected 2, found 1"),
        "{err}"
    );
    assert_eq!(
        listed[1],
        "tree 1 at .layers[0].b: leaf signature mismatch: expected f32[3], found f32[1]"
    );
    assert_eq!(
        listed[2],
        "tree 2 at .layers[0].b: leaf signature mismatch: expected f32[3], found f32[4]"
    );
    assert_eq!(
        listed[3],
        "tree 2 at .layers[1].w: leaf signature mismatch: expected f32[3,3], found f32[2,16]"
    );
}

#[test]
fn get_and_set_by_path_keep_shapes() {
    let mut m = mlp();
    let w = root().field("layers").index(1).field("w");
    assert_eq!(pytree_std::paths::get(&m, &w).unwrap().shape(), [3, 3]);
    let b = root().field("layers").index(0).field("b");
    let old = pytree_std::paths::set(&mut m, &b, array![7.0, 8.0, 9.0].into_dyn()).unwrap();
    assert_eq!(old, array![1.0, 1.0, 1.0].into_dyn());
    assert_eq!(m.layers[0].b, array![7.0, 8.0, 9.0]);

    let before = m.clone();
    let err = pytree_std::paths::set(&mut m, &b, array![1.0].into_dyn()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .layers[0].b: leaf signature mismatch: expected f32[3], found f32[1]"
    );
    let err =
        pytree_std::paths::set(&mut m, &b, Array2::<f32>::zeros((3, 1)).into_dyn()).unwrap_err();
    assert_eq!(err.path().to_string(), ".layers[0].b");
    assert_eq!(m, before);

    pytree_std::paths::update(&mut m, &w, |mut x| x[[0, 0]] = -1.0).unwrap();
    assert_eq!(m.layers[1].w[[0, 0]], -1.0);
    let missing = pytree_std::paths::get(&m, &root().field("layers").index(5)).unwrap_err();
    assert!(matches!(missing.kind(), ErrorKind::PathNotFound { .. }));
}

#[test]
fn set_subtree_replaces_a_layer_of_the_same_shapes_only() {
    let mut m = mlp();
    let at = root().field("layers").index(1);
    let old: Linear = pytree_std::paths::set_subtree(&mut m, &at, linear(10.0)).unwrap();
    assert_eq!(old, linear(2.0));
    assert_eq!(m.layers[1], linear(10.0));

    let before = m.clone();
    let wrong = Linear {
        w: Array2::zeros((3, 3)),
        b: Array1::zeros(5),
    };
    let err = pytree_std::paths::set_subtree(&mut m, &at, wrong).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .layers[1].b: leaf signature mismatch: expected f32[3], found f32[5]"
    );
    assert_eq!(m, before);
}

#[test]
fn tree_equal_compares_shapes_then_elements_within_the_tolerance() {
    let a = mlp();
    let mut b = mlp();
    b.layers[0].w[[0, 1]] += 1e-6;
    assert!(!pytree_std::elements::tree_equal(&a, &b, Tolerance::EXACT));
    assert!(pytree_std::elements::tree_equal(
        &a,
        &b,
        Tolerance::new(1e-5, 1e-8)
    ));
    b.layers[0].b = Array1::from_elem(4, 1.0);
    assert!(!pytree_std::elements::tree_equal(
        &a,
        &b,
        Tolerance::new(1.0, 1.0)
    ));
}

#[test]
fn treelize_applies_a_function_of_views_and_checks_shapes() {
    let (a, b) = (linear(1.0), linear(2.0));
    let mut sub = Treelize::new(|x: ArrayViewD<'_, f32>, y: ArrayViewD<'_, f32>| &y - &x);
    let d: Linear = sub.call2(&a, &b).unwrap();
    assert_eq!(d, linear(1.0));
    let mut odd = linear(1.0);
    odd.w = Array2::zeros((2, 2));
    let err = sub.call2::<_, _, _, Linear>(&a, &odd).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::SignatureMismatch { .. }),
        "{err}"
    );
    assert_eq!(err.path().to_string(), ".w");
    // Outer mode over dynamic trees of arrays.
    let t1 = Tree::from_pytree(linear(1.0)).unwrap();
    let t2: Tree<ArrayD<f32>> =
        pytree_std::tree! { "b" => Array1::from_elem(3, 1.0f32).into_dyn() };
    let mut add = Treelize::new(|x: ArrayViewD<'_, f32>, y: ArrayViewD<'_, f32>| &x + &y)
        .mode(mode::Outer)
        .missing(ArrayD::zeros(IxDyn(&[3])));
    let r: Tree<ArrayD<f32>> = add.call2(&t1, &t2).unwrap();
    assert_eq!(
        r["b"].as_leaf().unwrap(),
        &Array1::from_elem(3, 2.0f32).into_dyn()
    );
    // "w" is missing from t2: the provided value is added (broadcast by ndarray).
    assert_eq!(r["w"].as_leaf().unwrap(), &linear(1.0).w.into_dyn());
}

#[test]
fn partition_and_combine_split_a_model_of_arrays() {
    let m: Pair<Array2<f32>, Array1<f32>> = Pair {
        w: Array2::ones((2, 2)),
        b: Array1::zeros(2),
    };
    type Half = Pair<Option<Array2<f32>>, Option<Array1<f32>>>;
    let (ws, rest): (Half, Half) =
        pytree_std::split::partition(m.clone(), |path, _| path.to_string() == ".w").unwrap();
    assert_eq!(ws.w, Some(Array2::ones((2, 2))));
    assert_eq!((ws.b, rest.w.clone()), (None, None));
    let (ws, _): (Half, Half) =
        pytree_std::split::partition(m.clone(), |_, x| x.ndim() == 2).unwrap();
    let back: Pair<Array2<f32>, Array1<f32>> = pytree_std::split::combine([ws, rest]).unwrap();
    assert_eq!(back, m);
}

#[test]
fn shared_and_owned_arrays_of_any_rank_mix_in_one_struct() {
    #[derive(PyTree, Clone, Debug, PartialEq)]
    struct Mixed {
        table: ArcArray1<f32>,
        kernel: Array3<f32>,
        scale: ArrayD<f32>,
        step: Array<f32, pytree_std::ndarray::Ix0>,
    }
    use pytree_std::ndarray::Array;
    let shared = Array1::from_vec(vec![1.0f32, 2.0]).into_shared();
    let m = Mixed {
        table: shared.clone(),
        kernel: Array3::zeros((1, 2, 3)),
        scale: ArrayD::ones(IxDyn(&[2, 2, 2, 2])),
        step: arr0(5.0),
    };
    let sigs = pytree_std::elements::signatures(&m).unwrap();
    let sigs: Vec<String> = pytree_std::leaves(&sigs)
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(sigs, ["f32[2]", "f32[1,2,3]", "f32[2,2,2,2]", "f32[]"]);
    let mut n = m.clone();
    pytree_std::zip_mut([&mut n], [&m], |[mut x], [y]| x += &y).unwrap();
    assert_eq!(n.table, array![2.0, 4.0]);
    assert_eq!(shared, array![1.0, 2.0]); // the shared data was copied on write
    assert_eq!(n.step, arr0(10.0));
    let (leaves, def) = pytree_std::flatten(n.clone());
    let back: Mixed = pytree_std::unflatten(&def, leaves).unwrap();
    assert_eq!(back, n);
}

#[test]
fn a_vec_of_arrays_is_lent_as_one_run_of_views() {
    let mut v: Vec<Array2<f32>> = vec![Array2::zeros((2, 2)), Array2::ones((1, 3))];
    let other = v.clone();
    pytree_std::zip_mut([&mut v], [&other], |[mut x], [y]| x += &y).unwrap();
    assert_eq!(v[1], Array2::from_elem((1, 3), 2.0));
    let old = pytree_std::paths::set(
        &mut v,
        &root().index(0),
        Array2::from_elem((2, 2), 9.0).into_dyn(),
    )
    .unwrap();
    assert_eq!(old, Array2::<f32>::zeros((2, 2)).into_dyn());
    let err = pytree_std::paths::set(&mut v, &root().index(1), Array2::zeros((3, 1)).into_dyn())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "at [1]: leaf signature mismatch: expected f32[1,3], found f32[3,1]"
    );
    let w = vec![Array2::zeros((2, 2)), Array2::zeros((3, 1))];
    let err = pytree_std::walk::map_n(&v, [&w], |x, [y]| &x + &y).unwrap_err();
    assert_eq!(err.path().to_string(), "[1]");
    assert_eq!(pytree_std::structure(&v).to_string(), "[*, *]");
}

#[test]
fn element_types_name_their_dtype() {
    let ints = array![[1i32, 2]].into_dyn();
    let sig = <ArrayD<i32> as Leaf<Std>>::signature(&ints.view()).unwrap();
    assert_eq!((sig.dtype(), sig.shape()), (DType::I32, &[1usize, 2][..]));
    let halves = array![pytree_std::half::f16::ONE].into_dyn();
    let sig = <ArrayD<pytree_std::half::f16> as Leaf<Std>>::signature(&halves.view()).unwrap();
    assert_eq!(sig.to_string(), "f16[1]");
    let bools = array![true, false];
    assert!(pytree_std::elements::tree_equal(
        &bools,
        &bools.clone(),
        Tolerance::EXACT
    ));
}

#[test]
fn dynamic_trees_of_arrays_convert_both_ways() {
    let t: Tree<ArrayD<f32>> = Tree::from_pytree(linear(1.0)).unwrap();
    assert_eq!(t["b"].as_leaf().unwrap().shape(), [3]);
    let def = pytree_std::structure(&linear(0.0));
    let back: Linear = t.to_pytree(&def).unwrap();
    assert_eq!(back, linear(1.0));
    // A leaf of the wrong rank under a typed field: an error at its path.
    let swapped: Tree<ArrayD<f32>> = pytree_std::tree! {
        "w" => Array1::<f32>::zeros(3).into_dyn(),
        "b" => Array1::<f32>::zeros(3).into_dyn(),
    };
    let err = swapped.to_pytree::<Linear>(&def).unwrap_err();
    assert_eq!(err.path().to_string(), ".w");
}

/// The other way out the compile error names: a user namespace where a
/// rank-typed array is a leaf (here without the feature's shape checks).
mod nd {
    pub struct Nd;
    pytree_std::impl_leaf!(Nd => pytree_std::ndarray::Array2<f32>);
}

#[derive(PyTree, Debug, PartialEq)]
#[pytree(namespace = nd::Nd)]
struct Dense {
    w: Array2<f32>,
    v: Array2<f32>,
}

#[test]
fn a_user_namespace_can_declare_a_foreign_array_type_a_leaf() {
    let d = Dense {
        w: Array2::ones((2, 2)),
        v: Array2::zeros((1, 1)),
    };
    let (leaves, def) = pytree_core::ops::basic::flatten::<nd::Nd, _>(d);
    assert_eq!(leaves[0], Array2::<f32>::ones((2, 2)));
    let back: Dense = pytree_core::ops::basic::unflatten::<nd::Nd, _, _>(&def, leaves).unwrap();
    assert_eq!(back.v, Array2::<f32>::zeros((1, 1)));
}

#[test]
fn the_prechecked_passes_never_hand_the_function_shapes_that_differ() {
    use pytree_std::Flatten;
    let a = linear(1.0);
    let mut b = linear(2.0);
    b.w = Array2::zeros((2, 16));
    // The check was skipped: `b.w` differs, so `a.w` stands in for it.
    let sum = Unflatten::<Std>::zip_with_prechecked(&a, [&b], &mut |x, [y]| &x + &y);
    assert_eq!(sum.w, &a.w * 2.0);
    assert_eq!(sum.b, array![3.0, 3.0, 3.0]);
    // In place: the leaf whose other differs is left as it is.
    let mut p = a.clone();
    Flatten::<Std>::zip_mut_prechecked(&mut p, [&b], &mut |mut x, [y]| x += &y);
    assert_eq!(p.w, a.w);
    assert_eq!(p.b, array![3.0, 3.0, 3.0]);
}

#[test]
fn ravel_summary_and_parallel_updates_of_a_model_of_arrays() {
    let m = mlp();
    let (flat, plan) = pytree_std::elements::ravel(&m).unwrap();
    assert_eq!(flat.len(), 2 * (9 + 3));
    assert_eq!(flat[9..12], [1.0, 1.0, 1.0]); // layers[0].b after the 3x3 w
    let moved: Vec<f32> = flat.iter().map(|x| x + 1.0).collect();
    let back: Mlp = plan.unravel(&moved).unwrap();
    assert_eq!(back, pytree_std::map(mlp(), |x| x + 1.0));
    assert!(plan.unravel(&flat[1..]).is_err());

    let s = pytree_std::elements::summary(&m);
    assert_eq!((s.num_leaves(), s.num_elements()), (4, 24));
    assert_eq!(s.num_bytes(), Some(24 * 4));
    let sigs = pytree_std::elements::signatures(&m).unwrap();
    assert_eq!(
        sigs["layers"][1]["w"].as_leaf(),
        Some(&Signature::new(DType::F32, vec![3, 3]))
    );

    // An Adam-like step in one parallel pass: params and two moments
    // updated, the gradient read.
    let (mut p, mut mu, mut nu, g) = (
        mlp(),
        pytree_std::map(mlp(), |x| x * 0.0),
        pytree_std::map(mlp(), |x| x * 0.0),
        mlp(),
    );
    pytree_std::parallel::par_zip_mut(
        [&mut p, &mut mu, &mut nu],
        [&g],
        |[mut p, mut m, mut v], [g]| {
            m.zip_mut_with(&g, |m, g| *m = 0.9 * *m + 0.1 * g);
            v.zip_mut_with(&g, |v, g| *v = 0.999 * *v + 0.001 * g * g);
            p.zip_mut_with(&m, |p, m| *p -= m);
        },
    )
    .unwrap();
    assert_eq!(mu.layers[1].b, array![0.2, 0.2, 0.2]);
    assert_eq!(p.layers[1].b, array![1.8, 1.8, 1.8]);
    let mut bad = mlp();
    bad.layers[0].w = Array2::zeros((1, 1));
    let before = p.clone();
    let err =
        pytree_std::parallel::par_zip_mut([&mut p], [&bad], |[mut x], [y]| x += &y).unwrap_err();
    assert_eq!(err.path().to_string(), ".layers[0].w");
    assert_eq!(p, before);
}
