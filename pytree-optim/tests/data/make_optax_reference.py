"""Reference numbers for pytree-optim's tests (tests/optax_reference.rs),
computed by optax itself.

A small tree {"b": f32[3], "s": f32[], "w": f32[2,3]} (JAX flattens a dict
in sorted key order: b, s, w) is trained for a few steps by each optimizer
with fixed gradients (drawn once, below, and stored in the output); the
parameters after every step are recorded. Also the learning-rate
schedules at steps 0..12, and clip_by_global_norm's output.

Run (from the repository root):
    python3 -m venv /tmp/optax-venv
    /tmp/optax-venv/bin/pip install -r benches/python/requirements.txt
    /tmp/optax-venv/bin/python pytree-optim/tests/data/make_optax_reference.py \
        > pytree-optim/tests/data/optax_reference.json
Everything is float32, JAX on the CPU.
"""
import json

import jax
import jax.numpy as jnp
import numpy as np
import optax

jax.config.update("jax_platforms", "cpu")

STEPS = 4


def tree_to_json(t):
    return {k: {"shape": list(np.shape(v)), "data": np.asarray(v, np.float32).ravel().tolist()}
            for k, v in t.items()}


def main():
    rng = np.random.default_rng(2024)
    params0 = {
        "b": rng.standard_normal(3).astype(np.float32),
        "s": np.float32(rng.standard_normal()),
        "w": rng.standard_normal((2, 3)).astype(np.float32),
    }
    grads = [
        {k: (rng.standard_normal(np.shape(v)) * (1.0 + t)).astype(np.float32) for k, v in params0.items()}
        for t in range(STEPS)
    ]
    decay_w_only = {"b": False, "s": False, "w": True}
    sched = optax.warmup_cosine_decay_schedule(0.0, 0.1, 2, 4, 0.001)
    cases = {
        "sgd": optax.sgd(0.1),
        "sgd_momentum": optax.sgd(0.1, momentum=0.9),
        "sgd_nesterov": optax.sgd(0.1, momentum=0.9, nesterov=True),
        "adam": optax.adam(0.01),
        "adam_hyper": optax.adam(0.02, b1=0.8, b2=0.99, eps=1e-6, eps_root=1e-8),
        "adamw": optax.adamw(0.01, weight_decay=0.1),
        "adamw_mask_w": optax.adamw(0.01, weight_decay=0.1, mask=decay_w_only),
        "clip_adamw": optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(0.01, weight_decay=1e-4)),
        "adam_warmup_cosine": optax.adam(sched),
        "masked_adam_w": optax.masked(optax.adam(0.01), decay_w_only),
        # The stages of adam alone and chained (issue 28: adam is this chain),
        # and masked around a chain with a global norm of its own.
        "scale_by_adam": optax.scale_by_adam(),
        "scale_by_adam_hyper": optax.scale_by_adam(b1=0.8, b2=0.99, eps=1e-6, eps_root=1e-8),
        "chain_scale_by_adam_lr": optax.chain(optax.scale_by_adam(), optax.scale_by_learning_rate(0.01)),
        "trace_nesterov_lr": optax.chain(optax.trace(0.9, nesterov=True), optax.scale_by_learning_rate(0.1)),
        "masked_clip_sgd_b": optax.masked(
            optax.chain(optax.clip_by_global_norm(0.5), optax.sgd(0.1, momentum=0.9)),
            {"b": True, "s": False, "w": False}),
        "ema_debias_scale": optax.chain(optax.ema(0.9, debias=True), optax.scale(-0.1)),
        "ema_biased_scale": optax.chain(optax.ema(0.8, debias=False), optax.scale(-0.1)),
        # Parameter groups: w by adamw, b by momentum, s frozen; then with a
        # group that clips by its own global norm (not fused).
        "multi_fused": optax.multi_transform(
            {"adamw": optax.adamw(0.01, weight_decay=0.1), "sgd": optax.sgd(0.1, momentum=0.9),
             "frozen": optax.set_to_zero()},
            {"b": "sgd", "s": "frozen", "w": "adamw"}),
        "multi_clip": optax.multi_transform(
            {"adamw": optax.adamw(0.01, weight_decay=0.1),
             "sgd": optax.chain(optax.clip_by_global_norm(0.5), optax.sgd(0.1, momentum=0.9)),
             "frozen": optax.set_to_zero()},
            {"b": "sgd", "s": "frozen", "w": "adamw"}),
    }
    out = {
        "source": "optax %s, jax %s, numpy %s; made by make_optax_reference.py" % (
            optax.__version__, jax.__version__, np.__version__),
        "params0": tree_to_json(params0),
        "grads": [tree_to_json(g) for g in grads],
        "cases": {},
    }
    for name, opt in cases.items():
        p = jax.tree.map(jnp.asarray, params0)
        st = opt.init(p)
        traj = []
        for g in grads:
            u, st = opt.update(jax.tree.map(jnp.asarray, g), st, p)
            p = optax.apply_updates(p, u)
            traj.append(tree_to_json(p))
        out["cases"][name] = traj
    steps = list(range(13))
    out["schedules"] = {
        "linear_0_1_10": [float(optax.linear_schedule(0.0, 1.0, 10)(s)) for s in steps],
        "cosine_1_10_0.1": [float(optax.cosine_decay_schedule(1.0, 10, 0.1)(s)) for s in steps],
        "warmup_cosine_0_1_3_10_0.05": [
            float(optax.warmup_cosine_decay_schedule(0.0, 1.0, 3, 10, 0.05)(s)) for s in steps],
    }
    clip = optax.clip_by_global_norm(1.0)
    u, _ = clip.update(jax.tree.map(jnp.asarray, grads[1]), clip.init(params0))
    out["clip_by_global_norm_1"] = {"input": tree_to_json(grads[1]), "output": tree_to_json(u),
                                    "global_norm": float(optax.global_norm(grads[1]))}
    ema_p = jax.tree.map(jnp.asarray, params0)
    ema_traj = []
    for g in grads:
        ema_p = optax.incremental_update(jax.tree.map(jnp.asarray, g), ema_p, 0.1)
        ema_traj.append(tree_to_json(ema_p))
    out["incremental_update_0.1"] = ema_traj
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
