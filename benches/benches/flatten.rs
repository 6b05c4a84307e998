//! The wide-tree probe of issue 20: `flatten` of a `Vec<f64>` of 100 000
//! leaves, by value (a clone made inside the timing, as a caller who keeps
//! the tree pays it), against two `Vec::clone`s (the clone, and a copy of
//! the leaves: the most a flatten by value may cost). Also `flatten` of the
//! `Vec` alone (the clone made outside the timing).
//!
//! Run: `cargo bench -p pytree-benches --bench flatten`.

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use std::hint::black_box;
use std::time::Duration;

fn wide(c: &mut Criterion) {
    let v: Vec<f64> = (0..100_000).map(|i| i as f64).collect();
    let mut g = c.benchmark_group("flatten_wide");
    g.measurement_time(Duration::from_secs(3));
    g.warm_up_time(Duration::from_millis(500));
    g.bench_function(BenchmarkId::new("flatten_of_clone", "pytree"), |b| {
        b.iter(|| pytree_std::flatten(black_box(&v).clone()))
    });
    g.bench_function(BenchmarkId::new("two_clones", "hand"), |b| {
        b.iter(|| (black_box(&v).clone(), black_box(&v).clone()))
    });
    g.bench_function(BenchmarkId::new("flatten", "pytree"), |b| {
        b.iter_batched(|| v.clone(), pytree_std::flatten, BatchSize::LargeInput)
    });
    g.bench_function(BenchmarkId::new("clone", "hand"), |b| {
        b.iter(|| black_box(&v).clone())
    });
    g.finish();
}

criterion_group!(benches, wide);
criterion_main!(benches);
