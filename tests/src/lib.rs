//! Integration tests live in `tests/`. The library holds what they share
//! with the fuzz targets of `fuzz/`: the target bodies ([`fuzz`]), and
//! how a test runs one of its cases in a memory-limited child process
//! ([`child`]).

pub mod child;
pub mod fuzz;
