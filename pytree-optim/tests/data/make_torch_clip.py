"""Reference numbers for pytree-optim's `clip_by_global_norm` against
torch's `torch.nn.utils.clip_grad_norm_` (tests/burn_peers.rs), computed
by torch itself.

A model's gradients (the shapes of a small MLP and a conv: f32[4,8],
f32[8], f32[2,1,3,3], f32[2]) drawn once from a seeded generator, clipped
by torch at three maximum norms: below the gradients' global norm (they
are scaled), about equal to it, and above it (they pass unchanged). torch
computes the scale as `max_norm / (total_norm + 1e-6)`, clamped to 1;
optax (and pytree-optim) as `max_norm / total_norm` where the norm exceeds
`max_norm`: the results differ by a factor `1 + 1e-6 / total_norm`.

Run (from the repository root; torch 2.15 here):
    python3 pytree-optim/tests/data/make_torch_clip.py \
        > pytree-optim/tests/data/torch_clip.json
Everything is float32, on the CPU.
"""
import json

import torch


def main():
    gen = torch.Generator().manual_seed(36)
    shapes = [[4, 8], [8], [2, 1, 3, 3], [2]]
    grads = [torch.randn(s, generator=gen, dtype=torch.float32) for s in shapes]
    total = torch.linalg.vector_norm(
        torch.stack([torch.linalg.vector_norm(g) for g in grads])).item()
    cases = []
    for max_norm in [total / 4, total * (1 + 1e-7), total * 2]:
        params = [torch.zeros(s, requires_grad=True) for s in shapes]
        for p, g in zip(params, grads):
            p.grad = g.clone()
        norm = torch.nn.utils.clip_grad_norm_(params, max_norm)
        cases.append({
            "max_norm": max_norm,
            "total_norm": norm.item(),
            "clipped": [p.grad.ravel().tolist() for p in params],
        })
    print(json.dumps({
        "torch": torch.__version__,
        "shapes": shapes,
        "grads": [g.ravel().tolist() for g in grads],
        "cases": cases,
    }, indent=1))


if __name__ == "__main__":
    main()
