#!/usr/bin/env bash
# Runs pytree-core's unit tests, then integration tests that reach the
# library's unsafe code, under Miri (nightly, `rustup component add miri`),
# which checks it against Rust's aliasing and provenance rules: TreeDef
# records (NodeWords) keep a schema reference's provenance through copies,
# Box map_leaves reuses its allocation, maps are mapped in place under
# ManuallyDrop, the builder writes records in place. The integration tests
# run with Miri's leak check off: tests/map_in_place.rs leaks on purpose
# (a panic inside `map` of a map leaks it), and leaks are LeakSanitizer's
# job (scripts/asan.sh). Tests too slow for Miri (deep trees, timings)
# or that spawn processes (insta snapshots) are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/miri"
cargo +nightly miri test -p pytree-core --lib
MIRIFLAGS="-Zmiri-ignore-leaks ${MIRIFLAGS:-}" cargo +nightly miri test -p pytree-tests \
    --test map_in_place --test treedef --test untrusted --test unflatten_trusted --test partition \
    -- --skip every_reader --skip linear_time --skip a_deep --skip printed
