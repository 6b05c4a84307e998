//! Fuzz target `any_array`: see `pytree_tests::fuzz::any_array` for what it feeds and
//! the laws it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pytree_tests::fuzz::any_array(data));
