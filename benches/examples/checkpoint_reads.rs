//! Issue 29's figure: the loads of GPT-2 small's checkpoint (148 `f32`
//! arrays, 497.8 MB; the file of `benches/benches/checkpoint_gpt2.rs`)
//! through positioned reads straight into the arrays (`Load::open`, every
//! load's path now) and through a memory map copied from
//! (`Load::open_mapped`, every load's path before issue 29), alternating
//! in one process, round after round, so that both meet the same machine.
//! Each load is timed in the thread's CPU time (user and system:
//! `CLOCK_THREAD_CPUTIME_ID`, so the page faults and the kernel's copies
//! count, the waits of a machine shared with other builds do not) and in
//! wall time; the medians and the ratios are printed.
//!
//! `cargo run --release -p pytree-benches --example checkpoint_reads -- [rounds]`
//! (default 11 rounds; the file goes to `$CKPT_DIR`, default `/dev/shm`:
//! memory, not the disk).

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pytree_benches::gpt2::{Dims, Gpt2};
use pytree_std::checkpoint::{Checkpoint, Load, Save};

/// The CPU time this thread has used.
fn thread_cpu() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable `timespec` for the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime");
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// The file, opened with positioned reads or memory-mapped.
fn open(path: &Path, mapped: bool) -> Checkpoint {
    if mapped {
        // SAFETY: nothing changes the file while the example runs.
        unsafe { Load::new().open_mapped(path) }.expect("map")
    } else {
        Load::new().open(path).expect("open")
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(11);
    let dir = match std::env::var_os("CKPT_DIR") {
        Some(d) => PathBuf::from(d),
        None if Path::new("/dev/shm").is_dir() => PathBuf::from("/dev/shm"),
        None => std::env::temp_dir(),
    };
    let path = dir.join(format!("pytree-reads-{}.safetensors", std::process::id()));
    let model = Gpt2::new(Dims::SMALL, 1, 0.02);
    Save::new().save(&path, &model).expect("save");
    let mut target = Gpt2::new(Dims::SMALL, 2, 0.0);

    let names = ["load", "load_like", "load_into"];
    // [load kind][mapped] -> (cpu ms, wall ms) per round
    let mut cpu = vec![[Vec::new(), Vec::new()]; names.len()];
    let mut wall = vec![[Vec::new(), Vec::new()]; names.len()];
    for round in 0..=rounds {
        for (k, name) in names.iter().enumerate() {
            // Alternate which path goes first.
            let order = if round % 2 == 0 {
                [false, true]
            } else {
                [true, false]
            };
            for mapped in order {
                let (c0, w0) = (thread_cpu(), Instant::now());
                let file = open(&path, mapped);
                match *name {
                    "load" => drop(black_box(file.load::<Gpt2>().expect("load").0)),
                    "load_like" => drop(black_box(file.load_like(&model).expect("load_like").0)),
                    _ => {
                        file.load_into(black_box(&mut target)).expect("load_into");
                    }
                }
                drop(file);
                let (c, w) = (thread_cpu() - c0, w0.elapsed());
                // Round 0 warms up (page cache, allocator), not counted.
                if round > 0 {
                    cpu[k][usize::from(mapped)].push(c.as_secs_f64() * 1e3);
                    wall[k][usize::from(mapped)].push(w.as_secs_f64() * 1e3);
                }
            }
        }
    }
    assert_eq!(target, model, "load_into loaded the model");
    std::fs::remove_file(&path).ok();

    println!("{rounds} rounds, medians; ratio = positioned reads / memory map (below 1: faster)");
    println!(
        "| load | reads, CPU | map, CPU | ratio (CPU) | reads, wall | map, wall | ratio (wall) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (k, name) in names.iter().enumerate() {
        let [rc, mc] = [median(cpu[k][0].clone()), median(cpu[k][1].clone())];
        let [rw, mw] = [median(wall[k][0].clone()), median(wall[k][1].clone())];
        println!(
            "| {name} | {rc:.0} ms | {mc:.0} ms | {:.2}x | {rw:.0} ms | {mw:.0} ms | {:.2}x |",
            rc / mc,
            rw / mw
        );
    }
}
