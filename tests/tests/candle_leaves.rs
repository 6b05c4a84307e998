//! candle tensors as leaves (feature `candle`): lent by reference, with
//! their dtype, dims and device as signature, so shape mismatches are
//! errors at their path and nothing changes.

use pytree_std::candle_core::{DType as CandleDType, Device, Tensor};
use pytree_std::{
    elements::Tolerance, treelize::Treelize, DType, ErrorKind, KeyPath, Leaf, PyTree, Signature,
    Std, Tree, TreeDef, Unflatten,
};

#[derive(PyTree, Clone, Debug)]
struct Linear {
    w: Tensor,
    b: Tensor,
}

#[derive(PyTree, Clone, Debug)]
struct Mlp {
    layers: Vec<Linear>,
    #[pytree(static)]
    depth: usize,
}

/// Generic halves for `partition` / `combine`.
#[derive(PyTree, Clone, Debug)]
struct Pair<T> {
    w: T,
    b: T,
}

fn t(values: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_slice(values, shape, &Device::Cpu).unwrap()
}

fn linear(scale: f32) -> Linear {
    let w: Vec<f32> = (0..9).map(|i| scale * i as f32).collect();
    Linear {
        w: t(&w, &[3, 3]),
        b: t(&[scale; 3], &[3]),
    }
}

fn mlp() -> Mlp {
    Mlp {
        layers: vec![linear(1.0), linear(2.0)],
        depth: 2,
    }
}

fn values(x: &Tensor) -> Vec<f32> {
    x.flatten_all().unwrap().to_vec1::<f32>().unwrap()
}

fn same(a: &Mlp, b: &Mlp) -> bool {
    pytree_std::elements::tree_equal(a, b, Tolerance::EXACT)
}

fn sig(x: &Tensor) -> Signature {
    <Tensor as Leaf<Std>>::signature(&x).unwrap()
}

#[test]
fn signatures_name_dtype_dims_and_device() {
    let x = t(&[1.0, 2.0], &[1, 2]);
    assert_eq!(sig(&x).to_string(), "f32[1,2]@cpu");
    assert_eq!(sig(&x).device(), Some("cpu"));
    let h = x.to_dtype(CandleDType::BF16).unwrap();
    assert_eq!(sig(&h).dtype(), DType::BF16);
    let i = Tensor::new(&[1i64, 2], &Device::Cpu).unwrap();
    assert_eq!(sig(&i).to_string(), "i64[2]@cpu");
    let s = Tensor::new(3.0f64, &Device::Cpu).unwrap();
    assert_eq!(sig(&s).to_string(), "f64[]@cpu");
}

#[test]
fn flatten_and_unflatten_round_trip() {
    let m = mlp();
    let (leaves, def): (Vec<Tensor>, TreeDef) = pytree_std::flatten(m.clone());
    assert_eq!(leaves.len(), 4);
    assert_eq!(leaves[2].dims(), [3, 3]);
    assert_eq!(
        def.to_string(),
        "Mlp { layers: [Linear { w: *, b: * }, Linear { w: *, b: * }], depth: 2 }"
    );
    let back: Mlp = pytree_std::unflatten(&def, leaves).unwrap();
    assert!(same(&back, &m));
    let err = pytree_std::unflatten::<Mlp>(&def, vec![t(&[0.0], &[1])]).unwrap_err();
    assert_eq!(err.path().to_string(), ".layers[0].b");
}

#[test]
fn map_and_map2_with_candle_operations() {
    let doubled = pytree_std::map(mlp(), |x| (x * 2.0).unwrap());
    assert_eq!(values(&doubled.layers[1].b), [4.0, 4.0, 4.0]);
    let (a, b) = (mlp(), mlp());
    let sum = pytree_std::walk::map_n(&a, [&b], |x, [y]| (x + y).unwrap()).unwrap();
    assert_eq!(values(&sum.layers[0].b), [2.0, 2.0, 2.0]);
    let three =
        pytree_std::map_n(&a, [&b, &a], |x, [y, z]| ((x + y).unwrap() + z).unwrap()).unwrap();
    assert_eq!(values(&three.layers[1].w)[8], 48.0);
}

