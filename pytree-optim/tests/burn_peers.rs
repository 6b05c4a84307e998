//! pytree-optim on burn modules against burn-optim itself: 60 steps of
//! `adamw` and of `sgd` with momentum (plain and Nesterov) equal burn's
//! `AdamW` and `Sgd` through `ModuleOptimizer` on the same model and the
//! same gradients (each step's gradients are burn's, from burn's model,
//! given to both); `clip_by_global_norm` equals torch's `clip_grad_norm_`.
//!
//! - `sgd().momentum(0.9)` (and `.nesterov()`) is burn's `Sgd` with
//!   `MomentumConfig { momentum: 0.9, dampening: 0.0 }` bit for bit: the
//!   same f32 operations in the same order.
//! - `adamw` computes burn's `AdamW` with the rounding in another order
//!   (burn: `p * (1 - lr*wd) - lr * (m_hat / (sqrt(v_hat) + eps))`, its
//!   bias corrections `1 - b^t` in f32; pytree-optim: optax's order, its
//!   corrections in f64 rounded to f32), so the parameters agree to a few
//!   f32 ulps per step: after 60 steps within 2e-6 absolute plus 2e-5
//!   relative (measured: 0.54 of that, 1.1e-6 on an embedding weight of
//!   -1.5e-3).
//! - `pytree_optim::burn::PerParameter` (a transformation of one tensor as
//!   burn's per-parameter `Optimizer`) with `adamw`, run by burn's
//!   `ModuleOptimizer`, is `pytree_optim::burn::step` with `adamw` on the
//!   whole module bit for bit (the same element update on each tensor), so
//!   burn's `AdamW` within the tolerance above; built with a learning rate
//!   of 1 and scaled by burn's `lr` (`PerParameter::scaled_by_lr`), it is
//!   too, at a constant `lr` and at one that changes every step (a
//!   schedule: pytree-optim's `adamw` with a closure of the step).
#![cfg(feature = "burn")]

