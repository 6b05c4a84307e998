#!/usr/bin/env python3
"""Prints one table from a criterion run of `pytree-benches` and the TSV of
`benches/anchors/bench_anchors.py`, then the issue's speed targets, each
marked met or missed with its figure.

Usage: compare.py CRITERION_DIR [ANCHORS_TSV]

Rust figures are criterion's median estimates
(`CRITERION_DIR/<tree>/<op>/<pytree|hand>/new/estimates.json`), divided by
the tree's leaf count; Python figures are the script's `ns_per_leaf`
(median over its rounds). Ratios:
- `vs hand`: pytree / hand-written (lower is better; 1.00 = free);
- `vs best py`: fastest of optree / jax / dm-tree divided by pytree (how
  many times faster pytree is);
- `floor vs best py`: the same for the hand-written version. Where it is
  below 50x too, the 50x target is out of reach for any library that
  produces that Rust type (the hand-written code does only the work the
  type forces); the targets section lists those cells apart.
"""
import csv
import json
import os
import sys

# Leaf counts of the trees (shapes.rs; the Python script prints the same).
TREES = {
    "T1_transformer": 771,
    "T2_wide": 100_000,
    "T3_deep": 501,
    "T4_dict10k": 10_000,
    "T4_hashmap10k": 10_000,
    "T5_small": 4,
}
# The Python script's tree for each Rust tree.
PY_TREE = {"T4_hashmap10k": "T4_dict10k"}
OPS = ["flatten", "unflatten", "map", "map2", "sgd", "leaves", "struct_eq",
       "flatten_with_path"]
# Rust op -> Python op ("sgd" has no Python counterpart: JAX updates by map2).
PY_OP = {"sgd": "map2"}
PY_LIBS = ["optree", "jax.tree_util", "dm-tree"]
T1_NODES = 1303


def rust_ns(crit, tree, op, impl):
    """Median ns per call, or None if the bench did not run."""
    path = os.path.join(crit, tree, op, impl, "new", "estimates.json")
    try:
        with open(path) as fh:
            return json.load(fh)["median"]["point_estimate"]
    except FileNotFoundError:
        return None


def python_ns_per_leaf(tsv):
    """{(library, tree, op): ns per leaf}."""
    out = {}
    if not tsv:
        return out
    with open(tsv) as fh:
        for row in csv.DictReader(
                (line for line in fh if not line.startswith("#")),
                delimiter="\t"):
            out[(row["library"], row["tree"], row["op"])] = float(row["ns_per_leaf"])
    return out


def fmt(x, digits=2):
    if x is None:
        return "–"
    if x >= 100:
        return "%.0f" % x
    if x >= 10:
        return "%.1f" % x
    if x >= 0.01:
        return "%.*f" % (digits, x)
    return "%.4f" % x


def main():
    crit = sys.argv[1]
    py = python_ns_per_leaf(sys.argv[2] if len(sys.argv) > 2 else "")
    rows = []
    print("| tree | op | pytree ns/leaf | hand ns/leaf | optree ns/leaf "
          "| jax ns/leaf | dm-tree ns/leaf | pytree vs hand | best py / pytree "
          "| floor vs best py |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for tree, n in TREES.items():
        for op in OPS:
            lib = rust_ns(crit, tree, op, "pytree")
            if lib is None:
                continue
            hand = rust_ns(crit, tree, op, "hand")
            pt, po = PY_TREE.get(tree, tree), PY_OP.get(op, op)
            pys = {name: py.get((name, pt, po)) for name in PY_LIBS}
            # dm-tree's struct_eq walks two trees: not the same operation.
            if op == "struct_eq":
                pys["dm-tree"] = None
            known = [v for v in pys.values() if v is not None]
            best = min(known) if known else None
            lib_pl = lib / n
            hand_pl = hand / n if hand is not None else None
            vs_hand = lib / hand if hand else None
            speedup = best / lib_pl if best is not None else None
            floor = best / hand_pl if best is not None and hand_pl else None
            rows.append((tree, op, lib, hand, vs_hand, speedup, floor))
            print("| %s | %s%s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                tree, op, " (vs map2)" if op in PY_OP and known else "",
                fmt(lib_pl, 3), fmt(hand_pl, 3),
                fmt(pys["optree"]), fmt(pys["jax.tree_util"]), fmt(pys["dm-tree"]),
                "%.2fx" % vs_hand if vs_hand else "–",
                "%.0fx" % speedup if speedup else "–",
                "%.0fx" % floor if floor else "–"))
    extra = rust_ns(crit, "T1_transformer", "map2", "hand_result")
    if extra is not None:
        print()
        print("T1 map2 written by hand but returning each layer through a "
              "`Result<Layer, Error>` as `zip_with` does: %s ns (%.3f ns/leaf)."
              % (fmt(extra), extra / TREES["T1_transformer"]))
    extra = rust_ns(crit, "T1_transformer", "unflatten", "hand_result")
    if extra is not None:
        print()
        print("T1 unflatten written by hand but fallible at every level (a "
              "`Result` per struct, as `unflatten_from` returns): %s ns "
              "(%.3f ns/leaf)." % (fmt(extra), extra / TREES["T1_transformer"]))
    print()
    targets(crit, rows)