#[test]
fn a_shape_mismatch_is_an_error_naming_the_path_and_both_signatures() {
    let a = mlp();
    let mut b = mlp();
    b.layers[1].w = Tensor::zeros((2, 16), CandleDType::F32, &Device::Cpu).unwrap();
    let err = pytree_std::walk::map_n(&a, [&b], |x, [y]| (x + y).unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at .layers[1].w: leaf signature mismatch: expected f32[3,3]@cpu, found f32[2,16]@cpu"
    );
    // A dtype mismatch too.
    let mut c = mlp();
    c.layers[0].b = c.layers[0].b.to_dtype(CandleDType::F64).unwrap();
    let err = pytree_std::walk::map_n(&a, [&c], |x, [y]| (x + y).unwrap()).unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::SignatureMismatch {
            expected: Signature::new(DType::F32, vec![3]).with_device("cpu"),
            found: Signature::new(DType::F64, vec![3]).with_device("cpu"),
        }
    );
    assert_eq!(err.path().to_string(), ".layers[0].b");
}

#[test]
fn zip_mut_replaces_tensors_and_changes_nothing_on_a_mismatch() {
    let mut params = mlp();
    let grads = mlp();
    pytree_std::zip_mut([&mut params], [&grads], |[p], [g]| {
        *p = (&*p - (g * 0.5).unwrap()).unwrap();
    })
    .unwrap();
    assert_eq!(values(&params.layers[1].b), [1.0, 1.0, 1.0]);

    let before = params.clone();
    let mut bad = mlp();
    bad.layers[1].b = t(&[0.0; 4], &[4]);
    let err = pytree_std::zip_mut([&mut params], [&bad], |[p], [g]| {
        *p = (&*p - g).unwrap();
    })
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at .layers[1].b: leaf signature mismatch: expected f32[3]@cpu, found f32[4]@cpu"
    );
    assert!(same(&params, &before));
}

#[test]
fn leaves_leaves_mut_and_for_each_mut() {
    let mut m = mlp();
    assert_eq!(pytree_std::leaves(&m).len(), 4);
    for x in pytree_std::leaves_mut(&mut m) {
        *x = x.ones_like().unwrap();
    }
    pytree_std::for_each_mut(&mut m, |x| *x = (&*x * 3.0).unwrap());
    assert_eq!(values(&m.layers[0].w), [3.0; 9]);
    let paths: Vec<String> = pytree_std::paths::leaves_with_path(&m)
        .iter()
        .map(|(p, x)| format!("{p}: {}", sig(x)))
        .collect();
    assert_eq!(paths[3], ".layers[1].b: f32[3]@cpu");
}

#[test]
fn get_set_and_set_subtree_keep_signatures() {
    let mut m = mlp();
    let b = KeyPath::root().field("layers").index(0).field("b");
    assert_eq!(pytree_std::paths::get(&m, &b).unwrap().dims(), [3]);
    let old = pytree_std::paths::set(&mut m, &b, t(&[7.0, 8.0, 9.0], &[3])).unwrap();
    assert_eq!(values(&old), [1.0; 3]);
    assert_eq!(values(&m.layers[0].b), [7.0, 8.0, 9.0]);

    let before = m.clone();
    let err = pytree_std::paths::set(&mut m, &b, t(&[1.0], &[1])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .layers[0].b: leaf signature mismatch: expected f32[3]@cpu, found f32[1]@cpu"
    );
    let err = pytree_std::paths::set(
        &mut m,
        &b,
        t(&[1.0; 3], &[3]).to_dtype(CandleDType::F16).unwrap(),
    )
    .unwrap_err();
    assert_eq!(err.path().to_string(), ".layers[0].b");
    assert!(same(&m, &before));

    let at = KeyPath::root().field("layers").index(1);
    let old: Linear = pytree_std::paths::set_subtree(&mut m, &at, linear(10.0)).unwrap();
    assert_eq!(values(&old.b), [2.0; 3]);
    let wrong = Linear {
        w: t(&[0.0; 4], &[2, 2]),
        b: t(&[0.0; 3], &[3]),
    };
    let before = m.clone();
    let err = pytree_std::paths::set_subtree(&mut m, &at, wrong).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .layers[1].w: leaf signature mismatch: expected f32[3,3]@cpu, found f32[2,2]@cpu"
    );
    assert!(same(&m, &before));
}

