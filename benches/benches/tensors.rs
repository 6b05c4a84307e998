//! Criterion benchmarks of the tensor operations of issue 9, on a tree of
//! 64 `f32` arrays of 1M elements each (`Vec<Array2<f32>>`, 1024 x 1024):
//!
//! - `adam/*`: an Adam-like update of params, first and second moments from
//!   a gradient: `zip_mut_n` (one pass), `par_zip_mut_n` (the same with
//!   rayon), three `zip_mut` passes (one tree updated per pass), and a
//!   hand-written fused loop over the arrays' slices (the floor);
//! - `ravel/*`, `unravel/*`: `ravel` into a new buffer and into a reused
//!   one (`Unravel::ravel_into`), `Unravel::unravel`, each against a copy of
//!   the same bytes written by hand.
//!
//! `cargo bench -p pytree-benches --bench tensors`; BENCHMARKS.md has the
//! figures.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use pytree_std::ndarray::{Array2, ArrayViewD, ArrayViewMutD, Zip};

const ARRAYS: usize = 64;
const SIDE: usize = 1024;
const B1: f32 = 0.9;
const B2: f32 = 0.999;
const LR: f32 = 1e-3;
const EPS: f32 = 1e-8;

fn tree(seed: f32) -> Vec<Array2<f32>> {
    (0..ARRAYS)
        .map(|i| {
            Array2::from_shape_fn((SIDE, SIDE), |(r, c)| {
                seed + ((i * 7 + r * 3 + c) % 97) as f32 * 1e-3
            })
        })
        .collect()
}

/// One Adam step on one element.
#[inline(always)]
fn adam(p: &mut f32, m: &mut f32, v: &mut f32, g: f32) {
    *m = B1 * *m + (1.0 - B1) * g;
    *v = B2 * *v + (1.0 - B2) * g * g;
    *p -= LR * *m / (v.sqrt() + EPS);
}

/// One Adam step on lent arrays of one leaf.
fn adam_leaf(
    p: ArrayViewMutD<'_, f32>,
    m: ArrayViewMutD<'_, f32>,
    v: ArrayViewMutD<'_, f32>,
    g: ArrayViewD<'_, f32>,
) {
    Zip::from(p)
        .and(m)
        .and(v)
        .and(g)
        .for_each(|p, m, v, &g| adam(p, m, v, g));
}

fn bench_adam(c: &mut Criterion) {
    let mut g = c.benchmark_group("adam");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(8))
        .warm_up_time(Duration::from_secs(2));
    let grads = tree(0.5);
    let (mut p, mut m, mut v) = (tree(1.0), tree(0.0), tree(0.0));

    g.bench_function("zip_mut_n", |b| {
        b.iter(|| {
            pytree_std::walk::zip_mut([&mut p, &mut m, &mut v], [&grads], |[p, m, v], [g]| {
                adam_leaf(p, m, v, g)
            })
            .unwrap()
        })
    });
    g.bench_function("par_zip_mut_n", |b| {
        b.iter(|| {
            pytree_std::parallel::par_zip_mut(
                [&mut p, &mut m, &mut v],
                [&grads],
                |[p, m, v], [g]| adam_leaf(p, m, v, g),
            )
            .unwrap()
        })
    });
    g.bench_function("three_zip_mut", |b| {
        b.iter(|| {
            pytree_std::zip_mut([&mut m], [&grads], |[m], [g]| {
                Zip::from(m)
                    .and(g)
                    .for_each(|m, &g| *m = B1 * *m + (1.0 - B1) * g)
            })
            .unwrap();
            pytree_std::zip_mut([&mut v], [&grads], |[v], [g]| {
                Zip::from(v)
                    .and(g)
                    .for_each(|v, &g| *v = B2 * *v + (1.0 - B2) * g * g)
            })
            .unwrap();
            pytree_std::zip_mut([&mut p], [&m, &v], |[p], [m, v]| {
                Zip::from(p)
                    .and(m)
                    .and(v)
                    .for_each(|p, &m, &v| *p -= LR * m / (v.sqrt() + EPS))
            })
            .unwrap();
        })
    });
    g.bench_function("hand", |b| {
        b.iter(|| {
            for (((p, m), v), g) in p.iter_mut().zip(&mut m).zip(&mut v).zip(&grads) {
                let (p, m, v, g) = (
                    p.as_slice_mut().unwrap(),
                    m.as_slice_mut().unwrap(),
                    v.as_slice_mut().unwrap(),
                    g.as_slice().unwrap(),
                );
                for i in 0..p.len() {
                    adam(&mut p[i], &mut m[i], &mut v[i], g[i]);
                }
            }
            black_box(&mut p);
        })
    });
    g.finish();
}

fn bench_ravel(c: &mut Criterion) {
    let mut g = c.benchmark_group("ravel");
    g.sample_size(10).measurement_time(Duration::from_secs(6));
    let t = tree(1.0);
    let (flat, plan) = pytree_std::elements::ravel(&t).unwrap();
    let total = flat.len();

    g.bench_function("pytree", |b| {
        b.iter(|| pytree_std::elements::ravel::<_, f32>(black_box(&t)).unwrap())
    });
    g.bench_function("copy", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(total);
            for a in black_box(&t) {
                out.extend_from_slice(a.as_slice().unwrap());
            }
            out
        })
    });
    let mut buf = flat.clone();
    g.bench_function("pytree_into", |b| {
        b.iter(|| plan.ravel_into(black_box(&t), &mut buf).unwrap())
    });
    g.bench_function("copy_into", |b| {
        b.iter(|| {
            let mut at = 0;
            for a in black_box(&t) {
                let s = a.as_slice().unwrap();
                buf[at..at + s.len()].copy_from_slice(s);
                at += s.len();
            }
        })
    });
    g.finish();

    let mut g = c.benchmark_group("unravel");
    g.sample_size(10).measurement_time(Duration::from_secs(6));
    g.bench_function("pytree", |b| {
        b.iter_batched(
            || (),
            |()| plan.unravel(black_box(&flat)).unwrap(),
            BatchSize::PerIteration,
        )
    });
    g.bench_function("copy", |b| {
        b.iter_batched(
            || (),
            |()| {
                black_box(&flat)
                    .chunks_exact(SIDE * SIDE)
                    .map(|s| Array2::from_shape_vec((SIDE, SIDE), s.to_vec()).unwrap())
                    .collect::<Vec<_>>()
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group!(benches, bench_adam, bench_ravel);
criterion_main!(benches);
