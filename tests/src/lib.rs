//! Integration tests live in `tests/`. The library holds what they share
//! with the fuzz targets of `fuzz/`: the target bodies ([`fuzz`]), how a
//! test runs one of its cases in a memory-limited child process
//! ([`child`]), the allocator that counts a test's bytes ([`counting`]),
//! the panicking closure and sink of the unwinding tests ([`unwind`]),
//! [`assert_mentions`], and the folders tests write files into
//! ([`scratch_dir`], [`out_dir`]).

pub mod child;
pub mod counting;
pub mod fuzz;
pub mod unwind;

/// Asserts that the message of `err` contains `want`.
#[track_caller]
pub fn assert_mentions(err: &impl std::fmt::Display, want: &str) {
    let message = err.to_string();
    assert!(message.contains(want), "`{want}` is not in: {message}");
}

/// A folder for a test's files, `<temp>/pytree-<name>-<process id>`,
/// created if need be.
pub fn scratch_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("pytree-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The folder that the environment variable `var` names where it is set
/// (so that a script can check what a test wrote), created if need be;
/// else [`scratch_dir`]`(name)`.
pub fn out_dir(var: &str, name: &str) -> std::path::PathBuf {
    match std::env::var_os(var) {
        Some(d) => {
            let dir = std::path::PathBuf::from(d);
            std::fs::create_dir_all(&dir).unwrap();
            dir
        }
        None => scratch_dir(name),
    }
}