#[test]
fn tree_equal_compares_values_within_the_tolerance() {
    let a = mlp();
    let mut b = mlp();
    b.layers[0].b = t(&[1.0, 1.0, 1.000_001], &[3]);
    assert!(!pytree_std::elements::tree_equal(&a, &b, Tolerance::EXACT));
    assert!(pytree_std::elements::tree_equal(
        &a,
        &b,
        Tolerance::new(1e-5, 1e-8)
    ));
    b.layers[0].b = t(&[1.0; 4], &[4]);
    assert!(!pytree_std::elements::tree_equal(
        &a,
        &b,
        Tolerance::new(1.0, 1.0)
    ));
    // Integers compare exactly.
    let i = Tensor::new(&[1i64, 2], &Device::Cpu).unwrap();
    let j = Tensor::new(&[1i64, 3], &Device::Cpu).unwrap();
    assert!(!pytree_std::elements::tree_equal(
        &i,
        &j,
        Tolerance::new(1.0, 1.0)
    ));
    assert!(pytree_std::elements::tree_equal(
        &i,
        &i.clone(),
        Tolerance::EXACT
    ));
}

#[test]
fn treelize_partition_combine_and_dynamic_trees() {
    let (a, b) = (linear(1.0), linear(2.0));
    let mut sub = Treelize::new(|x: &Tensor, y: &Tensor| (y - x).unwrap());
    let d: Linear = sub.call2(&a, &b).unwrap();
    assert_eq!(values(&d.b), [1.0; 3]);
    let mut odd = linear(1.0);
    odd.b = t(&[0.0; 2], &[2]);
    let err = sub.call2::<_, _, _, Linear>(&a, &odd).unwrap_err();
    assert_eq!(err.path().to_string(), ".b");

    let p = Pair {
        w: t(&[1.0; 4], &[2, 2]),
        b: t(&[0.0; 2], &[2]),
    };
    let (ws, rest): (Pair<Option<Tensor>>, Pair<Option<Tensor>>) =
        pytree_std::split::partition(p.clone(), |_, x| x.rank() == 2).unwrap();
    assert!(ws.w.is_some() && ws.b.is_none() && rest.w.is_none() && rest.b.is_some());
    let back: Pair<Tensor> = pytree_std::split::combine([ws, rest]).unwrap();
    assert!(pytree_std::elements::tree_equal(
        &back,
        &p,
        Tolerance::EXACT
    ));

    let tree: Tree<Tensor> = Tree::from_pytree(linear(1.0)).unwrap();
    assert_eq!(tree["w"].as_leaf().unwrap().dims(), [3, 3]);
    let def = pytree_std::structure(&linear(0.0));
    let back: Linear = tree.to_pytree(&def).unwrap();
    assert_eq!(values(&back.b), [1.0; 3]);
}

#[test]
fn the_prechecked_passes_never_hand_the_function_signatures_that_differ() {
    use pytree_std::Flatten;
    let a = linear(1.0);
    let mut b = linear(2.0);
    b.w = t(&[0.0; 4], &[2, 2]);
    let sum = Unflatten::<Std>::zip_with_prechecked(&a, [&b], &mut |x, [y]| (x + y).unwrap());
    assert_eq!(values(&sum.w), values(&(&a.w * 2.0).unwrap()));
    assert_eq!(values(&sum.b), [3.0; 3]);
    let mut p = a.clone();
    Flatten::<Std>::zip_mut_prechecked(&mut p, [&b], &mut |x, [y]| *x = (&*x + y).unwrap());
    assert_eq!(values(&p.w), values(&a.w));
    assert_eq!(values(&p.b), [3.0; 3]);
}

#[test]
fn fallible_forms_carry_candle_errors_and_ravel_converts_dtypes() {
    let (a, b) = (mlp(), mlp());
    // candle's operations return Result: the fallible forms take it as is.
    let sum = pytree_std::walk::map_n(&a, [&b], |x, [y]| x + y).unwrap();
    assert_eq!(values(&sum.layers[0].b), [2.0; 3]);
    let err = pytree_std::walk::map_n(&a, [&b], |x, [y]| x.matmul(&y.t()?)).unwrap_err();
    assert_eq!(err.path().to_string(), ".layers[0].b"); // 1-d matmul fails in candle
    let mut p = mlp();
    pytree_std::walk::zip_mut([&mut p], [&b], |[x], [g]| {
        *x = (&*x - g)?;
        Ok::<(), pytree_std::candle_core::Error>(())
    })
    .unwrap();
    assert_eq!(values(&p.layers[1].b), [0.0; 3]);

    let half = pytree_std::map(mlp(), |x| x.to_dtype(CandleDType::F16).unwrap());
    let (flat, plan) = pytree_std::elements::ravel::<_, f32>(&half).unwrap();
    assert_eq!(flat.len(), 24);
    let back: Mlp = plan.unravel(&flat).unwrap();
    assert_eq!(back.layers[1].w.dtype(), CandleDType::F16);
    assert!(same(&back, &half));
    let s = pytree_std::elements::summary(&half);
    assert_eq!(s.num_bytes(), Some(24 * 2));
}

