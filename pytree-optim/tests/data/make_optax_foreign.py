"""Reference numbers for pytree-optim's tests/foreign_transformations.rs:
optax's wrappers (masked, multi_transform) around gradient transformations
written by hand, as a user of another library writes them (their own loop
over the leaves), computed by optax itself.

The same tree, initial parameters and gradients as make_optax_reference.py
(read from optax_reference.json, so the two files share their inputs), the
parameters recorded after every step; also the state of the hand-written
momentum inside its mask.

Run (from the repository root), in the venv of make_optax_reference.py:
    /tmp/optax-venv/bin/python pytree-optim/tests/data/make_optax_foreign.py \
        > pytree-optim/tests/data/optax_foreign.json
Everything is float32, JAX on the CPU.
"""
import json
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import optax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_optax_reference import tree_to_json  # noqa: E402

jax.config.update("jax_platforms", "cpu")


def tree_from_json(t):
    return {k: jnp.asarray(np.asarray(v["data"], np.float32).reshape(v["shape"])) for k, v in t.items()}


# The hand-written transformations, the Rust test's `HandScale`,
# `HandMomentum` and `HandClip`: each its own loop over the leaves.

def hand_scale(k):
    """u <- k * u."""
    return optax.GradientTransformation(
        lambda params: optax.EmptyState(),
        lambda u, state, params=None: (jax.tree.map(lambda x: jnp.float32(k) * x, u), state))


def hand_momentum(decay):
    """A trace t <- u + decay * t, and u <- t (optax's trace, by hand)."""
    def init(params):
        return jax.tree.map(jnp.zeros_like, params)

    def update(u, trace, params=None):
        t = jax.tree.map(lambda g, tr: g + jnp.float32(decay) * tr, u, trace)
        return t, t
    return optax.GradientTransformation(init, update)


def hand_clip(max_norm):
    """u <- u / n * max_norm when the global norm n of u is max_norm or more."""
    def update(u, state, params=None):
        norm = jnp.sqrt(sum(jnp.sum(x * x) for x in jax.tree.leaves(u)))
        if norm < max_norm:
            return u, state
        return jax.tree.map(lambda x: x / norm * jnp.float32(max_norm), u), state
    return optax.GradientTransformation(lambda params: optax.EmptyState(), update)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "optax_reference.json")) as f:
        ref = json.load(f)
    params0 = tree_from_json(ref["params0"])
    grads = [tree_from_json(g) for g in ref["grads"]]
    w_only = {"b": False, "s": False, "w": True}
    b_only = {"b": True, "s": False, "w": False}
    labels = {"b": "hand", "s": "frozen", "w": "adamw"}
    cases = {
        "masked_hand_scale_w": optax.masked(hand_scale(-0.1), w_only),
        "masked_hand_momentum_w": optax.masked(optax.chain(hand_momentum(0.9), optax.scale(-0.1)), w_only),
        "masked_hand_clip_sgd_b": optax.masked(
            optax.chain(hand_clip(0.5), optax.sgd(0.1, momentum=0.9)), b_only),
        "multi_hand": optax.multi_transform(
            {"adamw": optax.adamw(0.01, weight_decay=0.1),
             "hand": optax.chain(hand_clip(0.5), hand_momentum(0.9), optax.scale(-0.1)),
             "frozen": optax.set_to_zero()},
            labels),
        "multi_hand_sgd": optax.multi_transform(
            {"hand_sgd": hand_scale(-0.1), "sgd": optax.sgd(0.1, momentum=0.9),
             "frozen": optax.set_to_zero()},
            {"b": "sgd", "s": "frozen", "w": "hand_sgd"}),
    }
    out = {
        "source": "optax %s, jax %s, numpy %s; made by make_optax_foreign.py from optax_reference.json's "
                  "params0 and grads" % (optax.__version__, jax.__version__, np.__version__),
        "cases": {},
        "hand_momentum_trace_w": [],
    }
    for name, opt in cases.items():
        p = params0
        st = opt.init(p)
        traj = []
        for g in grads:
            u, st = opt.update(g, st, p)
            p = optax.apply_updates(p, u)
            traj.append(tree_to_json(p))
            if name == "masked_hand_momentum_w":
                # MaskedState(inner_state=(trace, EmptyState)): the trace
                # holds the masked leaf only.
                trace = st.inner_state[0]
                assert isinstance(trace["b"], optax.MaskedNode)
                out["hand_momentum_trace_w"].append(tree_to_json({"w": trace["w"]}))
        out["cases"][name] = traj
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
