"""Prints the Adam/GPT-2 table of BENCHMARKS.md from one run of
benches/scripts/adam_gpt2.sh: criterion's medians (adam_gpt2/*/new/estimates.json)
and the two JSON outputs of benches/anchors/adam_gpt2.py (one core, all cores).

Usage: adam_gpt2_table.py CRITERION_DIR PYTHON_1CORE.json PYTHON_ALL.json [TORCH.json]
(TORCH.json: benches/python/adam_torch.py's output, for torch's fused Adam.)
"""
import json
import os
import sys

N = 124_439_808          # parameters
ADAM_BYTES = 28          # reads p, g, m, v; writes p, m, v (f32)
TRIAD_BYTES = 12         # STREAM's count for a = b + s*c


def median_ms(crit, name):
    with open(os.path.join(crit, name, "new", "estimates.json")) as f:
        return json.load(f)["median"]["point_estimate"] / 1e6


def main():
    crit, py1_path, pyn_path = sys.argv[1:4]
    py1 = json.load(open(py1_path))
    pyn = json.load(open(pyn_path))
    torch = json.load(open(sys.argv[4])) if len(sys.argv) > 4 else None
    names = ["optim_adam_step", "hand_fused", "optim_adam_update_apply", "optim_adam_step_parallel",
             "hand_fused_parallel", "par_zip_mut_n_leaves", "triad", "triad_parallel",
             "triad_in_place", "triad_in_place_parallel"]
    t = {n: median_ms(crit, n) for n in names}
    gbps = lambda ms, b=ADAM_BYTES: b * N / ms / 1e6
    print("| what | threads | median ms | GB/s (28 B/param) |")
    print("|---|---:|---:|---:|")
    rows = [
        ("pytree-optim `adam(1e-3).step` (fused)", 1, t["optim_adam_step"]),
        ("hand-written fused loop", 1, t["hand_fused"]),
        ("pytree-optim `update` + `apply_updates` (optax's two calls)", 1, t["optim_adam_update_apply"]),
        ("optax.adam, jax.jit, donated (taskset 1 core)", 1, py1["optax_jit_ms"]),
        ("numpy in place (taskset 1 core)", 1, py1["numpy_adam_ms"]),
        ("pytree-optim `adam(1e-3).parallel().step`", 2, t["optim_adam_step_parallel"]),
        ("hand-written fused loop, rayon `par_chunks_mut`", 2, t["hand_fused_parallel"]),
        ("pytree-std `par_zip_mut_n` (leaves never split) + hand loop", 2, t["par_zip_mut_n_leaves"]),
        ("optax.adam, jax.jit, donated (both cores)", 2, pyn["optax_jit_ms"]),
        ("numpy in place (both cores)", 2, pyn["numpy_adam_ms"]),
    ]
    if torch:
        for th, r in torch["threads"].items():
            rows.append((f"torch {torch['torch']} `Adam(fused=True)`, CPU ({torch['cpu_capability']}), "
                         f"`set_num_threads({th})`", int(th), r["median_ms"]))
    for what, th, ms in rows:
        print(f"| {what} | {th} | {ms:.1f} | {gbps(ms):.1f} |")
    print(f"| triad `a = b + s*c` (STREAM count, 12 B/elem) | 1 | {t['triad']:.1f} | {gbps(t['triad'], TRIAD_BYTES):.1f} (triad) |")
    print(f"| triad, rayon | 2 | {t['triad_parallel']:.1f} | {gbps(t['triad_parallel'], TRIAD_BYTES):.1f} (triad) |")
    print(f"| in-place triad `a += s*b` (12 B/elem, all moved) | 1 | {t['triad_in_place']:.1f} | {gbps(t['triad_in_place'], TRIAD_BYTES):.1f} (triad) |")
    print(f"| in-place triad, rayon | 2 | {t['triad_in_place_parallel']:.1f} | {gbps(t['triad_in_place_parallel'], TRIAD_BYTES):.1f} (triad) |")
    print()
    # The floor: 28 B per parameter at the in-place triad's rate (every
    # byte it counts is moved, as in Adam); the classic triad's rate, whose
    # count leaves out the write-allocate, is given beside it.
    floor1 = t["triad_in_place"] * ADAM_BYTES / TRIAD_BYTES
    floor2 = t["triad_in_place_parallel"] * ADAM_BYTES / TRIAD_BYTES
    floor1s = t["triad"] * ADAM_BYTES / TRIAD_BYTES
    floor2s = t["triad_parallel"] * ADAM_BYTES / TRIAD_BYTES
    goals = [
        ("adam (1 thread) / hand-written fused loop", t["optim_adam_step"] / t["hand_fused"], "<= 1.10x",
         t["optim_adam_step"] / t["hand_fused"] <= 1.10),
        ("optax jit (1 core) / adam (1 thread)", py1["optax_jit_ms"] / t["optim_adam_step"], "> 1 (faster)",
         py1["optax_jit_ms"] > t["optim_adam_step"]),
        ("optax jit (2 cores) / adam parallel (2 threads)", pyn["optax_jit_ms"] / t["optim_adam_step_parallel"],
         "> 1 (faster)", pyn["optax_jit_ms"] > t["optim_adam_step_parallel"]),
        ("adam 1 thread / adam parallel (2 threads)", t["optim_adam_step"] / t["optim_adam_step_parallel"],
         ">= 1.7x", t["optim_adam_step"] / t["optim_adam_step_parallel"] >= 1.7),
        ("hand 1 thread / hand rayon (2 threads)", t["hand_fused"] / t["hand_fused_parallel"], "(reference)", None),
        ("triad 1 thread / triad rayon (2 threads)", t["triad"] / t["triad_parallel"], "(reference)", None),
        ("in-place triad 1 thread / rayon (2 threads)", t["triad_in_place"] / t["triad_in_place_parallel"],
         "(reference)", None),
        ("floor (28 B/param at the in-place triad's rate) / adam, 1 thread", floor1 / t["optim_adam_step"],
         "(fraction)", None),
        ("floor (2 threads) / adam parallel", floor2 / t["optim_adam_step_parallel"], "(fraction)", None),
        ("floor at the classic triad's STREAM rate / adam, 1 thread", floor1s / t["optim_adam_step"],
         "(fraction)", None),
        ("same, 2 threads / adam parallel", floor2s / t["optim_adam_step_parallel"], "(fraction)", None),
    ]
    if torch:
        t1 = torch["threads"].get("1", {}).get("median_ms")
        tn = max(torch["threads"].items(), key=lambda kv: int(kv[0]))[1]["median_ms"]
        if t1:
            goals.append(("torch fused (1 thread) / adam (1 thread)", t1 / t["optim_adam_step"], ">= 1 (as fast)",
                          t1 >= t["optim_adam_step"]))
        goals.append(("torch fused (all threads) / adam parallel", tn / t["optim_adam_step_parallel"],
                      ">= 1 (as fast)", tn >= t["optim_adam_step_parallel"]))
    print("| ratio | value | goal | met |")
    print("|---|---:|---|---|")
    for what, v, goal, met in goals:
        m = "" if met is None else ("yes" if met else "**no**")
        print(f"| {what} | {v:.2f} | {goal} | {m} |")
    print()
    print(f"numpy triad (5 passes of 4 B): 1 core {py1['numpy_triad_GBps']:.1f} GB/s, "
          f"all cores {pyn['numpy_triad_GBps']:.1f} GB/s; jax {py1['jax']}, optax {py1['optax']}, numpy {py1['numpy']}")


if __name__ == "__main__":
    main()