def targets(crit, rows):
    by = {(r[0], r[1]): r for r in rows}

    def mark(ok):
        return "met" if ok else "**missed**"

    print("| target | figure | |")
    print("|---|---|---|")
    for op in ["map", "map2", "sgd", "leaves"]:
        r = by.get(("T1_transformer", op))
        if r and r[4]:
            print("| %s T1 <= 1.10x hand-written | %.2fx (%s vs %s ns) | %s |" % (
                op, r[4], fmt(r[2]), fmt(r[3]), mark(r[4] <= 1.10)))
    r = by.get(("T1_transformer", "flatten"))
    if r and r[4]:
        print("| flatten T1 <= 3x hand-written leaves loop | %.2fx (%s vs %s ns) | %s |"
              % (r[4], fmt(r[2]), fmt(r[3]), mark(r[4] <= 3)))
    r = by.get(("T1_transformer", "unflatten"))
    if r and r[4]:
        print("| unflatten T1 <= 3x hand-written construction | %.2fx (%s vs %s ns) | %s |"
              % (r[4], fmt(r[2]), fmt(r[3]), mark(r[4] <= 3)))
    r = by.get(("T1_transformer", "struct_eq"))
    if r:
        per = r[2] / T1_NODES
        print("| TreeDef equality T1 <= 1 ns/node | %.2f ns/node (%s ns, %d nodes) | %s |"
              % (per, fmt(r[2]), T1_NODES, mark(per <= 1)))
    r = by.get(("T2_wide", "flatten"))
    if r and r[3]:
        print("| flatten T2 <= 2x Vec::clone | %.3fx (%s vs %s ns) | %s |"
              % (r[4], fmt(r[2]), fmt(r[3]), mark(r[4] <= 2)))
    worst = None
    # Missed cells, by what the hand-written floor says about them.
    out_of_reach, library_only, no_floor = [], [], []
    for r in rows:
        if r[5] is None:
            continue
        need = 5 if r[1] == "struct_eq" else 50
        if r[5] < need:
            if r[6] is None:
                no_floor.append("%s %s %.0fx" % (r[0], r[1], r[5]))
            elif r[6] < need:
                out_of_reach.append("%s %s %.0fx (floor %.0fx)" % (r[0], r[1], r[5], r[6]))
            else:
                library_only.append("%s %s %.0fx (floor %.0fx)" % (r[0], r[1], r[5], r[6]))
        if worst is None or r[5] / need < worst[5] / (5 if worst[1] == "struct_eq" else 50):
            worst = r
    missed = out_of_reach + library_only + no_floor
    if worst:
        print("| every op >= 50x the fastest Python library (struct_eq >= 5x) "
              "| lowest: %s %s %.0fx; %d cells missed, listed below | %s |" % (
                  worst[0], worst[1], worst[5], len(missed), mark(not missed)))
    if missed:
        print()
        print("Cells below 50x the fastest Python library (struct_eq: 5x), "
              "with the hand-written floor's own ratio:")
        print()
        for title, cells in [
                ("missed, but the hand-written floor misses too (out of reach "
                 "for any library producing that Rust type)", out_of_reach),
                ("missed by the library only (the hand-written floor meets it)",
                 library_only),
                ("missed, no hand-written floor measured", no_floor)]:
            if cells:
                print("- %s (%d): %s" % (title, len(cells), ", ".join(cells)))


if __name__ == "__main__":
    main()
