#!/usr/bin/env bash
# Runs pytree-core's unit tests under Miri (nightly, `rustup component add
# miri`), which checks the unsafe code they reach against Rust's aliasing
# and provenance rules: TreeDef records (NodeWords) keep a schema
# reference's provenance through copies, Box map_leaves reuses its
# allocation, the builder writes records in place. Extra arguments go to
# `cargo miri test` (e.g. a test name).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/miri"
cargo +nightly miri test -p pytree-core --lib "$@"
