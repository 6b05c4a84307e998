//! Integration tests live in `tests/`. The library holds what they share
//! with the fuzz targets of `fuzz/`: the target bodies ([`fuzz`]).

pub mod fuzz;
