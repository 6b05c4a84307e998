//! Fuzz target `mutated_treedef`: see `pytree_tests::fuzz::mutated_treedef` for what it feeds and
//! the laws it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pytree_tests::fuzz::mutated_treedef(data));
