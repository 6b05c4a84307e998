#!/bin/bash
# On the GPU machine, in the folder build.sh filled (dist/): the probe
# (GPU against CPU, against candle-nn, speed), torch's AdamW on the same
# shapes, the generated kernels of issue 37 (codegen/README.md), and the
# CPU thread scaling; results also under $OUT if set.
set -o pipefail
cd "$(dirname "$0")"
out="${OUT:-.}"
nvidia-smi -L; nproc
libs=$(find /usr/local /usr/lib /opt /lib -maxdepth 8 \( -name 'libcuda.so.1' -o -name 'libcublas.so.13' -o -name 'libcublasLt.so.13' -o -name 'libcurand.so.10' -o -name 'libcudart.so.13' \) 2>/dev/null | xargs -r -n1 dirname | sort -u | paste -sd:)
export LD_LIBRARY_PATH=$libs:$LD_LIBRARY_PATH
echo "== gpu"; timeout 300 ./pytree-cuda-probe 2>&1 | tee "$out/gpu.txt"
echo "== torch"; PYTHONUNBUFFERED=1 timeout 120 python3 torch_adamw.py 2>&1 | tee "$out/torch.txt"
echo "== codegen"; LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$PWD/nvrtc timeout 400 ./pytree-codegen-check 2>&1 | tee "$out/codegen.txt"
echo "== cpu"; timeout 150 ./pytree-cuda-probe --cpu 2>&1 | tee "$out/cpu.txt"
