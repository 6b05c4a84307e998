"""Issue 18's figures, the Python side: the files benches/benches/checkpoint_hf.rs
wrote (a single ~100 MB file, and GPT-2 small in two shards plus
model.safetensors.index.json), loaded with the `safetensors` package's numpy
API as a Python user does: `load_file` of the file, and for the shards
`load_file` of each shard the index names, merged into one dict.

Usage: checkpoint_hf.py DIR   (DIR = $CKPT_DIR/pytree-hf-bench; prints JSON; ROUNDS=7)
"""
import json
import os
import statistics
import sys

import numpy as np
import safetensors
from safetensors.numpy import load_file

from checkpoint_gpt2 import times_ms


def median_ms(fn, rounds):
    return {"median_ms": statistics.median(times_ms(fn, rounds)), "rounds": rounds}


def load_sharded(index_path):
    with open(index_path) as f:
        index = json.load(f)
    out = {}
    for file in sorted(set(index["weight_map"].values())):
        out.update(load_file(os.path.join(os.path.dirname(index_path), file)))
    return out


def main(d):
    rounds = int(os.environ.get("ROUNDS", "7"))
    single = os.path.join(d, "single.safetensors")
    index = os.path.join(d, "sharded", "model.safetensors.index.json")
    n_single = sum(t.nbytes for t in load_file(single).values())
    n_sharded = sum(t.nbytes for t in load_sharded(index).values())
    print(json.dumps({
        "single": median_ms(lambda: load_file(single), rounds),
        "sharded": median_ms(lambda: load_sharded(index), rounds),
        "single_bytes": n_single,
        "sharded_bytes": n_sharded,
        "numpy": np.__version__,
        "safetensors": safetensors.__version__,
    }, indent=1))


if __name__ == "__main__":
    main(sys.argv[1])
