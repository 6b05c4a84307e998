#!/usr/bin/env bash
# Builds benches/cuda (candle-core with its `cuda` feature) on a machine
# without CUDA: CUDA 13.0's compiler and libraries from NVIDIA's pip wheels,
# and a stub libcuda.so (the driver's library, which only a GPU machine
# has) to link against; at run time the GPU machine's own libraries are
# used (run.sh). Takes about 12 minutes on the project's 2-core VM, most of
# it nvcc compiling candle-kernels. Output: benches/cuda/dist/ (the binary
# and the scripts run.sh runs), to copy to the GPU machine.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cuda="${CUDA_WHEELS:-/tmp/cuda-wheels}"
C="$cuda/x/nvidia/cu13"
if [ ! -x "$C/bin/nvcc" ]; then
  mkdir -p "$cuda"
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.11 \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux_2_27_x86_64 --platform manylinux_2_28_x86_64 -d "$cuda" \
    "nvidia-cuda-nvcc==13.0.*" "nvidia-cuda-runtime==13.0.*" "nvidia-cuda-crt==13.0.*" \
    "nvidia-cuda-cccl==13.0.*" "nvidia-nvvm==13.0.*" "nvidia-cuda-nvrtc==13.0.*" \
    "nvidia-cublas==13.*" "nvidia-curand==10.*"
  for w in "$cuda"/*.whl; do unzip -q -o "$w" -d "$cuda/x"; done
  (cd "$C/lib" && for l in cublas cublasLt curand nvrtc cudart; do
     ln -sf "$(ls lib$l.so.* | grep -v alt | head -1)" "lib$l.so"; done)
  ln -sfn lib "$C/lib64"
fi
# The stub: every driver function cudarc declares, empty, in a library
# named as the driver's (soname libcuda.so.1).
cudarc="$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/cudarc-0.19.* | tail -1)"
mkdir -p "$C/stubs"
grep -ohE "^\s+fn cu[A-Za-z0-9_]+\(" "$cudarc/src/driver/sys/mod.rs" \
  | sed -E 's/\s+fn (cu[A-Za-z0-9_]+)\(/void \1(void){}/' | sort -u >"$C/stubs/cuda_stub.c"
gcc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$C/stubs/libcuda.so" "$C/stubs/cuda_stub.c"
export CUDA_HOME="$C" CUDA_PATH="$C" CUDA_ROOT="$C" PATH="$C/bin:$PATH"
export CUDA_COMPUTE_CAP="${CUDA_COMPUTE_CAP:-90}"   # Hopper (H100, H200)
export RUSTFLAGS="-L native=$C/stubs -L native=$C/lib"
cd "$here"
cargo build --release
mkdir -p dist
cp target/release/pytree-cuda-probe dist/
strip dist/pytree-cuda-probe
cp run.sh torch_adamw.py dist/
# The generated kernels' check (issue 37), built without CUDA's compiler,
# in dist/ too (run.sh runs it).
bash codegen/build.sh
cp codegen/dist/pytree-codegen-check dist/
mkdir -p dist/nvrtc && cp codegen/dist/nvrtc/* dist/nvrtc/
