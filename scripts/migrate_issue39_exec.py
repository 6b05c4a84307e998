#!/usr/bin/env python3
"""Rewrites issue 39's change to `FloatLeaf::clip_on_device`, which now
takes the exec mode, in the tracked *.rs and *.md files of a checkout (run
from its root; CHANGELOG.md, BENCHMARKS.md and changelog.d/ are left
alone), or in the files named on the command line:

- a call with the four old arguments,
  `clip_on_device(params, updates, selected, max_norm)` ->
  `clip_on_device(params, updates, selected, max_norm,
  pytree_std::elements::Exec::Sequential)` (what pytree-optim passed
  before: the host's path on CPU memory);
- an override, `fn clip_on_device<P>(.., max_norm: f64) -> ..` -> the same
  with a last parameter `_exec: pytree_std::elements::Exec` (rename it to
  use it).

Pointed at, not rewritten: `__force_tensor_ops(..)` (removed; wrap the
transformation in `.exec(Exec::TensorOps)` around the calls it switched),
and `match`es on an `Exec` (now `#[non_exhaustive]`: the compiler asks for
a `_` arm). Idempotent.
"""
import re
import sys

from migrate_common import command_line, matching_paren

EXEC = "pytree_std::elements::Exec"
CALL = re.compile(r"(?<=[.:])clip_on_device\s*(::<[^>]*>)?\s*\(")
DEF = re.compile(r"\bfn\s+clip_on_device\s*(<[^>]*>)?\s*\(")


def top_level_commas(text):
    """The indices of the commas of `text` outside any brackets and
    outside a closure's parameters (`|a, b|`)."""
    depth, bars, out = 0, 0, []
    for i, c in enumerate(text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "|" and depth == 0:
            bars ^= 1
        elif c == "," and depth == 0 and bars == 0:
            out.append(i)
    return out


def arguments(inner):
    """The arguments between a call's parentheses (empty ones dropped: a
    trailing comma)."""
    cuts = [-1] + top_level_commas(inner) + [len(inner)]
    parts = [inner[a + 1:b] for a, b in zip(cuts, cuts[1:])]
    return [p for p in parts if p.strip()]


def add_last(inner, new):
    """`inner` (the text between the parentheses) with `new` as a last
    item, keeping a trailing comma and the closing line's indentation."""
    stripped = inner.rstrip()
    tail = inner[len(stripped):]
    if stripped.endswith(","):
        # One item per line: indent the new one as the last.
        last_line = stripped[stripped.rfind("\n") + 1:]
        indent = last_line[: len(last_line) - len(last_line.lstrip())]
        sep = "\n" + indent if "\n" in stripped else " "
        return stripped + sep + new + "," + tail
    return stripped + ", " + new + tail


def rewrite(text):
    out, pos = [], 0
    for m in sorted(list(DEF.finditer(text)) + list(CALL.finditer(text)), key=lambda m: m.start()):
        if m.start() < pos:
            continue
        open_at = m.end() - 1
        close = matching_paren(text, open_at)
        if close is None:
            continue
        inner = text[open_at + 1:close]
        args = arguments(inner)
        is_def = m.re is DEF
        if len(args) != 4:
            continue
        new = "_exec: %s" % EXEC if is_def else "%s::Sequential" % EXEC
        out.append(text[pos:open_at + 1])
        out.append(add_last(inner, new))
        pos = close
    out.append(text[pos:])
    return "".join(out)


def point_at_the_rest(path, text):
    for n, line in enumerate(text.splitlines(), 1):
        if "__force_tensor_ops" in line:
            print("%s:%d: `__force_tensor_ops` is gone: run the transformation as "
                  "`t.exec(Exec::TensorOps)` instead" % (path, n), file=sys.stderr)


CASES = [
    ("assert!(!f32::clip_on_device(&params, &mut u, &|_| true, 1.0)?);",
     "assert!(!f32::clip_on_device(&params, &mut u, &|_| true, 1.0, pytree_std::elements::Exec::Sequential)?);"),
    ("P::Leaf::clip_on_device(params, updates, &|i| mask.get(i), self.max_norm)?",
     "P::Leaf::clip_on_device(params, updates, &|i| mask.get(i), self.max_norm, pytree_std::elements::Exec::Sequential)?"),
    # One argument per line, trailing comma.
    ("<L as FloatLeaf>::clip_on_device(\n    p,\n    &mut u,\n    &|i| keep(i, 0),\n    max,\n)",
     "<L as FloatLeaf>::clip_on_device(\n    p,\n    &mut u,\n    &|i| keep(i, 0),\n    max,\n    pytree_std::elements::Exec::Sequential,\n)"),
    # An override.
    ("    fn clip_on_device<P>(\n        params: &P,\n        updates: &mut P,\n        selected: &dyn Fn(usize) -> bool,\n        max_norm: f64,\n    ) -> Result<bool, Error>",
     "    fn clip_on_device<P>(\n        params: &P,\n        updates: &mut P,\n        selected: &dyn Fn(usize) -> bool,\n        max_norm: f64,\n        _exec: pytree_std::elements::Exec,\n    ) -> Result<bool, Error>"),
    ("fn clip_on_device<P>(p: &P, u: &mut P, s: &dyn Fn(usize) -> bool, m: f64) -> Result<bool, Error>",
     "fn clip_on_device<P>(p: &P, u: &mut P, s: &dyn Fn(usize) -> bool, m: f64, _exec: pytree_std::elements::Exec) -> Result<bool, Error>"),
    # Already five: left alone.
    ("f32::clip_on_device(&p, &mut u, &|_| true, 1.0, Exec::TensorOps)",
     "f32::clip_on_device(&p, &mut u, &|_| true, 1.0, Exec::TensorOps)"),
    # A function of the user's own of that name, not called through a path.
    ("clip_on_device(a, b, c, d)", "clip_on_device(a, b, c, d)"),
]


if __name__ == "__main__":
    command_line(CASES, rewrite, after=point_at_the_rest)
