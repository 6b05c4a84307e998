//! Integration tests live in `tests/`. The library holds what they share
//! with the fuzz targets of `fuzz/`: the target bodies ([`fuzz`]), how a
//! test runs one of its cases in a memory-limited child process
//! ([`child`]), the allocator that counts a test's bytes ([`counting`]),
//! the panicking closure and sink of the unwinding tests ([`unwind`]),
//! and [`assert_mentions`].

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
