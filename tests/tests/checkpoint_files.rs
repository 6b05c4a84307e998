//! Issue 29 (items 5 and 6): files that are not what they seem. A shard,
//! an index or a checkpoint that is a named pipe, a device or a directory
//! is refused before it is opened (an `open` of a FIFO for reading blocks
//! until a writer comes: every way to load hung); a file truncated after
//! it was opened makes the load an error naming the tensor (through a
//! memory map, the process died of SIGBUS). Each case runs in a child
//! process under a 4 GiB address-space cap and a time limit, so that a
//! hang or a signal fails the test instead of blocking or killing the
//! test runner.
#![cfg(target_os = "linux")]

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use pytree_std::checkpoint::{self, Load, Save};
use pytree_std::ndarray::{Array1, Array2};
use pytree_std::PyTree;
use pytree_tests::child;

#[derive(PyTree, Clone, Debug, PartialEq)]
struct Linear {
    w: Array2<f32>,
    b: Array1<f32>,
}

/// Two layers of 1 MiB weights each: the data spans many pages.
fn model(fill: f32) -> Vec<Linear> {
    (0..2)
        .map(|i| Linear {
            w: Array2::from_elem((512, 512), fill + i as f32),
            b: Array1::from_elem(512, fill - i as f32),
        })
        .collect()
}

fn dir(case: &str) -> PathBuf {
    pytree_tests::scratch_dir(&format!("files-{case}"))
}

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a NUL-terminated path that lives across the call.
    let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    assert_eq!(rc, 0, "mkfifo {}", path.display());
}

/// Runs `body` as case `case` of `test` in a child (4 GiB, 60 s), which
/// must exit normally.
fn in_child(test: &str, case: &str, body: impl FnOnce()) {
    child::in_child(test, case, 4 << 30, Duration::from_secs(60), body);
}

/// Every way to load from `path` is an error whose message ends with
/// `ends` (and none waits).
fn every_load_refuses(path: &Path, ends: &str) {
    let check = |what: &str, err: pytree_std::Error| {
        let msg = err.to_string();
        assert!(msg.ends_with(ends), "{what} of {}: {msg}", path.display());
    };
    check("Load::open", Load::new().open(path).unwrap_err());
    check(
        "Load::open with options",
        Load::new().allow_unused().open(path).unwrap_err(),
    );
    // SAFETY: the map is never made (the path is refused first).
    check("Load::open_mapped", unsafe {
        Load::new().open_mapped(path).unwrap_err()
    });
    check("load", checkpoint::load::<Vec<Linear>>(path).unwrap_err());
    check(
        "load_like",
        Load::new()
            .open(path)
            .and_then(|f| f.load_like(&model(0.0)))
            .unwrap_err(),
    );
    let mut into = model(0.0);
    check(
        "load_into",
        Load::new()
            .open(path)
            .and_then(|f| f.load_into(&mut into))
            .unwrap_err(),
    );
    assert_eq!(into, model(0.0));
}

#[test]
fn a_fifo_device_or_directory_is_refused_before_it_is_opened() {
    in_child(
        "a_fifo_device_or_directory_is_refused_before_it_is_opened",
        "fifo",
        || {
            let d = dir("fifo");
            let fifo_message = "is a named pipe (FIFO), not a regular file: a checkpoint is read \
                            from regular files only";
            // A checkpoint that is a FIFO.
            let fifo = d.join("model.safetensors");
            mkfifo(&fifo);
            every_load_refuses(&fifo, fifo_message);
            // The second shard of a sharded checkpoint, as the issue found it.
            let sharded = d.join("sharded");
            let files = Save::new()
                .max_shard_bytes(1 << 20)
                .save_sharded(&sharded, &model(1.0))
                .unwrap();
            // Four shards (1 MiB at most: a weight alone, its bias, ...) and
            // the index.
            assert_eq!(files.len(), 5);
            let second = files[1].clone();
            let second_name = second.file_name().unwrap().to_str().unwrap().to_string();
            std::fs::remove_file(&second).unwrap();
            mkfifo(&second);
            let index = sharded.join("model.safetensors.index.json");
            let err = Load::new().open(&index).unwrap_err().to_string();
            assert!(
                err.contains(&format!(
                    "sharded checkpoint index {}: shard `{second_name}` listed in the index: at \
                 <root>: safetensors file {}: {fifo_message}",
                    index.display(),
                    second.display()
                )),
                "{err}"
            );
            every_load_refuses(&index, fifo_message);
            // The index itself.
            let fifo_index = d.join("fifo.index.json");
            mkfifo(&fifo_index);
            every_load_refuses(&fifo_index, fifo_message);
            // A character device and a directory.
            every_load_refuses(
                Path::new("/dev/null"),
                "is a character device, not a regular file: a checkpoint is read from regular \
             files only",
            );
            every_load_refuses(
                &d,
                "is a directory, not a regular file: a checkpoint is read from regular files only",
            );
            std::fs::remove_dir_all(&d).ok();
        },
    );
}

