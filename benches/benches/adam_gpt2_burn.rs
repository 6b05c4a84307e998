//! One AdamW step over GPT-2 small's parameter shapes as a burn module on
//! the CPU (burn-flex; 148 `f32` tensors, 124,439,808 parameters;
//! `pytree_benches::gpt2`), issue 36's figures. The same update (`lr =
//! 1e-3`, `b1 = 0.9`, `b2 = 0.999`, `eps = 1e-8`, `weight_decay = 0.01`,
//! decoupled) three ways:
//!
//! - `optim_burn_step`: `pytree_optim::burn::step` with `adamw(1e-3,
//!   0.01)` on the module (taken apart into a `BurnModule`, the whole tree
//!   stepped with burn tensor operations, put back);
//! - `burn_optim_adamw`: burn-optim's `AdamW` through `ModuleOptimizer`
//!   on the same module and gradients;
//! - `optim_ndarray_step`: pytree-optim's step over the same shapes as
//!   ndarray arrays (the baseline of BENCHMARKS.md's "Optimizers").
//!
//! Each sample is one step (flat sampling); the state keeps advancing
//! across iterations, as in training. burn-flex runs its element-wise
//! operations on the calling thread below a size it splits at; run with
//! `RAYON_NUM_THREADS=1` for one core.

mod common;

use std::time::{Duration, Instant};

use burn::module::{Module, Param};
use burn::optim::{AdamWConfig, GradientsParams};
use burn::tensor::{Device, Tensor, TensorData};
use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion};
use pytree_benches::gpt2::Gpt2;
use pytree_optim::adamw;

/// GPT-2's parameters as a burn module: its matrices and its vectors, in
/// the ndarray tree's leaf order within each list.
#[derive(Module, Debug)]
struct Gpt2Burn {
    matrices: Vec<Param<Tensor<2>>>,
    vectors: Vec<Param<Tensor<1>>>,
}

fn module(tree: &Gpt2, device: &Device) -> Gpt2Burn {
    let (mut matrices, mut vectors) = (Vec::new(), Vec::new());
    for a in pytree_std::leaves(tree) {
        let data: Vec<f32> = a.iter().copied().collect();
        match a.shape() {
            [r, c] => matrices.push(Param::from_tensor(Tensor::<2>::from_data(
                TensorData::new(data, [*r, *c]),
                device,
            ))),
            [n] => vectors.push(Param::from_tensor(Tensor::<1>::from_data(
                TensorData::new(data, [*n]),
                device,
            ))),
            other => panic!("GPT-2 has no leaf of shape {other:?}"),
        }
    }
    Gpt2Burn { matrices, vectors }
}

/// `grads`' values as the gradients of `model`'s parameters.
fn gradients(model: &Gpt2Burn, grads: &Gpt2Burn) -> GradientsParams {
    let mut out = GradientsParams::new();
    for (p, g) in model.matrices.iter().zip(&grads.matrices) {
        out.register(p.id, g.val().inner());
    }
    for (p, g) in model.vectors.iter().zip(&grads.vectors) {
        out.register(p.id, g.val().inner());
    }
    out
}

/// The bench `name`: `step` on `model` with `grads`' values as its
/// gradients, the module moved through each step (as burn's optimizers
/// take it); only the step is timed, not the gradients' registration.
fn bench_module_steps(
    g: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    model: Gpt2Burn,
    grads: Gpt2Burn,
    mut step: impl FnMut(Gpt2Burn, GradientsParams) -> Gpt2Burn,
) {
    let mut model = Some(model);
    g.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let m = model.take().expect("the module");
                let gr = gradients(&m, &grads);
                let start = Instant::now();
                let m = step(m, gr);
                total += start.elapsed();
                model = Some(m);
            }
            total
        })
    });
}

fn bench(c: &mut Criterion) {
    let (n, params, grads) = common::gpt2();
    // Parameters with autodiff, as in training (burn-optim's
    // `ModuleOptimizer` requires it: it asks each parameter's autodiff
    // settings).
    let device = Device::default().autodiff();

    let times = (Duration::from_secs(1), Duration::from_secs(3));
    let mut g = common::group(c, "adam_gpt2_burn", 10, times, n);

    let tx = adamw(1e-3, 0.01);
    let model = module(&params, &device);
    let mut state = pytree_optim::burn::init(&tx, &model).expect("init");
    bench_module_steps(
        &mut g,
        "optim_burn_step",
        model,
        module(&grads, &device),
        |m, gr| pytree_optim::burn::step(&tx, m, &gr, &mut state).expect("step"),
    );
    let mut optim = AdamWConfig::new()
        .with_epsilon(1e-8)
        .with_weight_decay(0.01)
        .init();
    let (model, grad_values) = (module(&params, &device), module(&grads, &device));
    bench_module_steps(&mut g, "burn_optim_adamw", model, grad_values, |m, gr| {
        optim.step(1e-3, m, gr)
    });
    common::bench_step(&mut g, "optim_ndarray_step", &tx, params, grads);
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
