#!/usr/bin/env python3
"""Checks a checkpoint written by several ranks with Python's own readers,
not the library's: every shard that `model.safetensors.index.json` names
is opened with `safetensors.safe_open`, holds exactly the tensors the
index maps to it, and the tensors' bytes add up to the index's
`metadata.total_size` (what transformers' sharded loader relies on).
Not a CI requirement (needs the `safetensors` and `torch` packages).

Usage: check_checkpoint.py DIR [DIR ...]
  e.g. after `mpirun -np 2 target/release/examples/train_ddp`:
  python3 pytree-dist/scripts/check_checkpoint.py target/train_ddp/digits-mlp-2-ranks
"""
import json
import os
import sys

from safetensors import safe_open


def check(folder):
    index = json.load(open(os.path.join(folder, "model.safetensors.index.json")))
    weight_map = index["weight_map"]
    total, count = 0, 0
    for shard in sorted(set(weight_map.values())):
        with safe_open(os.path.join(folder, shard), "pt") as f:
            keys = set(f.keys())
            mapped = {k for k, v in weight_map.items() if v == shard}
            if keys != mapped:
                sys.exit(f"{folder}/{shard}: tensors differ from the index: {sorted(keys ^ mapped)}")
            for k in keys:
                t = f.get_tensor(k)
                total += t.numel() * t.element_size()
                count += 1
    stated = index.get("metadata", {}).get("total_size")
    if stated is not None and stated != total:
        sys.exit(f"{folder}: total_size {stated} in the index, {total} bytes in the shards")
    print(f"ok: {folder}: {len(set(weight_map.values()))} shards, {count} tensors, {total} bytes")


for folder in sys.argv[1:] or sys.exit(__doc__):
    check(folder)
