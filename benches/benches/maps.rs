//! `leaves` of T4 (10 000 `String` keys to `f64`) as each keyed map,
//! against the hand-written loop (`map.values().collect::<Vec<&f64>>()`
//! for `BTreeMap` and `IndexMap`, whose leaf order is the map's own; the
//! values sorted by key for `HashMap`, whose leaf order is by key).
//! Issue 20 measured `leaves` of an `IndexMap` one instruction per entry
//! above the code before the shared map body (BENCHMARKS.md); this bench
//! says what that costs against the hand-written loop.
//!
//! Run: `cargo bench -p pytree-benches --bench maps`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use pytree_std::indexmap::IndexMap;
use std::collections::{BTreeMap, HashMap};
use std::hint::black_box;
use std::time::Duration;

fn entries() -> impl Iterator<Item = (String, f64)> {
    (0..10_000).map(|i| (format!("key{i:05}"), i as f64))
}

fn leaves(c: &mut Criterion) {
    let btree: BTreeMap<String, f64> = entries().collect();
    let hash: HashMap<String, f64> = entries().collect();
    let index: IndexMap<String, f64> = entries().collect();
    let mut g = c.benchmark_group("maps_leaves");
    g.measurement_time(Duration::from_secs(3));
    g.warm_up_time(Duration::from_millis(500));
    g.bench_function(BenchmarkId::new("index", "pytree"), |b| {
        b.iter(|| pytree_std::leaves(black_box(&index)))
    });
    g.bench_function(BenchmarkId::new("index", "hand"), |b| {
        b.iter(|| black_box(&index).values().collect::<Vec<&f64>>())
    });
    g.bench_function(BenchmarkId::new("btree", "pytree"), |b| {
        b.iter(|| pytree_std::leaves(black_box(&btree)))
    });
    g.bench_function(BenchmarkId::new("btree", "hand"), |b| {
        b.iter(|| black_box(&btree).values().collect::<Vec<&f64>>())
    });
    g.bench_function(BenchmarkId::new("hash", "pytree"), |b| {
        b.iter(|| pytree_std::leaves(black_box(&hash)))
    });
    g.bench_function(BenchmarkId::new("hash", "hand"), |b| {
        b.iter(|| {
            let mut e: Vec<(&String, &f64)> = black_box(&hash).iter().collect();
            e.sort_unstable_by(|a, b| a.0.cmp(b.0));
            e.into_iter().map(|(_, v)| v).collect::<Vec<&f64>>()
        })
    });
    g.finish();
}

criterion_group!(benches, leaves);
criterion_main!(benches);