use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{Embedding, EmbeddingConfig, LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::optim::momentum::MomentumConfig;
use burn::optim::{AdamWConfig, GradientsParams, ModuleOptimizer, SgdConfig};
use burn::tensor::{Device, Int, Tensor, TensorData};
use pytree_optim::GradientTransformation;
use pytree_std::BurnModule;

/// Every rank a burn-nn model has: a conv's rank-4 weight, an embedding
/// table, a linear layer, a layer norm's rank-1 gamma and beta.
#[derive(Module, Debug)]
struct Net {
    emb: Embedding,
    conv: Conv2d,
    fc: Linear,
    norm: LayerNorm,
}

fn net(device: &Device) -> Net {
    Net {
        emb: EmbeddingConfig::new(10, 4).init(device),
        conv: Conv2dConfig::new([1, 2], [3, 3]).init(device),
        fc: LinearConfig::new(4, 6).init(device),
        norm: LayerNormConfig::new(6).init(device),
    }
}

/// A loss that reaches every parameter, on fixed inputs.
fn loss(net: &Net, device: &Device) -> Tensor<1> {
    let ids = Tensor::<2, Int>::from_data(TensorData::from([[1i64, 3, 5], [7, 9, 2]]), device);
    let img = Tensor::<4>::from_data(
        TensorData::new(
            (0..50)
                .map(|i| ((i as f32) * 0.37).sin())
                .collect::<Vec<_>>(),
            [2, 1, 5, 5],
        ),
        device,
    );
    let x = Tensor::<2>::from_data(
        TensorData::new(
            (0..8)
                .map(|i| ((i as f32) * 0.91).cos())
                .collect::<Vec<_>>(),
            [2, 4],
        ),
        device,
    );
    let a = net.emb.forward(ids).powi_scalar(2).mean();
    let b = net.conv.forward(img).tanh().mean();
    let c = net.norm.forward(net.fc.forward(x)).sin().sum();
    a + b + c
}

/// burn's gradients of [`loss`] at `net`.
fn grads(net: &Net, device: &Device) -> GradientsParams {
    GradientsParams::from_grads(loss(net, device).backward(), net)
}

/// The largest difference between two models' parameters, against
/// `abs + rel * |x|`: the worst ratio (<= 1 passes) and where.
fn worst(a: &Net, b: &Net, abs: f64, rel: f64) -> (f64, String) {
    let ta = BurnModule::new(a.clone());
    let tb = BurnModule::new(b.clone());
    let mut worst = (0.0f64, String::new());
    for ((path, x), (_, y)) in pytree_std::paths::leaves_with_path(&ta)
        .into_iter()
        .zip(pytree_std::paths::leaves_with_path(&tb))
    {
        let xs = x.to_data().convert::<f64>().try_to_vec::<f64>().unwrap();
        let ys = y.to_data().convert::<f64>().try_to_vec::<f64>().unwrap();
        assert_eq!(xs.len(), ys.len());
        for (x, y) in xs.iter().zip(&ys) {
            let r = (x - y).abs() / (abs + rel * x.abs());
            if r > worst.0 {
                worst = (r, format!("{path}: {x} vs {y}"));
            }
        }
    }
    worst
}

/// 60 steps of burn's `optim` and of pytree-optim's `tx` from the same
/// start and the same gradients; the two models at the end.
fn run<T>(mut optim: ModuleOptimizer, lr: f64, tx: T) -> (Net, Net)
where
    T: GradientTransformation<BurnModule<Net>>,
{
    let device = Device::default().autodiff();
    let start = net(&device);
    let (mut theirs, mut ours) = (start.clone(), start);
    let mut state = pytree_optim::burn::init(&tx, &ours).unwrap();
    for _ in 0..60 {
        ours = pytree_optim::burn::step(&tx, ours, &grads(&theirs, &device), &mut state).unwrap();
        let g = grads(&theirs, &device);
        theirs = optim.step(lr, theirs, g);
    }
    (theirs, ours)
}

#[test]
fn adamw_equals_burns_adamw_for_60_steps() {
    let (lr, wd) = (0.01, 0.05);
    let burn = AdamWConfig::new()
        .with_epsilon(1e-8)
        .with_weight_decay(wd as f32)
        .init();
    let (theirs, ours) = run(burn, lr, pytree_optim::adamw(lr, wd));
    let (ratio, at) = worst(&theirs, &ours, 2e-6, 2e-5);
    assert!(ratio <= 1.0, "worst {ratio} at {at}");
    // The two moved: a test of a step that does nothing would pass above.
    let (moved, _) = worst(&net(&Device::default().autodiff()), &ours, 2e-6, 2e-5);
    assert!(moved > 100.0, "{moved}");
}

#[test]
fn sgd_with_momentum_equals_burns_sgd_for_60_steps() {
    for nesterov in [false, true] {
        let momentum = MomentumConfig {
            momentum: 0.9,
            dampening: 0.0,
            nesterov,
        };
        let burn = SgdConfig::new().with_momentum(Some(momentum)).init();
        let mut tx = pytree_optim::sgd(0.05).momentum(0.9);
        if nesterov {
            tx = tx.nesterov();
        }
        let (theirs, ours) = run(burn, 0.05, tx);
        let (ratio, at) = worst(&theirs, &ours, 2e-6, 2e-5);
        // Bit for bit: the same f32 operations in the same order.
        assert_eq!(ratio, 0.0, "nesterov {nesterov}: worst {ratio} at {at}");
    }
}

/// Whether two models' parameters are the same bits; the first path
/// where they are not.
fn same_bits(a: &Net, b: &Net) -> Result<(), String> {
    let ta = BurnModule::new(a.clone());
    let tb = BurnModule::new(b.clone());
    for ((path, x), (_, y)) in pytree_std::paths::leaves_with_path(&ta)
        .into_iter()
        .zip(pytree_std::paths::leaves_with_path(&tb))
    {
        let xs = x.to_data().try_to_vec::<f32>().unwrap();
        let ys = y.to_data().try_to_vec::<f32>().unwrap();
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        if bits(&xs) != bits(&ys) {
            return Err(format!("{path}: {xs:?} vs {ys:?}"));
        }
    }
    Ok(())
}

/// 60 steps from the same start and the same gradients (burn's, at burn's
/// model) of: burn's `AdamW` through `ModuleOptimizer`; `PerParameter`
/// through `ModuleOptimizer` (`adapter`, given `lr(step)` as burn's `lr`);
/// and `pytree_optim::burn::step` with `tx`. The three models at the end.
fn three_ways<T>(adapter: ModuleOptimizer, lr: impl Fn(usize) -> f64, tx: T) -> [Net; 3]
where
    T: GradientTransformation<BurnModule<Net>>,
{
    let device = Device::default().autodiff();
    let wd = 0.05;
    let mut burns = AdamWConfig::new()
        .with_epsilon(1e-8)
        .with_weight_decay(wd as f32)
        .init();
    let mut adapter = adapter;
    let start = net(&device);
    let (mut theirs, mut ours, mut whole) = (start.clone(), start.clone(), start);
    let mut state = pytree_optim::burn::init(&tx, &whole).unwrap();
    for i in 0..60 {
        whole = pytree_optim::burn::step(&tx, whole, &grads(&theirs, &device), &mut state).unwrap();
        ours = adapter.step(lr(i), ours, grads(&theirs, &device));
        let g = grads(&theirs, &device);
        theirs = burns.step(lr(i), theirs, g);
    }
    [theirs, ours, whole]
}

#[test]
fn per_parameter_adamw_in_burns_module_optimizer_equals_step_and_burns_adamw() {
    use pytree_optim::burn::PerParameter;
    let (lr, wd) = (0.01, 0.05);
    let tx = pytree_optim::adamw(lr, wd);
    // `new`: the transformation's learning rate; burn's `lr` (here burn's
    // AdamW's) is not used.
    let adapter = ModuleOptimizer::from(PerParameter::new(tx.clone()).unwrap());
    let [theirs, ours, whole] = three_ways(adapter, |_| lr, tx);
    same_bits(&whole, &ours).unwrap();
    let (ratio, at) = worst(&theirs, &ours, 2e-6, 2e-5);
    assert!(ratio <= 1.0, "worst {ratio} at {at}");
    let (moved, _) = worst(&net(&Device::default().autodiff()), &ours, 2e-6, 2e-5);
    assert!(moved > 100.0, "{moved}");

    // `scaled_by_lr`: adamw with a learning rate of 1, times burn's lr.
    let adapter =
        ModuleOptimizer::from(PerParameter::scaled_by_lr(pytree_optim::adamw(1.0, wd)).unwrap());
    let [theirs, ours, whole] = three_ways(adapter, |_| lr, pytree_optim::adamw(lr, wd));
    same_bits(&whole, &ours).unwrap();
    let (ratio, at) = worst(&theirs, &ours, 2e-6, 2e-5);
    assert!(ratio <= 1.0, "worst {ratio} at {at}");

    // burn's lr changing every step (a scheduler's): pytree-optim's
    // adamw with the same schedule of its step count.
    let schedule = |step: usize| 0.02 / (1.0 + step as f64);
    let adapter =
        ModuleOptimizer::from(PerParameter::scaled_by_lr(pytree_optim::adamw(1.0, wd)).unwrap());
    let tx = pytree_optim::adamw(move |count: u64| schedule(count as usize), wd);
    let [theirs, ours, whole] = three_ways(adapter, schedule, tx);
    same_bits(&whole, &ours).unwrap();
    let (ratio, at) = worst(&theirs, &ours, 2e-6, 2e-5);
    assert!(ratio <= 1.0, "worst {ratio} at {at}");
}

#[test]
fn paths_are_burn_stores_names() {
    let device = Device::default();
    let tree = BurnModule::new(net(&device));
    let names: Vec<String> = pytree_std::paths::leaves_with_path(&tree)
        .into_iter()
        .map(|(p, _)| p.keystr(pytree_std::paths::KeyStr::SIMPLE))
        .collect();
    assert_eq!(
        names,
        [
            "emb.weight",
            "conv.weight",
            "conv.bias",
            "fc.weight",
            "fc.bias",
            "norm.gamma",
            "norm.beta"
        ]
    );
}

/// `clip_by_global_norm` against torch's `clip_grad_norm_` on the same
/// gradients (`tests/data/torch_clip.json`, made by
/// `tests/data/make_torch_clip.py`), as burn tensors of four ranks, at a
/// maximum norm below, at and above the gradients' norm. torch divides by
/// `total_norm + 1e-6`, optax and pytree-optim by the norm, so the results
/// differ by a factor of `1 + 1e-6 / norm` (here 1.4e-7): the tolerance is
/// 4e-7 relative, plus 1e-8 for values near zero.
#[test]
fn clip_by_global_norm_equals_torchs_clip_grad_norm() {
    use pytree_optim::clip_by_global_norm;
    use pytree_std::BurnTensor;
    use serde_json::Value;

    let data: Value = serde_json::from_str(include_str!("data/torch_clip.json")).unwrap();
    let device = Device::default();
    let floats = |v: &Value| -> Vec<f32> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect()
    };
    let shapes: Vec<Vec<usize>> = data["shapes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            s.as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap() as usize)
                .collect()
        })
        .collect();
    let tree = |values: Vec<Vec<f32>>| -> Vec<BurnTensor> {
        values
            .into_iter()
            .zip(&shapes)
            .map(|(v, shape)| {
                let n = v.len();
                let flat = Tensor::<1>::from_data(TensorData::new(v, [n]), &device);
                BurnTensor::from_flat(flat, shape).unwrap()
            })
            .collect()
    };
    let grads: Vec<Vec<f32>> = data["grads"]
        .as_array()
        .unwrap()
        .iter()
        .map(floats)
        .collect();
    let cases = data["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 3);
    let mut scaled = 0;
    for case in cases {
        let max_norm = case["max_norm"].as_f64().unwrap();
        let want: Vec<Vec<f32>> = case["clipped"]
            .as_array()
            .unwrap()
            .iter()
            .map(floats)
            .collect();
        let params = tree(grads.clone());
        let mut updates = tree(grads.clone());
        let tx = clip_by_global_norm(max_norm);
        let norm = pytree_optim::global_norm(&updates).unwrap();
        let torch_norm = case["total_norm"].as_f64().unwrap();
        assert!(
            (norm - torch_norm).abs() <= 1e-6 * torch_norm,
            "{norm} vs {torch_norm}"
        );
        let mut state = tx.init(&params).unwrap();
        tx.update(&mut updates, &mut state, &params).unwrap();
        for (leaf, want) in updates.iter().zip(&want) {
            let got = leaf.to_data().try_to_vec::<f32>().unwrap();
            for (g, w) in got.iter().zip(want) {
                let tol = 4e-7 * w.abs() as f64 + 1e-8;
                assert!(
                    (g - w).abs() as f64 <= tol,
                    "max_norm {max_norm}: {g} vs torch's {w}"
                );
            }
        }
        if max_norm < norm {
            scaled += 1;
        }
    }
    assert_eq!(
        scaled, 1,
        "one case clips, two pass (torch's at-norm case scales by 1 - 1.4e-7)"
    );
}

