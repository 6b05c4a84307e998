#!/usr/bin/env bash
# Issue 10's Adam figures: one Adam step over GPT-2 small's parameter shapes
# (148 f32 arrays, 124,439,808 parameters), in one session:
#   1. the criterion bench `adam_gpt2` (crate pytree-benches): pytree-optim's
#      adam on one thread and with rayon, the hand-written fused loop, the
#      optax-style update + apply_updates, pytree-std's par_zip_mut_n, and a
#      STREAM-style triad for the memory-bandwidth floor;
#   2. benches/anchors/adam_gpt2.py (optax.adam under jax.jit, numpy) pinned to
#      one core, then on every core;
#   3. benches/python/adam_torch.py (torch.optim.Adam(fused=True) on the CPU,
#      torch.set_num_threads 1 and every core), when torch is in the venv;
# then prints the table of BENCHMARKS.md ("Optimizers"). Not part of CI
# (about 4 minutes; needs 4 GiB of memory and installs jax and optax).
# On a machine shared with other work, the absolute times follow how much
# of each core the run gets: compare only figures of one run.
#
# Environment:
#   CARGO_TARGET_DIR  where cargo builds (criterion writes under it);
#   OPTIM_VENV        the venv for jax/optax (default $CARGO_TARGET_DIR/optim-venv,
#                     created on first use from benches/python/requirements.txt);
#   OUT               where the run's files go (default $CARGO_TARGET_DIR/adam_gpt2).
. "$(dirname "$0")/common.sh"
venv="${OPTIM_VENV:-$target/optim-venv}"
out="${OUT:-$target/adam_gpt2}"
mkdir -p "$out"
ensure_venv "$venv" "$repo/benches/python/requirements.txt" --upgrade-pip

log "building the bench"
(cd "$repo" && cargo bench -q -p pytree-benches --bench adam_gpt2 --no-run)
rm -rf "$target/criterion/adam_gpt2"
log "load before Rust: $(loadavg)"
(cd "$repo" && cargo bench -q -p pytree-benches --bench adam_gpt2) > "$out/criterion.log" 2>&1
log "load after Rust: $(loadavg)"

JAX_PLATFORMS=cpu "${pin[@]}" "$venv/bin/python" "$repo/benches/anchors/adam_gpt2.py" > "$out/python_1core.json"
log "load after Python (1 core): $(loadavg)"
JAX_PLATFORMS=cpu "$venv/bin/python" "$repo/benches/anchors/adam_gpt2.py" > "$out/python_all.json"
log "load after Python (all cores): $(loadavg)"
# torch's fused CPU Adam (issue 19), if torch is in the venv: it is not in
# requirements.txt (the PyPI wheel pulls several GB of CUDA libraries,
# which its import needs even on the CPU): `pip install torch` there first.
torch_json=()
if "$venv/bin/python" -c 'import torch' 2>/dev/null; then
    "$venv/bin/python" "$repo/benches/python/adam_torch.py" 1 "$(nproc)" > "$out/python_torch.json"
    torch_json=("$out/python_torch.json")
    log "load after torch: $(loadavg)"
else
    log "no torch in $venv: the torch rows are left out"
fi

{
    run_header "$venv/bin/python" "commit $(git -C "$repo" rev-parse --short HEAD)"
    echo
    python3 "$repo/benches/scripts/adam_gpt2_table.py" "$target/criterion/adam_gpt2" "$out/python_1core.json" "$out/python_all.json" "${torch_json[@]}"
} | tee "$out/table.md"
