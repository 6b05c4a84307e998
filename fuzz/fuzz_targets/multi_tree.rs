//! Fuzz target `multi_tree`: see `pytree_tests::fuzz::multi_tree` for what it feeds and
//! the laws it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pytree_tests::fuzz::multi_tree(data));
