//! Fuzz target `shard_index`: see `pytree_tests::fuzz::shards` for what it feeds and
//! the laws it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pytree_tests::fuzz::shard_index(data));
