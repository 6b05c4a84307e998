#!/usr/bin/env bash
# Builds the GPU check of issue 37 (the generated kernels) on a machine
# without CUDA: no CUDA compiler is needed (cudarc loads libcuda and
# libnvrtc at run time), so this is a plain release build: 17 minutes
# from clean on the project's 2-core VM, shared with other builds. NVRTC
# 13.0 comes from NVIDIA's nvidia-cuda-nvrtc wheel (pip, into a folder)
# and travels in dist/nvrtc, in case the GPU machine lacks it. Output: benches/cuda/codegen/dist/, to
# copy to the GPU machine and run there with dist/run.sh.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
nvrtc="${PYTREE_NVRTC_DIR:-$HOME/.cache/pytree-ci/nvrtc-13.0}"
if [ ! -e "$nvrtc/nvidia/cu13/lib/libnvrtc.so.13" ]; then
  python3 -m pip install -q --disable-pip-version-check --no-deps --root-user-action=ignore \
    --target "$nvrtc" "nvidia-cuda-nvrtc==13.0.*"
fi
cd "$here"
cargo build --release
mkdir -p dist/nvrtc
cp target/release/pytree-codegen-check dist/
strip dist/pytree-codegen-check
cp "$nvrtc"/nvidia/cu13/lib/libnvrtc.so.13 "$nvrtc"/nvidia/cu13/lib/libnvrtc-builtins.so.13.0 dist/nvrtc/
cp run.sh ../torch_adamw.py dist/
