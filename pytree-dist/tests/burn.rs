//! pytree-dist on burn modules (feature `burn`), in the world of one
//! (`Dist::local()`, no MPI): the collectives, the replication check,
//! ZeRO-1 against the unsharded optimizer, and the multi-rank checkpoints
//! read a burn module's tree and write it back. The same code under
//! `mpirun` is `pytree-examples/examples/train_ddp_burn.rs`.
#![cfg(feature = "burn")]

use burn::module::Module;
use burn::nn::{LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::tensor::{Device, Tensor, TensorData};
use pytree_dist::{Dist, Zero1};
use pytree_optim::{adamw, chain, clip_by_global_norm, GradientTransformation};
use pytree_std::elements::{tree_equal, Tolerance};
use pytree_std::{BurnModule, BurnTensor};

#[derive(Module, Debug)]
struct Net {
    fc: Linear,
    norm: LayerNorm,
}

fn net(seed: u64) -> BurnModule<Net> {
    let d = Device::default();
    d.seed(seed);
    BurnModule::new(Net {
        fc: LinearConfig::new(3, 4).init(&d),
        norm: LayerNormConfig::new(4).init(&d),
    })
}

/// A gradient-like tree: every leaf `k * (i + 1) / 16`.
fn grads(like: &BurnModule<Net>, k: f32) -> BurnModule<Net> {
    pytree_std::map_n(like, [], |t, []| {
        let n = t.num_elements();
        let v: Vec<f32> = (0..n).map(|i| k * (i + 1) as f32 / 16.0).collect();
        BurnTensor::from_flat(
            Tensor::<1>::from_data(TensorData::new(v, [n]), &Device::default()),
            t.shape(),
        )
    })
    .unwrap()
}

#[test]
fn collectives_and_the_replication_check_take_a_burn_module() {
    let dist = Dist::local();
    let params = net(0);
    let mut g = grads(&params, 2.0);
    dist.all_reduce_mean(&mut g).unwrap();
    assert!(tree_equal(&g, &grads(&params, 2.0), Tolerance::EXACT));
    let mut other = net(1);
    dist.broadcast(&mut other, 0).unwrap();
    dist.check_replicated(&other).unwrap();
    // Two modules of different types in one tree (a tuple).
    let small = BurnModule::new(LinearConfig::new(2, 2).init(&Device::default()));
    let mut mixed = (params.clone(), small);
    dist.all_reduce_mean(&mut mixed).unwrap();
}

#[test]
fn zero1_steps_a_burn_module_as_the_unsharded_optimizer_does() {
    let dist = Dist::local();
    let tx = chain(clip_by_global_norm(1.0), adamw(1e-2, 1e-4));
    // One model, two copies of its parameters (seeding burn's device is
    // global: two `net(0)` in parallel tests may draw differently).
    let mut a = net(0);
    let mut b = a
        .with_leaves(
            pytree_std::leaves(&a)
                .into_iter()
                .map(|t| t.map_flat(|x| x.clone() * 1.0).unwrap())
                .collect(),
        )
        .unwrap();
    let start = a.clone();
    let mut state = tx.init(&a).unwrap();
    let mut zero = Zero1::new(&dist, tx.clone(), &b).unwrap();
    for step in 0..5 {
        let k = 1.0 + step as f32;
        let (mut ga, mut gb) = (grads(&a, k), grads(&b, k));
        tx.step(&mut a, &mut ga, &mut state).unwrap();
        zero.step(&mut b, &mut gb).unwrap();
    }
    assert!(tree_equal(&a, &b, Tolerance::EXACT));
    assert!(!tree_equal(&a, &start, Tolerance::EXACT));
    let model: Net = b.into_module().unwrap();
    assert_eq!(model.fc.weight.dims(), [3, 4]);
}

#[test]
fn checkpoints_of_every_rank_load_back_into_a_burn_module() {
    let dist = Dist::local();
    let dir = std::env::temp_dir().join(format!("pytree-dist-burn-{}", std::process::id()));
    let params = net(0);
    pytree_dist::checkpoint::save(&dist, &dir, &params).unwrap();
    let mut into = net(1);
    let index = dir.join("model.safetensors.index.json");
    let report = pytree_std::checkpoint::Load::new()
        .open(&index)
        .unwrap()
        .load_into(&mut into)
        .unwrap();
    assert!(report.is_complete());
    assert!(tree_equal(&into, &params, Tolerance::EXACT));
    std::fs::remove_dir_all(&dir).unwrap();
}
