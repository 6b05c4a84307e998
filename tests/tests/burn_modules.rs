//! burn modules as pytrees (feature `burn`): a user's `#[derive(Module)]`
//! model of burn-nn layers through `BurnModule`, with every pytree
//! operation a user reaches for, and a derived struct that holds one.

use burn::module::{Module, Param};
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{Embedding, EmbeddingConfig, LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::tensor::{Device, Tensor, TensorData};
use pytree_std::elements::{tree_equal, Tolerance};
use pytree_std::paths::KeyStr;
use pytree_std::{BurnModule, BurnTensor, PyTree};

#[derive(Module, Debug)]
struct Block {
    fc: Linear,
    norm: LayerNorm,
}

#[derive(Module, Debug)]
struct Net {
    emb: Embedding,
    conv: Conv2d,
    blocks: Vec<Block>,
    head: Option<Linear>,
    scale: Param<Tensor<1>>,
    #[module(skip)]
    name: String,
}

fn net(device: &Device, seed: u64) -> Net {
    device.seed(seed);
    Net {
        emb: EmbeddingConfig::new(10, 4).init(device),
        conv: Conv2dConfig::new([1, 2], [3, 3]).init(device),
        blocks: (0..2)
            .map(|_| Block {
                fc: LinearConfig::new(4, 4).init(device),
                norm: LayerNormConfig::new(4).init(device),
            })
            .collect(),
        head: Some(LinearConfig::new(4, 3).with_bias(false).init(device)),
        scale: Param::from_tensor(Tensor::<1>::ones([3], device)),
        name: "net".into(),
    }
}

fn names<T: pytree_std::Flatten<pytree_std::Std>>(tree: &T) -> Vec<String> {
    pytree_std::paths::leaves_with_path(tree)
        .into_iter()
        .map(|(p, _)| p.keystr(KeyStr::SIMPLE))
        .collect()
}

fn values(t: &BurnTensor) -> Vec<f32> {
    t.to_data().convert::<f32>().try_to_vec::<f32>().unwrap()
}

#[test]
fn a_module_is_a_tree_of_its_float_parameters_named_as_burn_names_them() {
    let d = Device::default();
    let tree = BurnModule::new(net(&d, 0));
    assert_eq!(
        names(&tree),
        [
            "emb.weight",
            "conv.weight",
            "conv.bias",
            "blocks.0.fc.weight",
            "blocks.0.fc.bias",
            "blocks.0.norm.gamma",
            "blocks.0.norm.beta",
            "blocks.1.fc.weight",
            "blocks.1.fc.bias",
            "blocks.1.norm.gamma",
            "blocks.1.norm.beta",
            "head.weight",
            "scale",
        ]
    );
    let ranks: Vec<usize> = pytree_std::leaves(&tree).iter().map(|t| t.rank()).collect();
    assert_eq!(ranks, [2, 4, 1, 2, 1, 1, 1, 2, 1, 1, 1, 2, 1]);
    let def = pytree_std::structure(&tree);
    assert_eq!(def.num_leaves(), 13);
    // The same structure for another module of the type: equal TreeDefs.
    assert_eq!(pytree_std::structure(&BurnModule::new(net(&d, 1))), def);
}

/// A scratch folder of this test process.
fn scratch(name: &str) -> std::path::PathBuf {
    pytree_tests::scratch_dir(&format!("burn-{name}"))
}

#[test]
fn names_are_the_ones_burn_store_writes() {
    use burn::store::{ModuleSnapshot, SafetensorsStore};
    let d = Device::default();
    let model = net(&d, 0);
    let dir = scratch("names");
    let path = dir.join("net.safetensors");
    let mut store = SafetensorsStore::from_file(&path);
    model.save_into(&mut store).unwrap();
    let file = pytree_std::checkpoint::Load::new().open(&path).unwrap();
    let mut theirs: Vec<String> = file.names().map(String::from).collect();
    let mut ours = names(&BurnModule::new(model));
    theirs.sort();
    ours.sort();
    assert_eq!(ours, theirs);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// burn-store's safetensors files load here, and ours load in burn-store.
#[test]
fn checkpoints_go_both_ways_with_burn_store() {
    use burn::store::{ModuleSnapshot, SafetensorsStore};
    let d = Device::default();
    let dir = scratch("both-ways");

    // burn-store writes, pytree-std loads in place into another model.
    let trained = net(&d, 0);
    let theirs = dir.join("burn-store.safetensors");
    trained
        .save_into(&mut SafetensorsStore::from_file(&theirs))
        .unwrap();
    let mut fresh = BurnModule::new(net(&d, 1));
    let report = pytree_std::checkpoint::Load::new()
        .open(&theirs)
        .unwrap()
        .load_into(&mut fresh)
        .unwrap();
    assert!(report.is_complete(), "{report:?}");
    assert!(tree_equal(
        &fresh,
        &BurnModule::new(trained.clone()),
        Tolerance::EXACT
    ));

    // pytree-std writes, burn-store loads into another model.
    let ours = dir.join("pytree.safetensors");
    pytree_std::checkpoint::Save::new()
        .save(&ours, &BurnModule::new(trained.clone()))
        .unwrap();
    let mut other = net(&d, 2);
    let result = other
        .load_from(&mut SafetensorsStore::from_file(&ours))
        .unwrap();
    assert!(
        result.errors.is_empty() && result.missing.is_empty(),
        "{result:?}"
    );
    assert_eq!(result.applied.len(), 13);
    assert!(tree_equal(
        &BurnModule::new(other),
        &BurnModule::new(trained),
        Tolerance::EXACT
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn map_zip_and_put_back_keep_ids_and_autodiff() {
    let d = Device::default().autodiff();
    let model = net(&d, 0);
    let ids: Vec<_> = BurnModule::new(model.clone()).param_ids().collect();
    let tree = BurnModule::new(model.clone());
    let doubled = pytree_std::map(tree.clone(), |t| t.map_flat(|x| x * 2.0).unwrap());
    let sum = pytree_std::map_n(&tree, [&doubled], |a, [b]| {
        BurnTensor::from_flat(a.flat() + b.flat(), a.shape()).unwrap()
    })
    .unwrap();
    for (s, t) in pytree_std::leaves(&sum)
        .iter()
        .zip(pytree_std::leaves(&tree))
    {
        let want: Vec<f32> = values(t).iter().map(|x| 3.0 * x).collect();
        assert_eq!(values(s), want);
    }
    let back: Net = sum.into_module().unwrap();
    assert_eq!(back.name, "net");
    assert_eq!(
        BurnModule::new(back.clone())
            .param_ids()
            .collect::<Vec<_>>(),
        ids
    );
    assert!(back.blocks[1].fc.weight.is_require_grad());
    assert!(back.blocks[1].fc.weight.val().is_autodiff());
    // A forward and backward pass through the rebuilt model works.
    let x = Tensor::<2>::ones([1, 4], &d);
    let grads = back.blocks[0].fc.forward(x).sum().backward();
    assert!(back.blocks[0].fc.weight.grad(&grads).is_some());
}

#[test]
fn trees_of_other_shapes_are_errors_at_the_path() {
    let d = Device::default();
    let small = BurnModule::new(LinearConfig::new(2, 3).init(&d));
    let big = BurnModule::new(LinearConfig::new(3, 3).init(&d));
    let err = pytree_std::map_n(&small, [&big], |a, [_]| a.clone()).unwrap_err();
    assert!(
        err.to_string()
            .starts_with(r#"tree 1 at ["weight"]: leaf signature mismatch: expected f32[2,3]@"#),
        "{err}"
    );
    // A leaf of another shape is refused, naming its path.
    let mut leaves: Vec<BurnTensor> = pytree_std::leaves(&small).into_iter().cloned().collect();
    leaves[1] = BurnTensor::new(Tensor::<1>::zeros([4], &d));
    let err = small.with_leaves(leaves).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"at ["bias"]: expected a burn parameter of shape [3], found f32[4]"#
    );
    // unflatten alone cannot build a burn module: the error says why.
    let (leaves, def) = pytree_std::flatten(small);
    let err = pytree_std::unflatten::<BurnModule<Linear>>(&def, leaves).unwrap_err();
    assert!(err.to_string().contains("BurnModule::new"), "{err}");
}

#[test]
fn every_operation_of_the_page_works_on_a_module() {
    let d = Device::default();
    let (a, b) = (BurnModule::new(net(&d, 0)), BurnModule::new(net(&d, 1)));
    // summary and signatures
    let summary = pytree_std::elements::summary(&a);
    assert_eq!(summary.rows().iter().filter(|r| r.is_leaf).count(), 13);
    let sigs = pytree_std::elements::signatures(&a).unwrap();
    assert_eq!(
        sigs.subtree("conv/weight")
            .and_then(|t| t.as_leaf())
            .map(|s| s.shape().to_vec()),
        Some(vec![2, 1, 3, 3])
    );
    // tree_equal
    assert!(tree_equal(&a, &a.clone(), Tolerance::EXACT));
    assert!(!tree_equal(&a, &b, Tolerance::EXACT));
    // partition by key path: the blocks' parameters and the rest, as
    // dynamic trees of the module's structure (a burn module is rebuilt
    // from a module, not from a TreeDef), put back together with combine
    let (blocks, rest): (pytree_std::Tree<BurnTensor>, pytree_std::Tree<BurnTensor>) =
        pytree_std::split::partition(a.clone(), |p, _| {
            p.keystr(KeyStr::SIMPLE).starts_with("blocks.")
        })
        .unwrap();
    assert_eq!(pytree_std::leaves(&blocks).len(), 8);
    assert_eq!(pytree_std::leaves(&rest).len(), 5);
    assert!(names(&blocks).iter().all(|n| n.starts_with("blocks.")));
    let whole: pytree_std::Tree<BurnTensor> = pytree_std::split::combine([blocks, rest]).unwrap();
    let back = a.with_leaves(pytree_std::flatten(whole).0).unwrap();
    assert!(tree_equal(&back, &a, Tolerance::EXACT));
    // ravel, and back into the module's structure
    let (flat, plan) = pytree_std::elements::ravel::<_, f32>(&a).unwrap();
    let n: usize = pytree_std::leaves(&a)
        .iter()
        .map(|t| t.num_elements())
        .sum();
    assert_eq!(flat.len(), n);
    let back = plan.unravel_like(&flat, &b).unwrap();
    assert!(tree_equal(&back, &a, Tolerance::EXACT));
    assert!(plan.unravel(&flat).is_err()); // the TreeDef alone has no module
                                           // ensembles: two modules stacked on a new leading axis
    let stacked = pytree_std::ensemble::stack_leaves(&[a.clone(), b.clone()]).unwrap();
    assert_eq!(pytree_std::leaves(&stacked)[1].shape(), [2, 2, 1, 3, 3]);
    let back = pytree_std::ensemble::unstack_leaves(&stacked).unwrap();
    assert!(tree_equal(&back[1], &b, Tolerance::EXACT));
}

/// A user's training state: a burn model beside plain fields.
#[derive(PyTree, Clone, Debug)]
struct TrainState {
    model: BurnModule<Net>,
    #[pytree(static)]
    step: u64,
    #[pytree(static)]
    run: String,
}

#[test]
fn a_derived_struct_holds_a_burn_model_beside_plain_fields() {
    let d = Device::default();
    let state = TrainState {
        model: BurnModule::new(net(&d, 0)),
        step: 7,
        run: "a".into(),
    };
    assert_eq!(names(&state)[0], "model.emb.weight");
    let def = pytree_std::structure(&state);
    assert!(
        def.to_string()
            .starts_with(r#"TrainState { model: {"emb": {"weight": *}, "conv": "#),
        "{def}"
    );
    assert!(
        def.to_string()
            .ends_with(r#""scale": *}, step: 7, run: "a" }"#),
        "{def}"
    );
    let scaled = pytree_std::map(state.clone(), |t| t.map_flat(|x| x * 0.5).unwrap());
    assert_eq!(scaled.step, 7);
    let w = values(pytree_std::leaves(&scaled)[0]);
    let w0 = values(pytree_std::leaves(&state)[0]);
    assert!(w.iter().zip(&w0).all(|(a, b)| *a == b * 0.5));
    // Saved and loaded in place into another model of the type.
    let bytes = pytree_std::checkpoint::Save::new()
        .to_bytes(&state)
        .unwrap();
    let mut other = TrainState {
        model: BurnModule::new(net(&d, 3)),
        step: 7,
        run: "a".into(),
    };
    let file = pytree_std::checkpoint::Load::new()
        .from_bytes(bytes)
        .unwrap();
    assert!(file.load_into(&mut other).unwrap().is_complete());
    assert!(tree_equal(&other, &state, Tolerance::EXACT));
    let model: Net = other.model.into_module().unwrap();
    assert_eq!(model.blocks.len(), 2);
}

#[test]
fn tensors_of_every_float_dtype_are_leaves() {
    use burn::tensor::DType;
    let d = Device::default();
    // burn-flex holds f32, f16 and bf16 floats (a cast to f64 stays f32).
    for dtype in [DType::F32, DType::F16, DType::BF16] {
        let t = BurnTensor::new(
            Tensor::<2>::from_data(TensorData::from([[1.0f32, 2.0], [3.0, 4.0]]), &d).cast(dtype),
        );
        assert_eq!(t.dtype(), dtype);
        let bytes = pytree_std::checkpoint::Save::new()
            .to_bytes(&vec![t.clone()])
            .unwrap();
        let file = pytree_std::checkpoint::Load::new()
            .from_bytes(bytes)
            .unwrap();
        let back: Vec<BurnTensor> = file.load().unwrap().0;
        assert_eq!(back[0].dtype(), dtype);
        assert!(tree_equal(&back, &vec![t], Tolerance::EXACT));
    }
}