/// The address of an `f32` leaf's elements on burn-flex.
#[cfg(feature = "ndarray")]
fn address(t: &pytree_std::BurnTensor) -> usize {
    use burn::backend::Flex;
    let flex = t.flat().try_into_primitive::<Flex>().unwrap();
    flex.as_slice::<f32>().unwrap().as_ptr() as usize
}

/// On burn-flex, an `f32` leaf is updated in one pass over its memory in
/// place (the same buffer before and after), with the bits of the ndarray
/// path (the same `f32` element loop); a leaf whose storage another handle
/// also holds goes through tensor operations, to the same values.
#[cfg(feature = "ndarray")]
#[test]
fn flex_leaves_are_updated_in_place_with_the_ndarray_paths_bits() {
    use pytree_std::ndarray::ArrayD;
    use pytree_std::BurnTensor;
    let device = Device::default();
    let values = |seed: f32, n: usize| -> Vec<f32> {
        (0..n).map(|i| ((i as f32 + seed) * 0.731).sin()).collect()
    };
    let shapes = [vec![7, 5], vec![5], vec![3, 1, 2, 2]];
    let burn_tree = |seed: f32| -> Vec<BurnTensor> {
        shapes
            .iter()
            .map(|s| {
                let n: usize = s.iter().product();
                let flat = Tensor::<1>::from_data(TensorData::new(values(seed, n), [n]), &device);
                BurnTensor::from_flat(flat, s).unwrap()
            })
            .collect()
    };
    let nd_tree = |seed: f32| -> Vec<ArrayD<f32>> {
        shapes
            .iter()
            .map(|s| {
                let n: usize = s.iter().product();
                ArrayD::from_shape_vec(s.clone(), values(seed, n)).unwrap()
            })
            .collect()
    };
    let tx = pytree_optim::adamw(0.05, 0.01);
    let (mut p, mut q) = (burn_tree(0.0), nd_tree(0.0));
    let (mut sp, mut sq) = (tx.init(&p).unwrap(), tx.init(&q).unwrap());
    let before: Vec<usize> = p.iter().map(address).collect();
    for step in 0..5 {
        let seed = 10.0 + step as f32;
        tx.step(&mut p, &mut burn_tree(seed), &mut sp).unwrap();
        tx.step(&mut q, &mut nd_tree(seed), &mut sq).unwrap();
    }
    assert_eq!(
        p.iter().map(address).collect::<Vec<_>>(),
        before,
        "updated in place"
    );
    for (a, b) in p.iter().zip(&q) {
        let a = a.to_data().try_to_vec::<f32>().unwrap();
        let b: Vec<f32> = b.iter().copied().collect();
        assert_eq!(a, b, "the ndarray path's bits");
    }
    // A clone held elsewhere: tensor operations, the clone unchanged.
    let held = p.clone();
    let kept = held[0].to_data().try_to_vec::<f32>().unwrap();
    tx.step(&mut p, &mut burn_tree(20.0), &mut sp).unwrap();
    tx.step(&mut q, &mut nd_tree(20.0), &mut sq).unwrap();
    assert_ne!(address(&p[0]), address(&held[0]));
    assert_eq!(held[0].to_data().try_to_vec::<f32>().unwrap(), kept);
    for (a, b) in p.iter().zip(&q) {
        let a = a.to_data().try_to_vec::<f32>().unwrap();
        let b: Vec<f32> = b.iter().copied().collect();
        let close = a
            .iter()
            .zip(&b)
            .all(|(x, y)| (x - y).abs() <= 1e-6 * (1.0 + y.abs()));
        assert!(close, "{a:?} vs {b:?}");
    }
}
