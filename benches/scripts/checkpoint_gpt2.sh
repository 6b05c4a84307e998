#!/usr/bin/env bash
# Issue 10's checkpoint figures: save and load of GPT-2 small's parameters
# (148 f32 arrays, 124,439,808 parameters, 497.8 MB) as .safetensors, in one
# session:
#   1. the criterion bench `checkpoint_gpt2` (crate pytree-benches):
#      pytree_std::checkpoint save, load (by type), load_like, load_into
#      (and the last two through a memory map, Load::open_mapped), and the
#      floors (memcpy of the data, fs::read, fs::write);
#   2. benches/python/checkpoint_gpt2.py: Python's safetensors (numpy)
#      load_file of the same file, save_file, and the same floors;
# both pinned to CPU 1, files in $CKPT_DIR (default /dev/shm: memory, not
# disk). Then prints the table of BENCHMARKS.md ("Checkpoints"). Not part
# of CI (about 2 minutes; needs 3 GiB of memory).
#
# Environment:
#   CARGO_TARGET_DIR  where cargo builds (criterion writes under it);
#   CKPT_VENV         the venv for numpy/safetensors (default
#                     $CARGO_TARGET_DIR/ckpt-venv, created on first use from
#                     benches/python/checkpoint_requirements.txt);
#   CKPT_DIR          where the files go (default /dev/shm);
#   OUT               where the run's files go (default $CARGO_TARGET_DIR/checkpoint_gpt2).
. "$(dirname "$0")/common.sh"
venv="${CKPT_VENV:-$target/ckpt-venv}"
out="${OUT:-$target/checkpoint_gpt2}"
ckpt_dir="$(ckpt_dir)"
export CKPT_DIR="$ckpt_dir"
mkdir -p "$out"
ensure_venv "$venv" "$repo/benches/python/checkpoint_requirements.txt"

log "building the bench"
(cd "$repo" && cargo bench -q -p pytree-benches --bench checkpoint_gpt2 --no-run)
rm -rf "$target/criterion/checkpoint_gpt2"
log "load before Rust: $(loadavg)"
(cd "$repo" && "${pin[@]}" cargo bench -q -p pytree-benches --bench checkpoint_gpt2) > "$out/criterion.log" 2>&1
log "load after Rust: $(loadavg)"
"${pin[@]}" "$venv/bin/python" "$repo/benches/python/checkpoint_gpt2.py" "$ckpt_dir/pytree-gpt2.safetensors" > "$out/python.json"
log "load after Python: $(loadavg)"
rm -f "$ckpt_dir/pytree-gpt2.safetensors"

{
    run_header "$venv/bin/python" "commit $(git -C "$repo" rev-parse --short HEAD)" "files in $ckpt_dir"
    echo
    python3 - "$target/criterion/checkpoint_gpt2" "$out/python.json" <<'PY'
import json, os, sys
crit, py = sys.argv[1], json.load(open(sys.argv[2]))
mb = py["data_bytes"] / 1e6
def rust(name):
    with open(os.path.join(crit, name, "new", "estimates.json")) as f:
        return json.load(f)["median"]["point_estimate"] / 1e6
def cell(ms):
    return f"{ms:.0f} ms ({mb / ms:.2f} GB/s)"
rows = [
    ("save", rust("save"), py["save"]["median_ms"], "`checkpoint::save` / `save_file`"),
    ("load (new arrays)", rust("load"), py["load_rust_file"]["median_ms"], "`checkpoint::load::<Gpt2>` (by type) / `load_file`, same file"),
    ("load against a template", rust("load_like"), py["load_rust_file"]["median_ms"], "`Checkpoint::load_like` / `load_file`"),
    ("load into the existing arrays", rust("load_into"), None, "`Checkpoint::load_into` (no allocation) / no numpy equivalent"),
    ("load against a template, memory-mapped", rust("load_like_mapped"), None, "`Load::open_mapped` then `load_like` (every load's path before issue 29)"),
    ("load into the existing arrays, memory-mapped", rust("load_into_mapped"), None, "`Load::open_mapped` then `load_into`"),
    ("load Python's own file", None, py["load_python_file"]["median_ms"], "`load_file` of the file `save_file` wrote"),
    ("floor: copy the data in memory", rust("floor_memcpy"), py["floor_copyto"]["median_ms"], "`copy_from_slice` / `np.copyto`, 497.8 MB"),
    ("floor: read the file", rust("floor_fs_read"), py["floor_read"]["median_ms"], "`std::fs::read` / `f.read()` (new buffer)"),
    ("floor: read the file into a buffer", rust("floor_fs_read_into"), py["floor_readinto"]["median_ms"], "`File::read_exact` / `f.readinto` (preallocated)"),
    ("floor: write the bytes", rust("floor_fs_write"), py["floor_write"]["median_ms"], "`std::fs::write` / `f.write`"),
]
print("| operation | pytree (Rust) | Python safetensors (numpy) | Python / Rust | calls |")
print("|---|---:|---:|---:|---|")
for name, r, p, calls in rows:
    ratio = f"{p / r:.2f}x" if r and p else "–"
    print(f"| {name} | {cell(r) if r else '–'} | {cell(p) if p else '–'} | {ratio} | {calls} |")
floor_copy = rust("floor_memcpy")
print()
print(f"Against the memcpy floor ({floor_copy:.0f} ms): Rust save {rust('save') / floor_copy:.2f}x, "
      f"load {rust('load') / floor_copy:.2f}x, load_into {rust('load_into') / floor_copy:.2f}x; "
      f"Python save {py['save']['median_ms'] / py['floor_copyto']['median_ms']:.2f}x, "
      f"load {py['load_rust_file']['median_ms'] / py['floor_copyto']['median_ms']:.2f}x of numpy's copyto.")
print(f"numpy {py['numpy']}, safetensors {py['safetensors']}.")
PY
} | tee "$out/table.md"
