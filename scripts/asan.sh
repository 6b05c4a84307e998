#!/usr/bin/env bash
# Runs the test suite (unit, integration and doc tests; not the trybuild
# compile-fail tests, which only compile) under AddressSanitizer, with
# nightly's `-Zsanitizer=address`. ASan runs with its default options;
# LeakSanitizer too, except for the leaks that are the design, listed with
# their reason in scripts/lsan.supp (a panic inside `map` of a map leaks
# the map instead of risking a double drop). Extra arguments go to
# `cargo test` (e.g. `scripts/asan.sh --test deep_trees`).
#
# Built for the host target explicitly, so that the flags apply to the
# tested code and not to proc-macros and build scripts (an instrumented
# proc-macro cannot be loaded by rustc).
set -euo pipefail
cd "$(dirname "$0")/.."

host=$(rustc +nightly -vV | sed -n 's/^host: //p')
export RUSTFLAGS="-Zsanitizer=address ${RUSTFLAGS:-}"
export RUSTDOCFLAGS="-Zsanitizer=address ${RUSTDOCFLAGS:-}"
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/asan"

cargo +nightly test --workspace --exclude pytree-ui-tests --target "$host" "$@"
