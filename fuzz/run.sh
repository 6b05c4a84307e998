#!/usr/bin/env bash
# Runs the cargo-fuzz targets of fuzz/ one after the other, one job each,
# for a given time, starting from the seed documents of fuzz/seeds/ (and
# the corpus of earlier runs, in fuzz/corpus/). Each crash, leak, timeout
# or out-of-memory input is copied to fuzz/regressions/<target>/, where
# `cargo test --workspace` runs it through the same body from then on
# (tests/tests/fuzz_bodies.rs); the script then exits with status 1.
#
# Usage: fuzz/run.sh [-s address|none] [-r RUNS] [-t TIMEOUT] SECONDS [TARGET ...]
#   -s  the sanitizer (default: address; `none` runs several times faster)
#   -r  stop a target after RUNS executions (SECONDS still caps it)
#   -t  an input running longer than TIMEOUT seconds is a failure (default
#       20; raise it on a loaded machine, where a run can stall for a minute
#       without the input being slow)
# Targets are built optimized with debug assertions and overflow checks.
# Needs nightly and cargo-fuzz (`cargo install cargo-fuzz`).
set -euo pipefail
cd "$(dirname "$0")"

sanitizer=address
runs_cap=()
timeout=20
while [ $# -gt 0 ]; do
    case $1 in
        -s) sanitizer=$2; shift 2 ;;
        -r) runs_cap=(-runs="$2"); shift 2 ;;
        -t) timeout=$2; shift 2 ;;
        *) break ;;
    esac
done
seconds=${1:?usage: fuzz/run.sh [-s address|none] [-r RUNS] [-t TIMEOUT] SECONDS [TARGET ...]}
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(cargo +nightly fuzz list)

cargo +nightly fuzz build -O -a -s "$sanitizer"

# The targets that write files (shard_index rewrites an index file for
# every input; checkpoint loads save what they load back) write them
# under TMPDIR, and a disk slows them: shard_index from its seeds, 20 s
# runs alternated on the project VM (2026-11-27), made about 8 200
# executions a second with /tmp on its ext4 disk and 19 000 on tmpfs
# (and 361 a second in a smoke run while other builds were writing to
# that disk). Use /dev/shm where it exists and TMPDIR is not set.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
    export TMPDIR=/dev/shm
fi

status=0
summary=()
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t" "artifacts/$t" "regressions/$t"
    cp -n seeds/"$t"/* "corpus/$t/" 2>/dev/null || true
    log="artifacts/$t/last-run.log"
    start=$(date +%s)
    cargo +nightly fuzz run -O -a -s "$sanitizer" "$t" "corpus/$t" -- \
        -max_total_time="$seconds" "${runs_cap[@]}" -timeout="$timeout" -rss_limit_mb=2048 \
        -print_final_stats=1 >"$log" 2>&1 || true
    took=$(($(date +%s) - start))
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    found=0
    for f in artifacts/"$t"/crash-* artifacts/"$t"/leak-* artifacts/"$t"/timeout-* artifacts/"$t"/oom-*; do
        [ -e "$f" ] || continue
        cp "$f" "regressions/$t/"
        rm "$f"
        found=$((found + 1))
    done
    if [ "$found" -gt 0 ] || ! grep -q "^stat::number_of_executed_units" "$log"; then
        status=1
        echo "== $t: $found failing input(s) kept in fuzz/regressions/$t/; log: fuzz/$log" >&2
        grep -E "panicked|ERROR|SUMMARY" "$log" | head -5 >&2 || true
    fi
    summary+=("$(printf "%-16s %8ss %12s %10s %s" "$t" "$took" "${runs:-?}" \
        "$(( ${runs:-0} / (took > 0 ? took : 1) ))/s" \
        "$([ "$found" -eq 0 ] && echo ok || echo "$found found")")")
done
printf "%-16s %9s %12s %10s %s\n" target time executions rate result
printf "%s\n" "${summary[@]}"
exit $status
