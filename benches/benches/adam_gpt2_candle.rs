//! One AdamW step over GPT-2 small's parameter shapes as candle variables
//! on the CPU (148 `f32` tensors, 124,439,808 parameters;
//! `pytree_benches::gpt2`), issue 17's figures. The same update
//! (`lr = 1e-3`, `b1 = 0.9`, `b2 = 0.999`, `eps = 1e-8`,
//! `weight_decay = 0.01`, decoupled) three ways:
//!
//! - `optim_candle_step`: `pytree-optim`'s `adamw(1e-3, 0.01).step(..)`
//!   over a `Vec<Var>` (one fused pass in place on the tensors' memory);
//! - `candle_nn_adamw`: candle-nn's `AdamW::step` on the same variables
//!   and gradients (about ten tensor operations per parameter, each
//!   allocating its result, written back with `Var::set`);
//! - `optim_ndarray_step`: `pytree-optim`'s step over the same shapes as
//!   ndarray arrays (the baseline of BENCHMARKS.md's "Optimizers").
//!
//! All on one thread. Each sample is one step (flat sampling); the state
//! keeps advancing across iterations, as in training.

mod common;

use std::time::Duration;

use candle_nn::Optimizer;
use criterion::{criterion_group, criterion_main, Criterion};
use pytree_benches::gpt2::Gpt2;
use pytree_optim::adamw;
use pytree_std::candle_core::{backprop::GradStore, Device, Var};

/// The tree's arrays as candle variables on the CPU, in leaf order.
fn vars(tree: &Gpt2) -> Vec<Var> {
    pytree_std::leaves(tree)
        .into_iter()
        .map(|a| {
            let data = a.as_slice().expect("standard layout");
            Var::from_slice(data, a.shape(), &Device::Cpu).expect("var")
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let (n, params, grads) = common::gpt2();
    let times = (Duration::from_secs(1), Duration::from_secs(3));
    let mut g = common::group(c, "adam_gpt2_candle", 10, times, n);

    let opt = adamw(1e-3, 0.01);
    common::bench_step(
        &mut g,
        "optim_candle_step",
        &opt,
        vars(&params),
        vars(&grads),
    );
    {
        let p = vars(&params);
        let gr = vars(&grads);
        let mut store = GradStore::default();
        for (p, g) in p.iter().zip(&gr) {
            store.insert(p, g.as_tensor().clone());
        }
        let config = candle_nn::ParamsAdamW {
            lr: 1e-3,
            weight_decay: 0.01,
            ..Default::default()
        };
        let mut opt = candle_nn::AdamW::new(p, config).expect("AdamW");
        g.bench_function("candle_nn_adamw", |b| {
            b.iter(|| opt.step(&store).expect("step"))
        });
    }
    common::bench_step(&mut g, "optim_ndarray_step", &opt, params, grads);
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
