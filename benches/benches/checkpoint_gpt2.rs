//! Issue 10's checkpoint figures: saving and loading GPT-2 small's
//! parameters (148 `f32` arrays, 124,439,808 parameters, 497.8 MB of data;
//! `pytree_benches::gpt2`) as a `.safetensors` file with
//! `pytree_std::checkpoint` (and the same loads through a memory map,
//! `Load::open_mapped`, the path every load took before issue 29), beside
//! the floors of the same bytes moved without any format: a `memcpy` of
//! the data, `std::fs::read` of the file (into a new buffer, and into one
//! already there) and `std::fs::write` of the file's bytes. `benches/scripts/checkpoint_gpt2.sh`
//! runs it, then Python's `safetensors` (numpy) on the same file, and
//! prints the table of BENCHMARKS.md.
//!
//! The files go to `$CKPT_DIR` (default `/dev/shm` when it exists, so that
//! the figures measure the libraries and memory, not the disk); the file
//! this bench writes first, `pytree-gpt2.safetensors`, is the one Python
//! loads.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use pytree_benches::gpt2::{checkpoint_dir, Dims, Gpt2};
use pytree_std::checkpoint::{self, Load, Save};

fn bench(c: &mut Criterion) {
    let model = Gpt2::new(Dims::SMALL, 1, 0.02);
    let dir = checkpoint_dir();
    let shared = dir.join("pytree-gpt2.safetensors");
    let scratch = dir.join("pytree-gpt2-save.safetensors");
    let raw = dir.join("pytree-gpt2-raw.bin");
    Save::new()
        .save(&shared, &model)
        .expect("save the shared file");
    let bytes = std::fs::read(&shared).expect("read it back");
    let data_len = 4 * Dims::SMALL.parameters();
    assert_eq!(checkpoint::load::<Gpt2>(&shared).expect("load"), model);

    let mut g = c.benchmark_group("checkpoint_gpt2");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(8));

    g.bench_function("save", |b| {
        b.iter(|| checkpoint::save(&scratch, black_box(&model)).expect("save"))
    });
    g.bench_function("load", |b| {
        b.iter(|| black_box(checkpoint::load::<Gpt2>(&shared).expect("load")))
    });
    g.bench_function("load_like", |b| {
        b.iter(|| {
            black_box(
                checkpoint::Load::new()
                    .open(&shared)
                    .expect("load_like")
                    .load_like(&model)
                    .expect("load_like")
                    .0,
            )
        })
    });
    let mut target = Gpt2::new(Dims::SMALL, 2, 0.0);
    g.bench_function("load_into", |b| {
        b.iter(|| {
            Load::new()
                .open(&shared)
                .expect("load_into")
                .load_into(black_box(&mut target))
                .expect("load_into")
        })
    });
    // The path every load took before issue 29 (and `Load::open_mapped`
    // still takes): the file memory-mapped, each tensor copied from the
    // map into its array, beside the positioned reads straight into the
    // arrays that `load_like` and `load_into` do now.
    g.bench_function("load_like_mapped", |b| {
        b.iter(|| {
            // SAFETY: nothing changes the bench's file while it is mapped.
            let file = unsafe { Load::new().open_mapped(&shared) }.expect("map");
            black_box(file.load_like(&model).expect("load_like").0)
        })
    });
    g.bench_function("load_into_mapped", |b| {
        b.iter(|| {
            // SAFETY: as above.
            let file = unsafe { Load::new().open_mapped(&shared) }.expect("map");
            file.load_into(black_box(&mut target)).expect("load_into")
        })
    });
    // The floors: the same bytes without a format.
    let src = bytes[bytes.len() - data_len..].to_vec();
    let mut dst = vec![1u8; data_len];
    g.bench_function("floor_memcpy", |b| {
        b.iter(|| dst.copy_from_slice(black_box(&src)))
    });
    g.bench_function("floor_fs_read", |b| {
        b.iter(|| black_box(std::fs::read(&shared).expect("read")))
    });
    let mut buffer = vec![1u8; bytes.len()];
    g.bench_function("floor_fs_read_into", |b| {
        b.iter(|| {
            use std::io::Read;
            let mut f = std::fs::File::open(&shared).expect("open");
            f.read_exact(black_box(&mut buffer)).expect("read");
        })
    });
    g.bench_function("floor_fs_write", |b| {
        b.iter(|| std::fs::write(&raw, black_box(&bytes)).expect("write"))
    });
    g.finish();
    let _ = std::fs::remove_file(&scratch);
    let _ = std::fs::remove_file(&raw);
    assert_eq!(target, model, "load_into loaded the model");
}

criterion_group!(benches, bench);
criterion_main!(benches);
