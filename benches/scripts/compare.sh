#!/usr/bin/env bash
# Runs the Rust benchmarks (crate pytree-benches) and the Python anchor
# script (benches/anchors/bench_anchors.py: optree, jax.tree_util, dm-tree)
# one after the other, then prints one table: per tree and operation, ns per
# leaf of pytree, of the hand-written Rust, of each Python library, and the
# ratios; then the issue's speed targets marked met or missed. Not part of
# CI (it takes about 5 minutes and installs Python packages).
#
# Usage: benches/scripts/compare.sh [--quick]
#   --quick   shorter runs (criterion 0.3 s warm-up + 1 s, Python
#             --target 0.01 --rounds 7), for a first look.
# Environment:
#   CARGO_TARGET_DIR  where cargo builds (criterion writes under it);
#   ANCHORS           the anchors folder (default: benches/anchors);
#   ANCHORS_VENV      the venv for the Python libraries (default:
#                     $CARGO_TARGET_DIR/anchors-venv; created on first use,
#                     with the versions of the anchors' requirements-lock.txt);
#   OUT               where the run's files go (default: $CARGO_TARGET_DIR/compare).
# Both runs are pinned to CPU 1 with taskset when it is available, as the
# anchors were; the load average before and after is printed: other builds
# on the machine move every figure.
. "$(dirname "$0")/common.sh"
anchors="${ANCHORS:-$repo/benches/anchors}"
venv="${ANCHORS_VENV:-$target/anchors-venv}"
out="${OUT:-$target/compare}"
mkdir -p "$out"

crit_args=(--warm-up-time 0.5 --measurement-time 2)
py_args=(--target 0.02 --rounds 9)
if [ "${1:-}" = "--quick" ]; then
    crit_args=(--warm-up-time 0.3 --measurement-time 1)
    py_args=(--target 0.01 --rounds 7)
fi

# 1. Python libraries, in a venv of their own.
ensure_venv "$venv" "$anchors/requirements-lock.txt" --upgrade-pip

# 2. Rust: build first (not timed), then run with fresh criterion results.
log "building the benches"
(cd "$repo" && cargo bench -q -p pytree-benches --bench anchors --no-run)
cargo run -q --release --manifest-path "$repo/Cargo.toml" -p pytree-benches \
    --example treedef_stats > "$out/treedef_stats.md"
rm -rf "$target/criterion"
log "load before: $(loadavg)"
log "running the Rust benches (about 3 minutes)"
(cd "$repo" && "${pin[@]}" cargo bench -q -p pytree-benches --bench anchors -- \
    "${crit_args[@]}") > "$out/criterion.log" 2>&1
log "load after Rust: $(loadavg)"

# 3. Python anchors, same machine, same session.
log "running the Python anchors (about 1-2 minutes)"
JAX_PLATFORMS=cpu "${pin[@]}" "$venv/bin/python" "$anchors/bench_anchors.py" \
    "${py_args[@]}" > "$out/anchors.tsv" 2> "$out/anchors.log"
log "load after Python: $(loadavg)"

# 4. One table.
{
    run_header "$venv/bin/python"
    echo
    python3 "$repo/benches/scripts/compare.py" "$target/criterion" "$out/anchors.tsv"
    echo
    echo "TreeDef sizes:"
    echo
    cat "$out/treedef_stats.md"
} | tee "$out/table.md"
log "written to $out/table.md"
