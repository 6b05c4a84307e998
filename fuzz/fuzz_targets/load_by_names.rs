//! Fuzz target `load_by_names`: see `pytree_tests::fuzz::by_names` for what it feeds and
//! the laws it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pytree_tests::fuzz::load_by_names(data));
