#!/usr/bin/env python3
"""Rewrites the one-tree reads of leaves with their paths into issue 39's
lending form, in the tracked *.rs and *.md files of a checkout (run from
its root; CHANGELOG.md, BENCHMARKS.md and changelog.d/ are left alone), or
in the files named on the command line:

- `paths::leaves_with_path(t).into_iter().for_each(|(ref p, x)| ..)` (what
  scripts/migrate_issue28_ops.py wrote for issue 28's
  `for_each_with_path(t, [], |p, x, []| ..)`) ->
  `paths::for_each_with_path(t, |p, x| ..)`: each path is lent for the
  call instead of cloned per leaf (memory: the tree's depth, not leaves x
  depth). Also with `_` for the path.

Left alone (the compiler does not ask for a change; rewrite by hand where
the memory matters): a closure that takes the path by value (`|(p, x)|`,
which may keep it: it would need `p.clone()`), and `for (p, x) in
leaves_with_path(&t) { .. }` loops (a `break`, `continue`, `?` or `return`
in the body has no one-line equivalent in a visit). Idempotent.
"""
import re

from migrate_common import command_line, matching_paren

ROOT = r"(?:\bpytree_std|\bcrate|\$crate)"

# `<root>::paths::leaves_with_path(` ... `).into_iter().for_each(|(ref p, x)|`
CALL = re.compile(r"(%s)::paths::leaves_with_path\(" % ROOT)
TAIL = re.compile(r"\)\s*\.into_iter\(\)\s*\.for_each\(\s*(move\s+)?\|\(\s*(ref\s+(\w+)|_)\s*,\s*([^|]*?)\s*\)\s*\|")


def rewrite(text):
    out, pos = [], 0
    for m in CALL.finditer(text):
        if m.start() < pos:
            continue
        close = matching_paren(text, m.end() - 1)
        if close is None:
            continue
        tail = TAIL.match(text, close)
        if tail is None:
            continue
        tree = text[m.end():close].strip()
        path = tail.group(3) or "_"
        new = "%s::paths::for_each_with_path(%s, %s|%s, %s|" % (
            m.group(1), tree, tail.group(1) or "", path, tail.group(4))
        out.append(text[pos:m.start()])
        out.append(new)
        pos = tail.end()
    out.append(text[pos:])
    return "".join(out)


CASES = [
    ("pytree_std::paths::leaves_with_path(&t).into_iter().for_each(|(ref p, _)| v.push(p.to_string()));",
     "pytree_std::paths::for_each_with_path(&t, |p, _| v.push(p.to_string()));"),
    ("pytree_std::paths::leaves_with_path(tree).into_iter().for_each(|(ref path, x)| { n += *x; f(path) });",
     "pytree_std::paths::for_each_with_path(tree, |path, x| { n += *x; f(path) });"),
    ("crate::paths::leaves_with_path(&model.layers[0])\n    .into_iter()\n    .for_each(move |(_, x)| seen(x));",
     "crate::paths::for_each_with_path(&model.layers[0], move |_, x| seen(x));"),
    # The user's own names are kept as they are; nothing new is bound.
    ("pytree_std::paths::leaves_with_path(&t).into_iter().for_each(|(ref __p, __x)| visit(__p, __x, []));",
     "pytree_std::paths::for_each_with_path(&t, |__p, __x| visit(__p, __x, []));"),
    # By value: the closure may keep the path; left alone.
    ("pytree_std::paths::leaves_with_path(&t).into_iter().for_each(|(p, _)| kept.push(p));",
     "pytree_std::paths::leaves_with_path(&t).into_iter().for_each(|(p, _)| kept.push(p));"),
    ("for (p, x) in pytree_std::paths::leaves_with_path(&t) { if *x > 1.0 { break; } }",
     "for (p, x) in pytree_std::paths::leaves_with_path(&t) { if *x > 1.0 { break; } }"),
    ("let pairs = pytree_std::paths::leaves_with_path(&t);",
     "let pairs = pytree_std::paths::leaves_with_path(&t);"),
]


if __name__ == "__main__":
    command_line(CASES, rewrite)
