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

use std::time::{Duration, Instant};

use burn::module::{Module, Param};
use burn::optim::{AdamWConfig, GradientsParams};
use burn::tensor::{Device, Tensor, TensorData};
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use pytree_benches::gpt2::{Dims, Gpt2};
use pytree_optim::{adamw, GradientTransformation};

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

fn bench(c: &mut Criterion) {
    let dims = Dims::SMALL;
    let n = dims.parameters();
    let params = Gpt2::new(dims, 1, 0.02);
    let grads = Gpt2::new(dims, 2, 1e-3);
    // Parameters with autodiff, as in training (burn-optim's
    // `ModuleOptimizer` requires it: it asks each parameter's autodiff
    // settings).
    let device = Device::default().autodiff();

    let mut g = c.benchmark_group("adam_gpt2_burn");
    g.sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Elements(n as u64));

    {
        let tx = adamw(1e-3, 0.01);
        let mut model = Some(module(&params, &device));
        let grad_values = module(&grads, &device);
        let mut state = pytree_optim::burn::init(&tx, model.as_ref().unwrap()).expect("init");
        g.bench_function("optim_burn_step", |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let m = model.take().expect("the module");
                    let gr = gradients(&m, &grad_values);
                    let start = Instant::now();
                    let m = pytree_optim::burn::step(&tx, m, &gr, &mut state).expect("step");
                    total += start.elapsed();
                    model = Some(m);
                }
                total
            })
        });
    }
    {
        let mut optim = AdamWConfig::new()
            .with_epsilon(1e-8)
            .with_weight_decay(0.01)
            .init();
        let mut model = Some(module(&params, &device));
        let grad_values = module(&grads, &device);
        g.bench_function("burn_optim_adamw", |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let m = model.take().expect("the module");
                    let gr = gradients(&m, &grad_values);
                    let start = Instant::now();
                    let m = optim.step(1e-3, m, gr);
                    total += start.elapsed();
                    model = Some(m);
                }
                total
            })
        });
    }
    {
        let opt = adamw(1e-3, 0.01);
        let mut p = params.clone();
        let mut gr = grads.clone();
        let mut state = opt.init(&p).expect("init");
        g.bench_function("optim_ndarray_step", |b| {
            b.iter(|| opt.step(&mut p, &mut gr, &mut state).expect("step"))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
