//! Issue 18's figures: loading Hugging Face-style checkpoints into a
//! derived model — a single ~100 MB file and GPT-2 small (497.8 MB) in two
//! shards plus `model.safetensors.index.json`, as `Save::save_sharded`
//! writes them — with `pytree_std::checkpoint`, against candle's
//! `MmapedSafetensors` (`::new` / `::multi`, every tensor loaded to the
//! CPU, as a candle model's `VarBuilder` does) on the same files in the
//! same run. `benches/python/checkpoint_hf.py` loads the same files with
//! Python's `safetensors` (numpy); `benches/scripts/checkpoint_hf.sh` runs
//! both and prints the table of BENCHMARKS.md.
//!
//! The files are generated here, at bench time (never committed), into
//! `$CKPT_DIR` (default `/dev/shm`: memory, so the figures measure the
//! libraries, not the disk), and left there for the Python side.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion};
use pytree_benches::gpt2::{checkpoint_dir, Dims, Gpt2};
use pytree_std::candle_core::safetensors::MmapedSafetensors;
use pytree_std::candle_core::{Device, Tensor};
use pytree_std::checkpoint::{Load, Save};

/// A GPT-2-shaped model of about 100 MB (4 blocks of width 512, a 32,000
/// token vocabulary).
const MEDIUM: Dims = Dims {
    d: 512,
    vocab: 32000,
    ctx: 512,
    layers: 4,
};

/// Every tensor of the files, loaded by candle onto the CPU.
fn candle_load(st: &MmapedSafetensors, names: &[String]) -> Vec<Tensor> {
    names
        .iter()
        .map(|n| st.load(n, &Device::Cpu).expect("candle load"))
        .collect()
}

/// The file's model, loaded by type.
fn load(file: &Path) -> Gpt2 {
    Load::new()
        .open(file)
        .expect("load")
        .load::<Gpt2>()
        .expect("load")
        .0
}

/// The names of the file's tensors.
fn names(file: &Path) -> Vec<String> {
    Load::new()
        .open(file)
        .expect("open")
        .names()
        .map(String::from)
        .collect()
}

/// pytree's two loads of `file`: by type (`<prefix>_pytree_load`) and into
/// `target`'s arrays (`<prefix>_pytree_load_into`).
fn bench_pytree_loads(
    g: &mut BenchmarkGroup<'_, WallTime>,
    prefix: &str,
    file: &Path,
    target: &mut Gpt2,
) {
    g.bench_function(format!("{prefix}_pytree_load"), |b| {
        b.iter(|| black_box(load(file)))
    });
    g.bench_function(format!("{prefix}_pytree_load_into"), |b| {
        b.iter(|| {
            Load::new()
                .open(file)
                .expect("load_into")
                .load_into(black_box(&mut *target))
                .expect("load_into")
        })
    });
}

fn bench(c: &mut Criterion) {
    let dir = checkpoint_dir().join("pytree-hf-bench");
    std::fs::create_dir_all(&dir).expect("the bench directory");
    let single_model = Gpt2::new(MEDIUM, 1, 0.02);
    let single = dir.join("single.safetensors");
    Save::new()
        .save(&single, &single_model)
        .expect("save the single file");
    let model = Gpt2::new(Dims::SMALL, 1, 0.02);
    let sharded = dir.join("sharded");
    let files = Save::new()
        .max_shard_bytes(260_000_000)
        .save_sharded(&sharded, &model)
        .expect("save the shards");
    assert_eq!(files.len(), 3, "two shards and the index");
    let index = files[2].clone();
    let shards: Vec<PathBuf> = files[..2].to_vec();
    eprintln!(
        "single: {} bytes; shards: {:?} bytes",
        std::fs::metadata(&single).map(|m| m.len()).unwrap_or(0),
        shards
            .iter()
            .map(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
            .collect::<Vec<_>>()
    );
    assert_eq!(load(&index), model);
    let single_names = names(&single);
    let sharded_names = names(&index);

    let mut g = c.benchmark_group("checkpoint_hf");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));

    bench_pytree_loads(&mut g, "single", &single, &mut Gpt2::new(MEDIUM, 2, 0.0));
    g.bench_function("single_candle", |b| {
        b.iter(|| {
            // SAFETY: the bench's own file, not changed while mapped.
            let st = unsafe { MmapedSafetensors::new(&single) }.expect("candle open");
            black_box(candle_load(&st, &single_names))
        })
    });
    let mut target = Gpt2::new(Dims::SMALL, 2, 0.0);
    bench_pytree_loads(&mut g, "sharded", &index, &mut target);
    g.bench_function("sharded_candle_multi", |b| {
        b.iter(|| {
            // SAFETY: the bench's own files, not changed while mapped.
            let st = unsafe { MmapedSafetensors::multi(&shards) }.expect("candle open");
            black_box(candle_load(&st, &sharded_names))
        })
    });
    g.finish();
    assert_eq!(target, model, "load_into loaded the model");
}

criterion_group!(benches, bench);
criterion_main!(benches);
