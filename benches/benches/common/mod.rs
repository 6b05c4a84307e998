//! What the GPT-2 Adam benches share (each includes it with `mod common;`
//! and uses its part): the parameters and gradients, the benchmark group
//! and the bench of an optimizer's `step`.

// Each bench uses a part of this module.
#![allow(dead_code)]

use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, SamplingMode, Throughput};
use pytree_benches::gpt2::{Dims, Gpt2};
use pytree_optim::{FloatLeaf, GradientTransformation};
use pytree_std::PyTree;

/// GPT-2 small's parameter count, its parameters and a step's gradients
/// (the same seeds and scales in every bench).
pub fn gpt2() -> (usize, Gpt2, Gpt2) {
    let dims = Dims::SMALL;
    (
        dims.parameters(),
        Gpt2::new(dims, 1, 0.02),
        Gpt2::new(dims, 2, 1e-3),
    )
}

/// The group `name` of `samples` flat samples (each one or a few steps),
/// `warm_up` then `measure` long, its throughput the `elements`
/// parameters of a step.
pub fn group<'a>(
    c: &'a mut Criterion,
    name: &str,
    samples: usize,
    (warm_up, measure): (Duration, Duration),
    elements: usize,
) -> BenchmarkGroup<'a, WallTime> {
    let mut g = c.benchmark_group(name);
    g.sampling_mode(SamplingMode::Flat)
        .sample_size(samples)
        .warm_up_time(warm_up)
        .measurement_time(measure)
        .throughput(Throughput::Elements(elements as u64));
    g
}

/// The bench `name`: `opt.step` on `params` and `grads`, its state
/// advancing across iterations as in training.
pub fn bench_step<G, P>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    opt: &G,
    mut params: P,
    mut grads: P,
) where
    G: GradientTransformation<P>,
    P: PyTree,
    P::Leaf: FloatLeaf,
{
    let mut state = opt.init(&params).expect("init");
    g.bench_function(name, |b| {
        b.iter(|| opt.step(&mut params, &mut grads, &mut state).expect("step"))
    });
}
