"""A copy of the anchors' adam_gpt2.py (shared/anchors, issue 10), kept here
so that bench/adam_gpt2.sh runs on a clone of this repository alone.

Anchor for the tensor goal: one Adam step over GPT-2 small's parameter
shapes (148 f32 tensors, ~124M parameters), as a Python user would run it.

- optax.adam under jax.jit, params and state donated (no fresh buffers);
- numpy, per tensor, in place with out= (no temporaries beyond one scratch);
- a numpy triad a = b + s*c over arrays as large as the whole model, for
  the memory-bandwidth floor (Adam moves 28 bytes per parameter: reads p, g,
  m, v; writes p, m, v).
Prints medians in ms and the implied GB/s.
"""
import json, os, statistics, sys, time
import numpy as np

def shapes():
    d, v, ctx, L = 768, 50257, 1024, 12
    out = [("wte", (v, d)), ("wpe", (ctx, d))]
    for i in range(L):
        h = f"h.{i}."
        out += [(h + "ln_1.g", (d,)), (h + "ln_1.b", (d,)),
                (h + "attn.c_attn.w", (d, 3 * d)), (h + "attn.c_attn.b", (3 * d,)),
                (h + "attn.c_proj.w", (d, d)), (h + "attn.c_proj.b", (d,)),
                (h + "ln_2.g", (d,)), (h + "ln_2.b", (d,)),
                (h + "mlp.c_fc.w", (d, 4 * d)), (h + "mlp.c_fc.b", (4 * d,)),
                (h + "mlp.c_proj.w", (4 * d, d)), (h + "mlp.c_proj.b", (d,))]
    out += [("ln_f.g", (d,)), ("ln_f.b", (d,))]
    return out

def median_ms(fn, rounds):
    ts = []
    for _ in range(rounds):
        t = time.perf_counter(); fn(); ts.append((time.perf_counter() - t) * 1e3)
    return statistics.median(ts), min(ts), max(ts)

def main():
    rounds = int(os.environ.get("ROUNDS", "7"))
    sh = shapes()
    n = sum(int(np.prod(s)) for _, s in sh)
    rng = np.random.default_rng(0)
    params = {k: rng.standard_normal(s, dtype=np.float32) * 0.02 for k, s in sh}
    grads = {k: rng.standard_normal(s, dtype=np.float32) * 1e-3 for k, s in sh}
    res = {"tensors": len(sh), "parameters": n}

    # numpy triad floor over the same number of f32 elements
    a = np.empty(n, np.float32); b = np.ones(n, np.float32); c = np.ones(n, np.float32)
    def triad():
        np.multiply(c, np.float32(0.5), out=a); np.add(a, b, out=a)
    med, lo, hi = median_ms(triad, rounds)
    # multiply reads c writes a; add reads a,b writes a: 5 passes of 4 bytes
    res["numpy_triad_ms"] = med; res["numpy_triad_GBps"] = 5 * 4 * n / med / 1e6
    del a, b, c

    # numpy Adam in place
    m = {k: np.zeros_like(p) for k, p in params.items()}
    v = {k: np.zeros_like(p) for k, p in params.items()}
    scratch = {k: np.empty_like(p) for k, p in params.items()}
    b1, b2, lr, eps = np.float32(0.9), np.float32(0.999), np.float32(1e-3), np.float32(1e-8)
    step = [0]
    def np_adam():
        step[0] += 1
        c1 = np.float32(1 - 0.9 ** step[0]); c2 = np.float32(1 - 0.999 ** step[0])
        for k in params:
            p, g, mk, vk, s = params[k], grads[k], m[k], v[k], scratch[k]
            mk *= b1; np.multiply(g, 1 - b1, out=s); mk += s
            vk *= b2; np.multiply(g, g, out=s); s *= (1 - b2); vk += s
            np.divide(vk, c2, out=s); np.sqrt(s, out=s); s += eps
            np.divide(mk, s, out=s); s *= lr / c1; p -= s
    np_adam()
    med, lo, hi = median_ms(np_adam, rounds)
    res["numpy_adam_ms"] = med; res["numpy_adam_GBps_28B"] = 28 * n / med / 1e6

    # optax under jit, donated
    import jax, jax.numpy as jnp, optax
    jax.config.update("jax_platforms", "cpu")
    opt = optax.adam(1e-3)
    jp = jax.tree.map(jnp.asarray, params); jg = jax.tree.map(jnp.asarray, grads)
    st = opt.init(jp)
    @jax.jit
    def _step(p, s, g):
        u, s = opt.update(g, s, p)
        return optax.apply_updates(p, u), s
    stepf = jax.jit(_step.__wrapped__ if hasattr(_step, "__wrapped__") else _step, donate_argnums=(0, 1))
    jp, st = stepf(jp, st, jg); jax.block_until_ready(jp)
    holder = [jp, st]
    def jx():
        holder[0], holder[1] = stepf(holder[0], holder[1], jg)
        jax.block_until_ready(holder[0])
    med, lo, hi = median_ms(jx, rounds)
    res["optax_jit_ms"] = med; res["optax_jit_GBps_28B"] = 28 * n / med / 1e6
    res["jax"] = jax.__version__; res["optax"] = optax.__version__; res["numpy"] = np.__version__
    print(json.dumps(res, indent=1))

if __name__ == "__main__":
    main()