#[test]
fn a_file_truncated_after_it_was_opened_is_an_error_naming_the_tensor() {
    in_child(
        "a_file_truncated_after_it_was_opened_is_an_error_naming_the_tensor",
        "truncated",
        || {
            let d = dir("truncated");
            let path = d.join("model.safetensors");
            let saved = model(1.0);
            checkpoint::save(&path, &saved).unwrap();
            let full = std::fs::metadata(&path).unwrap().len();
            // The tensors are stored in leaf order (all f32): cut the second
            // layer off, its weight and bias.
            let cut = full - 4 * (512 * 512 + 512);
            // Every way of loading, from a file opened whole and then truncated
            // (by another program, as it were).
            let truncate = || {
                let file = Load::new().open(&path).unwrap();
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .unwrap()
                    .set_len(cut)
                    .unwrap();
                file
            };
            let restore = || checkpoint::save(&path, &saved).unwrap();

            let missing = "tensor `1.w` (f32[512,512]): cannot read its 1048576 bytes at offset";
            let file = truncate();
            let err = file.load::<Vec<Linear>>().unwrap_err().to_string();
            assert!(
                err.starts_with("at [1].w: ") && err.contains(missing),
                "{err}"
            );
            assert!(
                err.ends_with(
                    "the file ends before them: it was truncated or rewritten after it was opened"
                ),
                "{err}"
            );
            let err = file.load_like(&model(0.0)).unwrap_err().to_string();
            assert!(
                err.starts_with("at [1].w: ") && err.contains(missing),
                "{err}"
            );
            let err = file
                .load_map::<pytree_std::ndarray::ArrayD<f32>>()
                .unwrap_err();
            assert!(err.to_string().contains(missing), "{err}");
            let t = file.tensor("1.w").unwrap();
            assert!(t.data().unwrap_err().to_string().contains(missing));
            assert!(t.read_into(&mut vec![0u8; t.num_bytes()]).is_err());
            // In place: refused before anything is written.
            let mut into = model(0.0);
            let err = file.load_into(&mut into).unwrap_err().to_string();
            assert!(
                err.ends_with(&format!(
                "{cut} bytes now, {full} when it was opened: truncated since, nothing was loaded"
            )),
                "{err}"
            );
            assert_eq!(into, model(0.0));
            drop(file);
            restore();

            // A shard of a sharded checkpoint, by type and by names alike.
            let sharded = d.join("sharded");
            let files = Save::new()
                .max_shard_bytes(1 << 20)
                .save_sharded(&sharded, &saved)
                .unwrap();
            let index = &files[files.len() - 1];
            let file = Load::new().open(index).unwrap();
            let last = &files[files.len() - 2];
            std::fs::OpenOptions::new()
                .write(true)
                .open(last)
                .unwrap()
                .set_len(64)
                .unwrap();
            let err = file.load::<Vec<Linear>>().unwrap_err().to_string();
            assert!(
                err.contains(&format!("of {}: the file ends before them", last.display())),
                "{err}"
            );
            std::fs::remove_dir_all(&d).ok();
        },
    );
}

/// What the reads above replace: the same truncation under a memory map
/// (`Load::open_mapped`, whose `unsafe` contract forbids it, and how every
/// load read files before issue 29) kills the process with SIGBUS.
#[test]
fn under_a_memory_map_the_same_truncation_is_sigbus() {
    // Named after the parent, which removes it after the child's death.
    let mapped_dir =
        |parent: u32| std::env::temp_dir().join(format!("pytree-files-{parent}-mapped"));
    if child::case().as_deref() == Some("mapped") {
        let d = mapped_dir(std::os::unix::process::parent_id());
        std::fs::create_dir_all(&d).unwrap();
        let path = d.join("model.safetensors");
        checkpoint::save(&path, &model(1.0)).unwrap();
        // SAFETY: none: this child breaks the contract on purpose, and
        // the parent expects it to die.
        let file = unsafe { Load::new().open_mapped(&path).unwrap() };
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(4096)
            .unwrap();
        let _ = file.load::<Vec<Linear>>();
        println!("done");
        return;
    }
    use std::os::unix::process::ExitStatusExt;
    let out = child::run_case_timed(
        "under_a_memory_map_the_same_truncation_is_sigbus",
        "mapped",
        4 << 30,
        Duration::from_secs(60),
    );
    std::fs::remove_dir_all(mapped_dir(std::process::id())).ok();
    assert_eq!(out.status.signal(), Some(libc::SIGBUS), "{out:?}");
    assert!(!out.stdout.contains("done"));
}
