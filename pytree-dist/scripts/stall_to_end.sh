#!/usr/bin/env bash
# The time from a rank's stall to the job's end, against the timeout set
# (issue 38; BENCHMARKS.md). Runs the multi-process tests' stall scenarios
# (rank 1 sleeps, is stopped, is stopped inside an in-place bucket, or
# leaves `run` at step 3; it prints the moment) under `mpirun -np N` with
# PYTREE_DIST_TIMEOUT=T, and prints the seconds from the stall to
# mpirun's exit.
#
#   pytree-dist/scripts/stall_to_end.sh [TIMEOUTS] [RANKS]
#   pytree-dist/scripts/stall_to_end.sh "1 3 10" "2 3"
set -euo pipefail
timeouts=${1:-"1 3 10"}
ranks=${2:-"2 3"}
cd "$(dirname "$0")/../.."
cargo build -q -p pytree-dist --features mpi --test mpi
exe=$(cargo test -q -p pytree-dist --features mpi --test mpi --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "mpi" and m.get("executable"):
        print(m["executable"])')
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
echo "# $(date -u '+%F %H:%M') UTC, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| scenario | ranks | timeout s | stall to end s | exit |"
echo "| --- | ---: | ---: | ---: | ---: |"
for t in $timeouts; do
    for n in $ranks; do
        for s in stall_sleep stall_stop stall_in_place stall_leave; do
            out=$(PYTREE_DIST_TIMEOUT=$t timeout 120 mpirun -np "$n" "$exe" --scenario "$s" 2>&1) && rc=0 || rc=$?
            end=$(date +%s%3N)
            start=$(grep -o 'stalled at unix ms [0-9]*' <<<"$out" | grep -o '[0-9]*$' | head -1)
            echo "| $s | $n | $t | $(python3 -c "print(f'{($end - ${start:-$end}) / 1000:.2f}')") | $rc |"
        done
    done
done
echo "# load $(cut -d' ' -f1-3 /proc/loadavg)"
