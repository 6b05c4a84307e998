//! Benchmarks of `Tree<f64>`: flatten, structure, leaves, map and
//! unflatten on the performance issue's shapes (T1: a 48-layer
//! transformer's 771 parameters; T4: 10 000 flat keys), and flatten of
//! trees of 10^4, 10^5 and 10^6 leaves to show time linear in size.
//!
//! The `tree/walks` group times the other walks of the tree module on T1:
//! iteration with paths (by reference and by value), `for_each_mut`,
//! `map2`, equality, `Debug`, `Display`, `num_leaves` and drop.
//!
//! Run: `cargo bench -p pytree-benches --bench tree`. Consuming operations get
//! an unshared copy per iteration (`iter_batched`), so they measure the
//! walk, not copy-on-write of shared storage.

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use pytree_std::Tree;
use std::hint::black_box;
use std::time::Duration;

fn pair(a: &str, b: &str, x: &mut f64) -> Tree<f64> {
    *x += 1.0;
    let first = Tree::leaf(*x);
    *x += 1.0;
    Tree::dict([(a, first), (b, Tree::leaf(*x))])
}

/// T1: `embed.w`, 48 layers of `attn.{q,k,v,o}.{w,b}`, `mlp.{fc1,fc2}.{w,b}`,
/// `ln1.{g,b}`, `ln2.{g,b}`, and `final_ln.{g,b}`: 771 leaves.
fn t1() -> Tree<f64> {
    let mut x = 0.0;
    let layers = (0..48).map(|_| {
        let attn = Tree::dict(["q", "k", "v", "o"].map(|p| (p, pair("w", "b", &mut x))));
        let mlp = Tree::dict(["fc1", "fc2"].map(|p| (p, pair("w", "b", &mut x))));
        Tree::dict([
            ("attn", attn),
            ("mlp", mlp),
            ("ln1", pair("g", "b", &mut x)),
            ("ln2", pair("g", "b", &mut x)),
        ])
    });
    let t = Tree::dict([
        ("embed", Tree::dict([("w", Tree::leaf(0.5))])),
        ("layers", Tree::seq(layers.collect::<Vec<_>>())),
        ("final_ln", pair("g", "b", &mut x)),
    ]);
    assert_eq!(t.num_leaves(), 771);
    t
}

/// T4: one map of 10 000 keys `k00000` .. `k09999`.
fn t4() -> Tree<f64> {
    Tree::dict((0..10_000).map(|i| (format!("k{i:05}"), Tree::leaf(i as f64))))
}

/// `n` leaves as a sequence of maps of 8 leaves.
fn sized(n: usize) -> Tree<f64> {
    let keys = ["a", "b", "c", "d", "e", "f", "g", "h"];
    Tree::seq(
        (0..n / 8)
            .map(|i| Tree::dict(keys.map(|k| (k, Tree::leaf(i as f64)))))
            .collect::<Vec<_>>(),
    )
}

/// An unshared copy (every container freshly allocated).
fn fresh(t: &Tree<f64>) -> Tree<f64> {
    t.map_ref(|x| *x)
}

fn shapes(c: &mut Criterion) {
    for (name, tree) in [("t1", t1()), ("t4", t4())] {
        let n = tree.num_leaves() as u64;
        let mut g = c.benchmark_group(format!("tree/{name}"));
        g.throughput(Throughput::Elements(n));
        g.measurement_time(Duration::from_secs(2));
        g.warm_up_time(Duration::from_millis(500));
        g.bench_function("flatten", |b| {
            b.iter_batched(|| fresh(&tree), pytree_std::flatten, BatchSize::SmallInput)
        });
        g.bench_function("structure", |b| {
            b.iter(|| pytree_std::structure(black_box(&tree)))
        });
        g.bench_function("leaves", |b| {
            b.iter(|| pytree_std::leaves(black_box(&tree)))
        });
        g.bench_function("map_ref", |b| {
            b.iter(|| black_box(&tree).map_ref(|x| x * 2.0))
        });
        g.bench_function("map", |b| {
            b.iter_batched(
                || fresh(&tree),
                |t| pytree_std::map(t, |x| x * 2.0),
                BatchSize::SmallInput,
            )
        });
        let (leaves, def) = pytree_std::flatten(fresh(&tree));
        g.bench_function("unflatten", |b| {
            b.iter_batched(
                || leaves.clone(),
                |l| pytree_std::unflatten::<Tree<f64>>(&def, l).unwrap(),
                BatchSize::SmallInput,
            )
        });
        g.finish();
    }
}

fn linear(c: &mut Criterion) {
    let mut g = c.benchmark_group("tree/flatten_size");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(3));
    g.warm_up_time(Duration::from_millis(500));
    for n in [10_000usize, 100_000, 1_000_000] {
        let tree = sized(n);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::from_parameter(n), &tree, |b, tree| {
            b.iter_batched(|| fresh(tree), pytree_std::flatten, BatchSize::LargeInput)
        });
    }
    g.finish();
}

fn walks(c: &mut Criterion) {
    let tree = t1();
    let other = fresh(&tree);
    let mut g = c.benchmark_group("tree/walks");
    g.throughput(Throughput::Elements(tree.num_leaves() as u64));
    g.measurement_time(Duration::from_secs(2));
    g.warm_up_time(Duration::from_millis(500));
    g.bench_function("iter", |b| {
        b.iter(|| {
            black_box(&tree)
                .iter()
                .map(|(p, x)| p.len() as f64 + x)
                .sum::<f64>()
        })
    });
    g.bench_function("into_iter", |b| {
        b.iter_batched(
            || fresh(&tree),
            |t| t.into_iter().map(|(p, x)| p.len() as f64 + x).sum::<f64>(),
            BatchSize::SmallInput,
        )
    });
    let mut params = fresh(&tree);
    g.bench_function("for_each_mut", |b| {
        b.iter(|| pytree_std::for_each_mut(black_box(&mut params), |x| *x += 1.0))
    });
    g.bench_function("map2", |b| {
        b.iter(|| {
            pytree_std::walk::map_n(black_box(&tree), [black_box(&other)], |x, [y]| x + y).unwrap()
        })
    });
    g.bench_function("eq", |b| b.iter(|| black_box(&tree) == black_box(&other)));
    g.bench_function("debug", |b| b.iter(|| format!("{:?}", black_box(&tree))));
    g.bench_function("display", |b| b.iter(|| black_box(&tree).to_string()));
    g.bench_function("num_leaves", |b| b.iter(|| black_box(&tree).num_leaves()));
    g.bench_function("drop", |b| {
        b.iter_batched(|| fresh(&tree), drop, BatchSize::SmallInput)
    });
    g.finish();
}

criterion_group!(benches, shapes, linear, walks);
criterion_main!(benches);
