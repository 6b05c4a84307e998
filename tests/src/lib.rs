//! Integration tests live in `tests/`. The library holds what they share
//! with the fuzz targets of `fuzz/`: the target bodies ([`fuzz`]), how a
//! test runs one of its cases in a memory-limited child process
//! ([`child`]), the allocator that counts a test's bytes ([`counting`]),
//! and the panicking closure and sink of the unwinding tests
//! ([`unwind`]).

pub mod child;
pub mod counting;
pub mod fuzz;
pub mod unwind;
