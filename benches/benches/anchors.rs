//! Criterion benchmarks over the anchor trees of `benches/anchors`: for each
//! tree, each operation of the Python script, named
//! `<tree>/<op>/pytree` (the library) and `<tree>/<op>/hand` (the same
//! work written by hand: `pytree_benches::hand`, and for T2 the plain `Vec`
//! loops inline; no hand-written `struct_eq`, as there is no TreeDef).
//! `benches/scripts/compare.sh` reads the medians from
//! `target/criterion/<tree>/<op>/<impl>/new/estimates.json`.
//!
//! Consuming operations (`flatten`, `map`) get a fresh clone of the tree
//! per call from `iter_batched`; the clone is not timed. Batches are kept
//! small (two trees, or one large tree): with larger batches the live
//! clones and outputs pass glibc's trim threshold (128 KiB), glibc hands
//! the freed memory back to the kernel after each batch, and the timings
//! are mostly page faults (seen with `perf`) that hit whichever side
//! allocates more. A batch of two costs one timer read (~25 ns) per two
//! calls, on both sides.

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BatchSize, BenchmarkGroup, BenchmarkId, Criterion,
};
use pytree_benches::{hand, shapes};
use pytree_std::{paths::KeyEntry, Flatten, KeyPath, Std, TreeDef, Unflatten};

/// The learning rate of the SGD step.
const LR: f64 = 0.01;

/// Trees per batch for T1 (about 30 KB each with their outputs).
const T1_BATCH: BatchSize = BatchSize::NumIterations(2);

