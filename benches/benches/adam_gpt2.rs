//! One Adam step over GPT-2 small's parameter shapes (148 `f32` arrays,
//! 124,439,808 parameters; `pytree_benches::gpt2`), issue 10's figures:
//!
//! - `optim_adam_step`: `pytree-optim`'s `adam(1e-3).step(..)` on one
//!   thread (one fused pass: reads p, g, m, v, writes p, m, v);
//! - `hand_fused`: the same step written by hand over the same arrays;
//! - `optim_adam_update_apply`: optax's two calls, `update` then
//!   `apply_updates` (two passes);
//! - `optim_adam_step_parallel` / `hand_fused_parallel`: the same with
//!   rayon on every core (`.parallel()`; hand: `par_chunks_mut`);
//! - `par_zip_mut_n_leaves`: pytree-std's `par_zip_mut_n` with the hand
//!   loop per leaf (leaves spread over threads, never split);
//! - `triad` / `triad_parallel`: `a = b + s * c` over arrays of the same
//!   number of elements (STREAM's count: 12 bytes per element, 16 moved);
//!   `triad_in_place` / `triad_in_place_parallel`: `a += s * b` (12 bytes,
//!   all moved), for the memory-bandwidth floor.
//!
//! `benches/scripts/adam_gpt2.sh` runs this and the Python anchor and prints the
//! ratios. Each of the 20 samples is one or a few steps (flat sampling);
//! the state keeps advancing across iterations, as in training.

mod common;

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use pytree_benches::gpt2::{
    adam_hand, adam_hand_parallel, adam_slices, triad, triad_in_place, triad_in_place_parallel,
    triad_parallel, Dims, Gpt2, HandAdam,
};
use pytree_optim::{adam, apply_updates, GradientTransformation, Wrap, GRAIN};

fn bench(c: &mut Criterion) {
    let (n, params, grads) = common::gpt2();
    assert_eq!(n, 124_439_808);
    assert_eq!(pytree_std::leaves(&params).len(), 148);
    let dims = Dims::SMALL;

    let times = (Duration::from_secs(2), Duration::from_secs(6));
    let mut g = common::group(c, "adam_gpt2", 20, times, n);

    {
        let opt = adam(1e-3);
        let mut p = params.clone();
        let mut gr = grads.clone();
        let mut state = opt.init(&p).expect("init");
        g.bench_function("optim_adam_step", |b| {
            b.iter(|| opt.step(&mut p, &mut gr, &mut state).expect("step"))
        });
        let opt = adam(1e-3).parallel();
        g.bench_function("optim_adam_step_parallel", |b| {
            b.iter(|| opt.step(&mut p, &mut gr, &mut state).expect("step"))
        });
    }
    {
        let mut p = params.clone();
        let mut m = Gpt2::new(dims, 0, 0.0);
        let mut v = Gpt2::new(dims, 0, 0.0);
        let mut count = 0u64;
        g.bench_function("hand_fused", |b| {
            b.iter(|| {
                adam_hand(&mut p, &mut m, &mut v, &grads, HandAdam::new(1e-3, count));
                count += 1;
            })
        });
        g.bench_function("hand_fused_parallel", |b| {
            b.iter(|| {
                let k = HandAdam::new(1e-3, count);
                adam_hand_parallel(&mut p, &mut m, &mut v, &grads, k, GRAIN);
                count += 1;
            })
        });
        g.bench_function("par_zip_mut_n_leaves", |b| {
            b.iter(|| {
                let k = HandAdam::new(1e-3, count);
                pytree_std::parallel::par_zip_mut(
                    [&mut p, &mut m, &mut v],
                    [&grads],
                    |[p, m, v], [g]| {
                        let (Some(p), Some(m), Some(v), Some(g)) =
                            (p.into_slice(), m.into_slice(), v.into_slice(), g.to_slice())
                        else {
                            panic!("standard layout");
                        };
                        adam_slices(p, m, v, g, k)
                    },
                )
                .expect("same structure");
                count += 1;
            })
        });
    }
    {
        let opt = adam(1e-3);
        let mut p = params.clone();
        let mut u = grads.clone();
        let mut state = opt.init(&p).expect("init");
        // The gradients are overwritten by the updates, which serve as the
        // next step's gradients (same cost per element: no reset timed).
        g.bench_function("optim_adam_update_apply", |b| {
            b.iter(|| {
                opt.update(&mut u, &mut state, &p).expect("update");
                apply_updates(&mut p, &u).expect("apply");
            })
        });
    }
    {
        let mut a = vec![0.0f32; n];
        let bb = vec![1.0f32; n];
        let cc = vec![2.0f32; n];
        g.bench_function("triad", |b| b.iter(|| triad(&mut a, &bb, &cc, 0.5)));
        g.bench_function("triad_parallel", |b| {
            b.iter(|| triad_parallel(&mut a, &bb, &cc, 0.5, GRAIN))
        });
        assert_eq!(a[n - 1], 2.0);
        g.bench_function("triad_in_place", |b| {
            b.iter(|| triad_in_place(&mut a, &bb, 1e-3))
        });
        g.bench_function("triad_in_place_parallel", |b| {
            b.iter(|| triad_in_place_parallel(&mut a, &bb, 1e-3, GRAIN))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
