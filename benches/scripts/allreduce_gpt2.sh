#!/usr/bin/env bash
# Issue 26's all-reduce figures beside torch's, in one sitting: GPT-2
# small's gradients (148 f32 tensors, 124,439,808 elements, 498 MB per
# rank) all-reduced by 2 processes on this machine,
#   torch: benches/anchors/allreduce_gpt2_torch.py (torch.distributed,
#          gloo: one all_reduce per tensor, DDP-sized 25 MiB buckets packed
#          and unpacked, one flat buffer, and real DDP's cost after its
#          overlap with backward);
#   ours:  target/release/examples/allreduce_gpt2 under mpirun -np 2
#          (the all-reduce figures only: the raw flat all_reduce_into, the
#          tree's all_reduce_sum / all_reduce_mean, the packed path);
# alternately, torch first and last (T O T O ... T), so that each of our
# runs has a torch run right before and right after it; the load average
# is read before and after each. Prints a Markdown table (BENCHMARKS.md,
# "Data-parallel collectives over MPI"). Not part of CI (about 1 minute a
# run; 2 GiB of memory per process).
#
# Usage: benches/scripts/allreduce_gpt2.sh [PAIRS=3] [ROUNDS=5]
# Environment:
#   TORCH_PYTHON      the Python with torch (default python3);
#   CARGO_TARGET_DIR  where cargo builds;
#   OUT               where the runs' JSON lines go (default
#                     $CARGO_TARGET_DIR/allreduce_gpt2).
. "$(dirname "$0")/common.sh"
python="${TORCH_PYTHON:-python3}"
pairs="${1:-3}"
rounds="${2:-5}"
out="${OUT:-$target/allreduce_gpt2}"
mkdir -p "$out"
runs="$out/runs.jsonl"
: >"$runs"
# mpirun as root, and more ranks than cores if need be.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

log "building the example"
(cd "$repo" && cargo build -q --release -p pytree-benches --features mpi --example allreduce_gpt2)

load() { cut -d' ' -f1 /proc/loadavg; }
# One run: its side, number, clock, load before and after, and the JSON
# line the program printed.
record() {
    local side="$1" n="$2"
    shift 2
    local at before result after
    at="$(date -u +%H:%M:%S)"
    before="$(load)"
    log "$side run $n at $at (load $before): $*"
    result="$("$@" | grep '^{' | tail -n 1)"
    after="$(load)"
    echo "{\"side\": \"$side\", \"run\": $n, \"at\": \"$at\", \"load_before\": $before, \"load_after\": $after, \"result\": $result}" >>"$runs"
}
torch() { record torch "$1" "$python" "$repo/benches/anchors/allreduce_gpt2_torch.py" 2 "$rounds"; }
ours() { record pytree-dist "$1" mpirun -np 2 "$target/release/examples/allreduce_gpt2" "$rounds" allreduce; }

for i in $(seq 1 "$pairs"); do
    torch "$i"
    ours "$i"
done
torch "$((pairs + 1))"
log "runs in $runs"

python3 - "$runs" <<'PY'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
print("| run (UTC, load before/after) | side | figures (ms, medians of rounds) |")
print("| --- | --- | --- |")
for r in runs:
    x, when = r["result"], f'{r["at"]}, {r["load_before"]}/{r["load_after"]}'
    if r["side"] == "torch":
        fig = (f'per tensor {x["per_tensor_ms"]}, 25 MiB buckets {x["buckets_ms"]}, '
               f'flat {x["flat_ms"]}, DDP cost {x["ddp_comm_ms"]}')
    else:
        fig = (f'raw flat {x["flat_ms"]}, tree sum {x["tree_sum_ms"]} ({x["tree_sum_over_flat"]}x), '
               f'tree mean {x["tree_mean_ms"]} ({x["tree_mean_over_flat"]}x; '
               f'{x["tree_mean_over_flat_mean"]}x of raw flat + division), '
               f'packed mean {x["packed_mean_ms"]} ({x["packed_mean_over_flat"]}x)')
    print(f'| {when} | {r["side"]} | {fig} |')
print()
print("Our mean against the torch runs right before and after it (ratio < 1: ours faster):")
print()
print("| our run | tree mean ms | / torch buckets (before, after) | / torch DDP cost (before, after) | / torch flat (before, after) |")
print("| --- | ---: | --- | --- | --- |")
for i, r in enumerate(runs):
    if r["side"] == "torch":
        continue
    b, a = runs[i - 1]["result"], runs[i + 1]["result"]
    t = r["result"]["tree_mean_ms"]
    cell = lambda k: f'{t / b[k]:.2f}, {t / a[k]:.2f}'
    print(f'| {r["run"]} ({r["at"]}) | {t} | {cell("buckets_ms")} | {cell("ddp_comm_ms")} | {cell("flat_ms")} |')
PY
