"""Issue 10's checkpoint figures, the Python side: GPT-2 small's parameters
(148 float32 arrays, 124,439,808 parameters; the shapes of
benches/anchors/adam_gpt2.py) saved and loaded with the
`safetensors` package's numpy API, as a Python user does:

- load: `safetensors.numpy.load_file(path)` of the file the Rust bench
  wrote (the same file pytree_std::checkpoint loads), and of Python's own;
- save: `safetensors.numpy.save_file(tensors, path)`;
- floors: `np.copyto` of the data's bytes, reading the file into memory
  (`f.readinto` of a preallocated buffer and `f.read()`), writing the bytes.

Usage: checkpoint_gpt2.py RUST_FILE [DIR]   (prints JSON; ROUNDS=7 by default)
"""
import json
import os
import statistics
import sys
import time

import numpy as np
import safetensors
from safetensors.numpy import load_file, save_file


sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "anchors"))
from adam_gpt2 import shapes  # noqa: E402


def times_ms(fn, rounds):
    """The times of `rounds` calls of `fn` after one warm-up call, in ms."""
    fn()
    ts = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t) * 1e3)
    return ts


def median_ms(fn, rounds):
    ts = times_ms(fn, rounds)
    return {"median_ms": statistics.median(ts), "min_ms": min(ts), "max_ms": max(ts)}


def main():
    rust_file = sys.argv[1]
    folder = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(rust_file)
    rounds = int(os.environ.get("ROUNDS", "7"))
    sh = shapes()
    n = sum(int(np.prod(s)) for _, s in sh)
    rng = np.random.default_rng(0)
    tensors = {k: (rng.random(s, dtype=np.float32) - 0.5) * 0.04 for k, s in sh}
    py_file = os.path.join(folder, "python-gpt2.safetensors")
    raw = os.path.join(folder, "python-gpt2-raw.bin")
    res = {"tensors": len(sh), "parameters": n, "data_bytes": 4 * n,
           "numpy": np.__version__, "safetensors": safetensors.__version__}

    # The Rust file: the same names and shapes.
    loaded = load_file(rust_file)
    assert sorted(loaded) == sorted(tensors), "the Rust file has other names"
    assert all(loaded[k].shape == s and loaded[k].dtype == np.float32 for k, s in sh)
    del loaded

    res["save"] = median_ms(lambda: save_file(tensors, py_file), rounds)
    res["load_rust_file"] = median_ms(lambda: load_file(rust_file), rounds)
    res["load_python_file"] = median_ms(lambda: load_file(py_file), rounds)

    data = np.concatenate([t.reshape(-1) for t in tensors.values()]).view(np.uint8)
    dst = np.ones_like(data)
    res["floor_copyto"] = median_ms(lambda: np.copyto(dst, data), rounds)
    size = os.path.getsize(rust_file)
    buf = bytearray(size)

    def readinto():
        with open(rust_file, "rb", buffering=0) as f:
            f.readinto(buf)

    def read():
        with open(rust_file, "rb") as f:
            return f.read()

    def write():
        with open(raw, "wb") as f:
            f.write(data)

    res["floor_readinto"] = median_ms(readinto, rounds)
    res["floor_read"] = median_ms(read, rounds)
    res["floor_write"] = median_ms(write, rounds)
    for p in (py_file, raw):
        os.remove(p)
    json.dump(res, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
