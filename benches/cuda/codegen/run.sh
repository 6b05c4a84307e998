#!/bin/bash
# On the GPU machine, in the folder build.sh filled (dist/): the generated
# kernels against the CPU, bit for bit, and their timings (codegen.txt),
# then torch's AdamW on the same shapes, same machine (torch.txt); results
# also under $OUT if set. Exits 1 if a check failed.
set -o pipefail
cd "$(dirname "$0")"
out="${OUT:-.}"
nvidia-smi -L
libs=$(find /usr/local /usr/lib /opt /lib -maxdepth 8 -name 'libcuda.so.1' 2>/dev/null | xargs -r -n1 dirname | sort -u | paste -sd:)
# The machine's own NVRTC first where it has one, else the copy in nvrtc/.
export LD_LIBRARY_PATH=$libs:$LD_LIBRARY_PATH:$PWD/nvrtc
echo "== codegen"; timeout 400 ./pytree-codegen-check 2>&1 | tee "$out/codegen.txt"; status=$?
echo "== torch"; PYTHONUNBUFFERED=1 timeout 120 python3 torch_adamw.py 2>&1 | tee "$out/torch.txt"
exit $status