/// The operations every tree is benchmarked on, with the library.
fn library_ops<T>(g: &mut BenchmarkGroup<'_, WallTime>, build: fn() -> T, batch: BatchSize)
where
    T: Flatten<Std, Leaf = f64> + Unflatten<Std> + Clone + PartialEq,
{
    let t = build();
    let t2 = build();
    let (leaves, def): (Vec<f64>, TreeDef) = pytree_std::flatten(t.clone());
    assert!(pytree_std::unflatten::<T>(&def, leaves.iter().copied()).unwrap() == t);

    g.bench_function(BenchmarkId::new("flatten", "pytree"), |b| {
        b.iter_batched(|| t.clone(), pytree_std::flatten, batch)
    });
    g.bench_function(BenchmarkId::new("unflatten", "pytree"), |b| {
        b.iter(|| pytree_std::unflatten::<T>(black_box(&def), black_box(&leaves).iter().copied()))
    });
    g.bench_function(BenchmarkId::new("map", "pytree"), |b| {
        b.iter_batched(|| t.clone(), |t| pytree_std::map(t, |x| x + 1.0), batch)
    });
    g.bench_function(BenchmarkId::new("map2", "pytree"), |b| {
        b.iter(|| pytree_std::walk::map_n(black_box(&t), [black_box(&t2)], |x, [y]| x + y))
    });
    let mut params = t.clone();
    g.bench_function(BenchmarkId::new("sgd", "pytree"), |b| {
        b.iter(|| {
            pytree_std::zip_mut([black_box(&mut params)], [black_box(&t2)], |[p], [g]| {
                *p -= LR * g
            })
        })
    });
    g.bench_function(BenchmarkId::new("leaves", "pytree"), |b| {
        b.iter(|| pytree_std::leaves(black_box(&t)))
    });
    let (da, db) = (pytree_std::structure(&t), pytree_std::structure(&t2));
    assert!(da == db);
    g.bench_function(BenchmarkId::new("struct_eq", "pytree"), |b| {
        b.iter(|| black_box(&da) == black_box(&db))
    });
    g.bench_function(BenchmarkId::new("flatten_with_path", "pytree"), |b| {
        b.iter_batched(|| t.clone(), pytree_std::flatten_with_path, batch)
    });
}

/// The hand-written operations of one tree, `hand::$tree::*`, timed as
/// [`library_ops`] times the library's (the same inputs, clones and
/// batches). `$unflatten` rebuilds a tree from what `flatten` kept and the
/// leaves.
macro_rules! hand_ops {
    ($g:expr, $tree:ident, $batch:expr, $unflatten:expr) => {{
        let g: &mut BenchmarkGroup<'_, WallTime> = $g;
        let batch: BatchSize = $batch;
        let (t, t2) = (shapes::$tree(), shapes::$tree());
        let (leaves, kept) = hand::$tree::flatten(t.clone());
        let unflatten = $unflatten;
        assert!(unflatten(&kept, &leaves) == t);

        g.bench_function(BenchmarkId::new("flatten", "hand"), |b| {
            b.iter_batched(|| t.clone(), hand::$tree::flatten, batch)
        });
        g.bench_function(BenchmarkId::new("unflatten", "hand"), |b| {
            b.iter(|| unflatten(black_box(&kept), black_box(&leaves)))
        });
        g.bench_function(BenchmarkId::new("map", "hand"), |b| {
            b.iter_batched(|| t.clone(), |t| hand::$tree::map(t, |x| x + 1.0), batch)
        });
        g.bench_function(BenchmarkId::new("map2", "hand"), |b| {
            b.iter(|| hand::$tree::map2(black_box(&t), black_box(&t2), |x, y| x + y))
        });
        let mut params = t.clone();
        g.bench_function(BenchmarkId::new("sgd", "hand"), |b| {
            b.iter(|| hand::$tree::sgd(black_box(&mut params), black_box(&t2), LR))
        });
        g.bench_function(BenchmarkId::new("leaves", "hand"), |b| {
            b.iter(|| hand::$tree::leaves(black_box(&t)))
        });
        g.bench_function(BenchmarkId::new("flatten_with_path", "hand"), |b| {
            b.iter_batched(|| t.clone(), hand::$tree::flatten_with_path, batch)
        });
    }};
}

/// The benchmark group `$name` of tree `shapes::$tree()`: [`library_ops`]
/// and [`hand_ops!`] (whose arguments follow).
macro_rules! anchor_group {
    ($c:expr, $name:expr, $tree:ident, $batch:expr, $unflatten:expr) => {{
        let mut g = $c.benchmark_group($name);
        library_ops(&mut g, shapes::$tree, $batch);
        hand_ops!(&mut g, $tree, $batch, $unflatten);
        g.finish();
    }};
}

fn t1(c: &mut Criterion) {
    let mut g = c.benchmark_group("T1_transformer");
    library_ops(&mut g, shapes::t1, T1_BATCH);

    let t = shapes::t1();
    let t2 = shapes::t1();
    let leaves = hand::t1::leaves_owned(t.clone());
    g.bench_function(BenchmarkId::new("flatten", "hand"), |b| {
        b.iter_batched(|| t.clone(), hand::t1::leaves_owned, T1_BATCH)
    });
    g.bench_function(BenchmarkId::new("unflatten", "hand"), |b| {
        b.iter(|| hand::t1::build(48, black_box(&leaves).iter().copied()))
    });
    // Not a baseline: the construction fallible at every level, as
    // `unflatten_from` is (see `hand::t1::build_result`).
    g.bench_function(BenchmarkId::new("unflatten", "hand_result"), |b| {
        b.iter(|| hand::t1::build_result(48, black_box(&leaves).iter().copied()))
    });
    g.bench_function(BenchmarkId::new("map", "hand"), |b| {
        b.iter_batched(|| t.clone(), |t| hand::t1::map(t, |x| x + 1.0), T1_BATCH)
    });
    g.bench_function(BenchmarkId::new("map2", "hand"), |b| {
        b.iter(|| hand::t1::map2(black_box(&t), black_box(&t2), |x, y| x + y))
    });
    // Not a baseline: the hand-written map2 returning each layer through a
    // `Result`, as `zip_with` must (see `hand::t1::map2_result`).
    g.bench_function(BenchmarkId::new("map2", "hand_result"), |b| {
        b.iter(|| hand::t1::map2_result(black_box(&t), black_box(&t2), |x, y| x + y))
    });
    let mut params = t.clone();
    g.bench_function(BenchmarkId::new("sgd", "hand"), |b| {
        b.iter(|| hand::t1::sgd(black_box(&mut params), black_box(&t2), LR))
    });
    g.bench_function(BenchmarkId::new("leaves", "hand"), |b| {
        b.iter(|| hand::t1::leaves_ref(black_box(&t)))
    });
    // The floor the issue sets for `leaves`: a `Vec` sized up front.
    g.bench_function(BenchmarkId::new("leaves", "hand_sized"), |b| {
        b.iter(|| hand::t1::leaves_ref_sized(black_box(&t)))
    });
    g.bench_function(BenchmarkId::new("flatten_with_path", "hand"), |b| {
        b.iter(|| hand::t1::leaves_with_path(black_box(&t)))
    });
    // `for_each_mut` (T1 only: issue 28's probe), beside its hand loop.
    let mut params = t.clone();
    g.bench_function(BenchmarkId::new("for_each_mut", "pytree"), |b| {
        b.iter(|| pytree_std::for_each_mut(black_box(&mut params), |x| *x += 1.0))
    });
    let mut params = t.clone();
    g.bench_function(BenchmarkId::new("for_each_mut", "hand"), |b| {
        b.iter(|| hand::t1::for_each_mut(black_box(&mut params), |x| *x += 1.0))
    });
    g.finish();
}

fn t2(c: &mut Criterion) {
    let mut g = c.benchmark_group("T2_wide");
    library_ops(&mut g, shapes::t2, BatchSize::PerIteration);

    let t = shapes::t2();
    let t2 = shapes::t2();
    // The floor the issue sets for flatten T2: a `Vec::clone`.
    g.bench_function(BenchmarkId::new("flatten", "hand"), |b| {
        b.iter(|| black_box(&t).clone())
    });
    g.bench_function(BenchmarkId::new("unflatten", "hand"), |b| {
        b.iter(|| black_box(&t).to_vec())
    });
    g.bench_function(BenchmarkId::new("map", "hand"), |b| {
        b.iter_batched(
            || t.clone(),
            |t| t.into_iter().map(|x| x + 1.0).collect::<Vec<f64>>(),
            BatchSize::PerIteration,
        )
    });
    g.bench_function(BenchmarkId::new("map2", "hand"), |b| {
        b.iter(|| {
            black_box(&t)
                .iter()
                .zip(black_box(&t2))
                .map(|(x, y)| x + y)
                .collect::<Vec<f64>>()
        })
    });
    let mut params = t.clone();
    g.bench_function(BenchmarkId::new("sgd", "hand"), |b| {
        b.iter(|| {
            for (p, g) in black_box(&mut params).iter_mut().zip(black_box(&t2)) {
                *p -= LR * g;
            }
        })
    });
    g.bench_function(BenchmarkId::new("leaves", "hand"), |b| {
        b.iter(|| black_box(&t).iter().collect::<Vec<&f64>>())
    });
    // Consumes the `Vec` like the library's `flatten_with_path`: `[i]` per leaf.
    let with_path = |t: Vec<f64>| -> Vec<(KeyPath, f64)> {
        t.into_iter()
            .enumerate()
            .map(|(i, x)| (KeyPath::from_entries(vec![KeyEntry::Index(i)]), x))
            .collect()
    };
    assert!(with_path(t.clone()) == pytree_std::flatten_with_path(t.clone()).0);
    g.bench_function(BenchmarkId::new("flatten_with_path", "hand"), |b| {
        b.iter_batched(|| t.clone(), with_path, BatchSize::PerIteration)
    });
    g.finish();
}

fn t3(c: &mut Criterion) {
    anchor_group!(
        c,
        "T3_deep",
        t3,
        BatchSize::NumIterations(2),
        |depth: &usize, leaves: &[f64]| hand::t3::unflatten(*depth, leaves)
    );
}

fn t4(c: &mut Criterion) {
    anchor_group!(
        c,
        "T4_dict10k",
        t4,
        BatchSize::PerIteration,
        |keys: &Vec<String>, leaves: &[f64]| hand::t4::unflatten(keys, leaves.iter().copied())
    );
    anchor_group!(
        c,
        "T4_hashmap10k",
        t4_hash,
        BatchSize::PerIteration,
        |keys: &Vec<String>, leaves: &[f64]| hand::t4_hash::unflatten(keys, leaves.iter().copied())
    );
}

fn t5(c: &mut Criterion) {
    anchor_group!(
        c,
        "T5_small",
        t5,
        BatchSize::SmallInput,
        |b_len: &usize, leaves: &[f64]| hand::t5::unflatten(*b_len, leaves.iter().copied())
    );
}

criterion_group! {
    name = anchors;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = t1, t2, t3, t4, t5
}
criterion_main!(anchors);
