"""Anchor for issue 19: torch's fused CPU Adam, one step over GPT-2 small's
parameter shapes (148 f32 tensors, 124,439,808 parameters; the shapes of
benches/anchors/adam_gpt2.py), as a torch user would run it:
torch.optim.Adam(params, lr=1e-3, fused=True) on the CPU, gradients set
once, torch.set_num_threads(n) for each n given (default: 1 and 2).
Prints a JSON object: torch's version, its CPU capability (the vector ISA
its kernels dispatched to) and, per thread count, the median, min and max
of ROUNDS (default 9) timed steps after two warm-up steps, in ms.

Run (the venv of benches/scripts/adam_gpt2.sh, with torch from PyPI):
    $OPTIM_VENV/bin/python benches/python/adam_torch.py 1 2 > torch.json
"""
import json
import os
import statistics
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "anchors"))
from adam_gpt2 import shapes  # noqa: E402


def main():
    threads = [int(a) for a in sys.argv[1:]] or [1, 2]
    rounds = int(os.environ.get("ROUNDS", "9"))
    sh = shapes()
    n = sum(int(np.prod(s)) for _, s in sh)
    rng = np.random.default_rng(0)
    params = []
    # Copied into memory of torch's own allocator (`clone`), as a model's
    # parameters are: numpy's buffers would be on transparent huge pages
    # (numpy asks for them on large arrays; torch and Rust's allocator do
    # not unless told), which alone makes a memory-bound step faster. Set
    # HUGEPAGES=numpy to keep numpy's buffers (the comparison of the two).
    keep = os.environ.get("HUGEPAGES") == "numpy"
    for _, s in sh:
        p = torch.from_numpy(rng.standard_normal(s, dtype=np.float32) * 0.02)
        g = torch.from_numpy(rng.standard_normal(s, dtype=np.float32) * 1e-3)
        if not keep:
            p, g = p.clone(), g.clone()
        p.requires_grad_(True)
        p.grad = g
        params.append(p)
    res = {"tensors": len(sh), "parameters": n, "torch": torch.__version__,
           "cpu_capability": torch.backends.cpu.get_cpu_capability(),
           "buffers": "numpy (huge pages)" if keep else "torch", "threads": {}}
    for t in threads:
        torch.set_num_threads(t)
        opt = torch.optim.Adam(params, lr=1e-3, fused=True)
        with torch.no_grad():
            opt.step(); opt.step()
            ts = []
            for _ in range(rounds):
                t0 = time.perf_counter(); opt.step(); ts.append((time.perf_counter() - t0) * 1e3)
        res["threads"][str(t)] = {"median_ms": statistics.median(ts), "min_ms": min(ts), "max_ms": max(ts)}
        del opt
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