/// A model of candle variables (issue 17).
#[derive(PyTree, Clone, Debug)]
struct VarLinear {
    w: pytree_std::candle_core::Var,
    b: pytree_std::candle_core::Var,
}

fn var_linear(scale: f32) -> VarLinear {
    use pytree_std::candle_core::Var;
    let w: Vec<f32> = (0..6).map(|i| scale * i as f32).collect();
    VarLinear {
        w: Var::from_vec(w, (2, 3), &Device::Cpu).unwrap(),
        b: Var::from_vec(vec![scale; 3], 3, &Device::Cpu).unwrap(),
    }
}

#[test]
fn variables_are_leaves_with_signatures_summaries_and_paths() {
    let m = var_linear(1.0);
    let sigs = pytree_std::elements::signatures(&m).unwrap();
    assert_eq!(sigs.to_string().matches("@cpu").count(), 2, "{sigs}");
    let summary = pytree_std::elements::summary(&m).to_string();
    assert!(
        summary.contains("[2, 3]") && summary.contains("9"),
        "{summary}"
    );
    let paths: Vec<String> = pytree_std::paths::leaves_with_path(&m)
        .into_iter()
        .map(|(p, v)| format!("{p} {:?}", v.dims()))
        .collect();
    assert_eq!(paths, [".w [2, 3]", ".b [3]"]);
    // Another shape is an error at its path, before anything runs.
    let mut odd = var_linear(2.0);
    odd.b = pytree_std::candle_core::Var::zeros(4, CandleDType::F32, &Device::Cpu).unwrap();
    let err =
        pytree_std::walk::map_n(&m, [&odd], |a, [b]| a.add(b).map(|_| a.clone())).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tree 1 at .b: leaf signature mismatch: expected f32[3]@cpu, found f32[4]@cpu"
    );
    assert!(pytree_std::elements::tree_equal(
        &m,
        &var_linear(1.0),
        Tolerance::EXACT
    ));
    assert!(!pytree_std::elements::tree_equal(
        &m,
        &var_linear(2.0),
        Tolerance::EXACT
    ));
}

#[test]
fn a_checkpoint_loaded_in_place_writes_the_variables_their_holders_see() {
    use pytree_std::checkpoint::{self, Load};
    let trained = var_linear(3.0);
    let file = Load::new()
        .from_bytes(checkpoint::Save::new().to_bytes(&trained).unwrap())
        .unwrap();
    let mut model = var_linear(0.0);
    let held = model.w.as_tensor().clone(); // a layer's handle on the variable
    file.load_into(&mut model).unwrap();
    assert_eq!(values(&held), [0.0, 3.0, 6.0, 9.0, 12.0, 15.0]);
    assert!(model.w.is_variable());
    // Loaded by type: new variables on the template's device.
    let loaded: VarLinear = file.load_like(&var_linear(0.0)).unwrap().0;
    assert!(loaded.b.is_variable());
    assert_eq!(values(&loaded.b), [3.0; 3]);
    // A tensor of another shape in the file is an error naming the path,
    // and the variables are unchanged.
    let wide = VarLinear {
        b: pytree_std::candle_core::Var::zeros(5, CandleDType::F32, &Device::Cpu).unwrap(),
        ..var_linear(1.0)
    };
    let file = Load::new()
        .from_bytes(checkpoint::Save::new().to_bytes(&wide).unwrap())
        .unwrap();
    let err = file.load_into(&mut model).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at .b: tensor `b`: expected f32[3], found f32[5]"
    );
    assert_eq!(values(&held), [0.0, 3.0, 6.0, 9.0, 12.0, 15.0]);
}
