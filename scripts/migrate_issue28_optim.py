#!/usr/bin/env python3
"""Rewrites the pytree-optim call sites that issue 28 changed (optimizers
composed as in optax), in the tracked *.rs and *.md files of a checkout
(run from its root; CHANGELOG.md, BENCHMARKS.md and changelog.d/ are left
alone):

- `t.mask(m)` on a transformation that is not an optimizer (`scale`,
  `scale_by_schedule`, `clip_by_global_norm`, `add_decayed_weights`,
  `ema`) let the other leaves pass through: that is optax's wrapper now,
  `masked(t, m)`. On an optimizer (`sgd`, `adam`, `adamw`, chains) `.mask(m)`
  keeps its meaning (the other leaves are frozen) and comes from the
  `Wrap` trait, as do `.exec(e)` and `.parallel()`: `Wrap` is added to the
  file's `use pytree_optim::{..}`.
- `Restrict::restrict(t, m)` and `t.restrict(m)` are `t.mask(m)`.
- `adam(lr).weight_decay(wd)` is `adamw(lr, wd)`.
- `GradientTransformation::check` is `validate` (`fn check(` in an `impl
  GradientTransformation` block, and `.check(` calls on a value of a
  file that imports `GradientTransformation`); `LeafMask::check` is
  `ensure_fits`; `FloatLeaf::clip_by_global_norm` is `clip_on_device`
  (which returns whether it clipped: see the CHANGELOG).
- `MaskState` is `EmptyState`.
- `FloatLeaf::clip_on_device` takes the selected leaves as a function of
  the leaf index (`&dyn Fn(usize) -> bool`) instead of a `&LeafMask`: a
  call `clip_on_device(p, u, &mask, n)` becomes `clip_on_device(p, u,
  &|i| mask.get(i), n)`, and an impl's parameter `mask: &LeafMask`
  becomes `mask: &dyn Fn(usize) -> bool` (its body's `mask.get(i)` is
  then `mask(i)`: the compiler names it).
- (issue 28, second pass) `GroupList::update_all(u, o, s, p)` is
  `update_each(u, o, s, p, true)` and `update_copies(u, o, s, p)` is
  `update_each(u, o, s, p, false)` (calls, in files that name
  `GroupList`; an impl of the trait writes the one method by hand).

Not rewritten (the compiler names each): the states' fields (`state.count`
is `state.0.count` for adam, sgd and adamw, whose state is the chain's
pair), and the default mask: transformations act on every leaf now, add
`.mask(Mask::params())` to keep leaves of kind "state" frozen.
Idempotent. Run `cargo fmt --all` after it.
"""
import re

from migrate_common import rewrite_checkout

PASS_THROUGH = ("scale", "scale_by_schedule", "clip_by_global_norm", "add_decayed_weights", "ema")


def call_end(text, open_at):
    """The index after the parenthesis matching the one at `open_at`."""
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    return -1


def masked_wrappers(text):
    """`scale(..).mask(m)` -> `masked(scale(..), m)` (and the others)."""
    pattern = re.compile(r"\b(%s)\(" % "|".join(PASS_THROUGH))
    pos = 0
    while True:
        m = pattern.search(text, pos)
        if not m:
            return text
        end = call_end(text, m.end() - 1)
        if end < 0:
            return text
        if text.startswith(".mask(", end) and not text[max(0, m.start() - 7):m.start()].endswith("masked("):
            mask_end = call_end(text, end + len(".mask"))
            if mask_end < 0:
                return text
            inner = text[m.start():end]
            mask = text[end + len(".mask("):mask_end - 1]
            text = text[:m.start()] + "masked(%s, %s)" % (inner, mask) + text[mask_end:]
        pos = m.start() + 1


def add_import(text, name):
    """Adds `name` to the file's `use pytree_optim::{..}` (or a new `use`)."""
    if re.search(r"\buse\s+pytree_optim::\{[^}]*\b%s\b" % name, text, flags=re.S) or re.search(
        r"\buse\s+pytree_optim::%s\b" % name, text
    ):
        return text
    m = re.search(r"\buse\s+pytree_optim::\{", text)
    if m:
        return text[: m.end()] + name + ", " + text[m.end():]
    m = re.search(r"\buse\s+pytree_optim::(\w+);", text)
    if m:
        return text[: m.start()] + "use pytree_optim::{%s, %s};" % (m.group(1), name) + text[m.end():]
    return text


def group_list_calls(text):
    """`.update_all(..)` / `.update_copies(..)` -> `.update_each(.., true/false)`."""
    for name, last_in_place in (("update_all", "true"), ("update_copies", "false")):
        pos = 0
        while True:
            m = re.compile(r"\.%s\(" % name).search(text, pos)
            if not m:
                break
            end = call_end(text, m.end() - 1)
            if end < 0:
                break
            args = text[m.end():end - 1].rstrip().rstrip(",")
            text = text[:m.start()] + ".update_each(%s, %s)" % (args, last_in_place) + text[end:]
            pos = m.start() + 1
    return text


def rewrite(text, in_pytree_optim):
    if "pytree_optim" not in text and not in_pytree_optim:
        return text
    text = masked_wrappers(text)
    if re.search(r"\bmasked\(", text) and not in_pytree_optim:
        text = add_import(text, "masked")
    text = re.sub(r"\bRestrict::restrict\(", "Wrap::mask(", text)
    text = re.sub(r"\.restrict\(", ".mask(", text)
    text = re.sub(r"\badam\(([^()]*)\)\.weight_decay\(([^()]*)\)", r"adamw(\1, \2)", text)
    text = re.sub(r"\bMaskState\b", "EmptyState", text)
    text = re.sub(r"\bGradientTransformation::check\b", "GradientTransformation::validate", text)
    text = re.sub(r"\bLeafMask::check\b", "LeafMask::ensure_fits", text)
    text = re.sub(r"\bfn clip_by_global_norm<P>\(", "fn clip_on_device<P>(", text)
    text = re.sub(r"(\bclip_on_device\(\s*[^,()]+,\s*[^,()]+,\s*)&(\w+),",
                  r"\1&|i| \2.get(i),", text)
    text = re.sub(r"(\bfn clip_on_device<P>\([^)]*?\b\w+: )&LeafMask\b",
                  r"\1&dyn Fn(usize) -> bool", text)
    if "GradientTransformation" in text:
        text = re.sub(r"(impl\b[^{]*GradientTransformation[^{]*\{.*?)\bfn check\(", r"\1fn validate(",
                      text, flags=re.S)
        text = re.sub(r"(\w)\.check\((&?\w+, &(?:mut )?\w+, &\w+)\)", r"\1.validate(\2)", text)
    if "GroupList" in text:
        text = group_list_calls(text)
    if re.search(r"\.(mask|exec)\(|\.parallel\(\)", text) and not in_pytree_optim:
        text = add_import(text, "Wrap")
    return text


if __name__ == "__main__":
    rewrite_checkout(lambda path, text: rewrite(text, path.startswith("pytree-optim/src/")))
