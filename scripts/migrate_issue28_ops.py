#!/usr/bin/env python3
"""Rewrites the call sites of the operations that issue 28 (one door per
capability) merged, renamed or moved, in the tracked *.rs and *.md files of
a checkout (run from its root; CHANGELOG.md, BENCHMARKS.md, changelog.d/
and docs/migration-issue-20.md are left alone). Paths given as arguments
limit it to those files or folders.

Modules (paths `pytree_std::<m>::` and, inside pytree-std, `crate::<m>::`):
`basic`, `multi` -> `walk`; `prefix`, `transpose` -> `nested`; `filter` ->
`split`; `reduce` -> `reductions`; `summary`, `ravel`, `tree_equal` ->
`elements`.

Names: pytree-core's trait `LeafFnErr` (what a leaf function's error may
be) is `IntoLeafFnError`, apart from the struct `LeafFnError`.

Functions (with their arguments where the form changed):
- `map2(a, b, |x, y| ..)`, `try_map2(..)` -> `map_n(a, [b], |x, [y]| ..)`;
  `try_map_n` -> `map_n` (fallibility comes from the closure's return type);
- `try_map` -> `map_into`; `try_for_each_mut` -> `for_each_mut`;
- `zip_mut(&mut t, others, |x, ys| ..)` and `try_zip_mut(..)` ->
  `zip_mut([&mut t], others, |[x], ys| ..)`; `zip_mut_n`, `try_zip_mut_n`
  -> `zip_mut`;
- `par_for_each_mut(&mut t, |x| ..)` -> `par_zip_mut([&mut t], [], |[x], []| ..)`;
  `par_zip_mut(&mut t, ..)` -> `par_zip_mut([&mut t], ..)` (as `zip_mut`);
  `par_zip_mut_n`, `try_par_zip_mut_n` -> `par_zip_mut`;
- `leaf_at` -> `get`;
- `for_each_with_path(t, |p, x| ..)` -> `for_each_with_path(t, [], |p, x, []| ..)`
  (now a `Result`); `for_each_with_path_n` -> `for_each_with_path`;
  `for_each_mut_with_path(t, |p, x| ..)` ->
  `zip_mut_with_path(t, [], |p, x, []| ..)` (a `Result`);
- `combine(a, b)` -> `combine([a, b])`; `combine_n` -> `combine`;
  `filter_fill(t, p, f)` -> `partition_fill(t, p, f).map(|(kept, _)| kept)`;
- the error types `E` of turbofishes (`try_map::<_, U, E>`) become `_`.

Removed from pytree-std and kept in the engine, `pytree_std::generic`
(the same function for any namespace, called with `Std` named):
`paths::leaf_at_mut`, `paths::map_with_path_n`, `prefix::map_prefix`
(a rewrite to `paths::update`, `paths::for_each_with_path` or
`nested::map_with_prefix` reads better where it fits: see
changelog.d/issue-28-ops.md).

Second pass (changelog.d/issue-28-ops-2.md), applied after the above:
- `for_each(t, f)` -> `leaves(t).into_iter().for_each(f)`;
  `reductions::num_leaves(t)` -> `leaves(t).len()`;
  `reductions::reduce(t, f)` -> `flatten(t).0.into_iter().reduce(f)`;
  `split::filter(t, p)` -> `split::partition(t, p).map(|(kept, _)| kept)`;
- `paths::for_each_with_path(t, [], |p, x, []| ..)` ->
  `paths::for_each_with_path(t, |p, x| ..)`, each path lent for the call
  (issue 39's form; issue 28's script wrote a loop over
  `leaves_with_path`, which clones a path per leaf: see
  scripts/migrate_issue39_paths.py) (a `let _ =` before it and a `?` /
  `.unwrap()` / `.expect(..)` after it dropped); with others, `for_each_with_path(a, [b, ..], |p, x, [y, ..]| ..)`
  -> `zip_mut_with_path([], [a, b, ..], |p, [], [x, y, ..]| ..)`;
- `paths::zip_mut_with_path(&mut t, others, |p, x, ys| ..)` ->
  `zip_mut_with_path([&mut t], others, |p, [x], ys| ..)`;
- to the engine, with `Std` named (TO_ENGINE_2): `walk::check_same_structure`,
  `reductions::{any, all, count, sum, min, max}`, `paths::leaf_path_at`,
  `nested::{flatten_one_level, broadcast_prefix, pair_leaves,
  unpair_leaves, unflatten_pairs}` (the changelog has the one-line
  std forms, which read better where they fit).

Third pass (changelog.d/issue-28-elem-3.md): `FloatLeaf::zip_op(m, r,
exec, f, &op)` -> `zip_elements(m, r, exec, f)` (the same results; the
`ElementOp` argument, removed, is dropped: to keep running on a device
without a copy to the host, write the update as an `ElementUpdate` and
call `zip_update`).

Not handled: a `for_each_with_path` / `zip_mut_with_path` now returning a
`Result` where a statement ignores it (the compiler warns), and calls
through a `use` of a moved function (the compiler names them).

Idempotent: a call already in its new form is not matched again. Run
`cargo fmt --all` after it. `python3 scripts/migrate_issue28_ops.py
--self-test` runs its tests.
"""
import re
import sys

from migrate_common import command_line, tracked

MODULES = {
    "basic": "walk",
    "multi": "walk",
    "prefix": "nested",
    "transpose": "nested",
    "filter": "split",
    "reduce": "reductions",
    "summary": "elements",
    "ravel": "elements",
    "tree_equal": "elements",
}

# Plain renames (module after the move, old name, new name, turbofish
# positions that held the error type `E` and now hold the output `R`).
RENAMES = [
    ("walk", "try_map", "map_into", [(2, "Result<_, %s>")]),
    ("walk", "try_for_each_mut", "for_each_mut", [(1, "Result<(), %s>")]),
    ("walk", "try_map_n", "map_n", [(2, "Result<_, %s>")]),
    ("walk", "zip_mut_n", "zip_mut", ["+"]),
    ("walk", "try_zip_mut_n", "zip_mut", [(3, "Result<(), %s>")]),
    ("parallel", "par_zip_mut_n", "par_zip_mut", ["+"]),
    ("parallel", "try_par_zip_mut_n", "par_zip_mut", [(3, "Result<(), %s>")]),
    ("paths", "leaf_at", "get", []),
    ("paths", "for_each_with_path_n", "for_each_with_path", []),
    ("split", "combine_n", "combine", []),
]

MANUAL = []

PREFIX = r"(?:\bpytree_std|\bcrate|\$crate)::"


def move_modules(text):
    for old, new in MODULES.items():
        text = re.sub(r"(%s)%s::" % (PREFIX, old), r"\g<1>%s::" % new, text)

    def in_list(m):
        body = m.group(2)
        for old, new in MODULES.items():
            body = re.sub(r"(?<![\w:])%s::" % old, new + "::", body)
        return m.group(1) + body + "}"
    # `use crate::{ravel::Ravel, ..}`, `use pytree_std::{filter::partition, ..}`
    return re.sub(r"(\buse\s+(?:pytree_std|crate)::\{)([^;]*?)\}", in_list, text)


# ---------------------------------------------------------------- parsing


def skip_string(text, i):
    """The index after the string or char literal starting at `i`, or `i`."""
    m = re.match(r'r(#*)"', text[i:])
    if m:
        end = text.find('"' + m.group(1), i + len(m.group(0)))
        return len(text) if end < 0 else end + 1 + len(m.group(1))
    if text[i] == '"':
        j = i + 1
        while j < len(text) and text[j] != '"':
            j += 2 if text[j] == "\\" else 1
        return j + 1
    if text[i] == "'":
        m = re.match(r"'(\\.[^']*|[^\\'])'", text[i:])
        if m:
            return i + len(m.group(0))
    return i


def closure_params_end(text, i):
    """`text[i]` is a closure's opening `|`: the index of its closing `|`."""
    depth = 0
    j = i + 1
    while j < len(text):
        c = text[j]
        if c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        elif c == "|" and depth <= 0:
            return j
        j += 1
    return -1


def split_args(text, start):
    """`text[start]` is `(`: the arguments (spans) and the index of `)`."""
    args, depth, i, arg_start = [], 0, start + 1, start + 1
    at_arg_start = True
    while i < len(text):
        c = text[i]
        if at_arg_start and not c.isspace():
            at_arg_start = False
            m = re.match(r"&?\s*(move\s+)?\|", text[i:])
            if m:
                end = closure_params_end(text, i + len(m.group(0)) - 1)
                if end < 0:
                    return None, -1
                i = end + 1
                continue
        j = skip_string(text, i)
        if j != i:
            i = j
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                if text[arg_start:i].strip():
                    args.append((arg_start, i))
                return args, i
            depth -= 1
        elif c == "," and depth == 0:
            args.append((arg_start, i))
            arg_start = i + 1
            at_arg_start = True
        i += 1
    return None, -1


def split_top(s, sep=","):
    """`s` split at top-level `sep`s."""
    out, depth, cur = [], 0, ""
    for c in s:
        if c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        if c == sep and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += c
    out.append(cur)
    return out


def closure(arg):
    """A closure literal's (prefix, params, body), or None."""
    m = re.match(r"(\s*(?:move\s+)?)\|", arg)
    if not m:
        return None
    end = closure_params_end(arg, len(m.group(0)) - 1)
    params = arg[len(m.group(0)):end]
    return m.group(1), [p.strip() for p in split_top(params)] if params.strip() else [], arg[end + 1:]


def in_array(param):
    """A closure parameter as the one element of an array parameter."""
    if ":" in param and not param.startswith("["):
        name, ty = param.split(":", 1)
        return "[%s]: [%s; 1]" % (name.strip(), ty.strip())
    return "[%s]" % param


def rewrite_closure(arg, n_params, change, fallback):
    """The closure `arg` with its parameters changed by `change`, or, for
    a function that is not a closure literal, `fallback(arg)`."""
    c = closure(arg)
    if c is None or len(c[1]) != n_params:
        return fallback(arg.strip())
    prefix, params, body = c
    return "%s|%s|%s" % (prefix, ", ".join(change(params)), body)


# ---------------------------------------------------------------- calls


class Call:
    """A call found in the text: the name, its turbofish, the end (after `(`)."""

    def __init__(self, start, name, turbofish, end):
        self.start, self.name, self.turbofish, self.end = start, name, turbofish, end


def call_sites(text, name_re):
    """Each call of a name matching `name_re` (a path that may carry a
    turbofish, whose `<..>` may nest)."""
    pat = re.compile(r"(%s)\b" % name_re)
    pos = 0
    while True:
        m = pat.search(text, pos)
        if not m:
            return
        pos = m.start() + 1
        i = m.end()
        tf = ""
        t = re.match(r"\s*::\s*<", text[i:])
        if t:
            depth, j = 1, i + len(t.group(0))
            while j < len(text) and depth:
                depth += {"<": 1, ">": -1}.get(text[j], 0)
                j += 1
            tf, i = text[i:j], j
        o = re.match(r"\s*\(", text[i:])
        if o:
            yield Call(m.start(), m.group(1), tf, i + len(o.group(0)))


def rewrite_calls(text, name_re, fix):
    """Each call of `name_re` passed to `fix(name, turbofish, args)`, which
    returns the new call or None to keep it."""
    out, pos = [], 0
    for m in call_sites(text, name_re):
        if m.start < pos:
            continue
        args, close = split_args(text, m.end - 1)
        if args is None:
            continue
        new = fix(m.name, m.turbofish, [text[a:b] for a, b in args])
        if new is None:
            continue
        out.append(text[pos:m.start])
        out.append(new)
        pos = close + 1
    out.append(text[pos:])
    return "".join(out)


def fish(turbofish, positions):
    """A turbofish with the error type `E` at each (position, template) put
    in its template (`Result<(), E>`); `+`: one `_` added."""
    if not turbofish:
        return ""
    inner = turbofish[turbofish.index("<") + 1:turbofish.rindex(">")]
    parts = [p.strip() for p in split_top(inner)]
    for p in positions:
        if p == "+":
            parts.append("_")
        elif p[0] < len(parts):
            parts[p[0]] = p[1] % parts[p[0]]
    return "::<%s>" % ", ".join(parts)


def qual(mod):
    return r"(?:%s%s::|%s)" % (PREFIX, mod, r"(?<![\w:])")


def with_name(name, new):
    return re.sub(r"\w+$", new, name)


def renames(text):
    for mod, old, new, positions in RENAMES:
        def fix(name, tf, args, new=new, positions=positions):
            return "%s%s(%s)" % (with_name(name, new), fish(tf, positions), ",".join(args))
        text = rewrite_calls(text, r"(?:%s%s::)%s" % (PREFIX, mod, old), fix)
    return text


def map2(text):
    def fix(name, tf, args):
        if len(args) != 3:
            return None
        f = rewrite_closure(args[2], 2, lambda p: [p[0], in_array(p[1])],
                            lambda g: "|__x, [__y]| %s(__x, __y)" % g)
        return "%s%s(%s, [%s], %s)" % (with_name(name, "map_n"), fish(tf, [(2, "Result<_, %s>")]) if "try" in name else "",
                                        args[0].rstrip(), args[1].strip(), f.strip())
    return rewrite_calls(text, r"(?:%s(?:walk|multi)::)(?:try_)?map2" % PREFIX, fix)


def zip_mut_one(text):
    """`zip_mut(&mut t, ..)`, `try_zip_mut`, `par_zip_mut` of one tree."""
    def fix(name, tf, args):
        first = args[0].strip()
        if len(args) != 3 or not (first.startswith("&mut") or first == "self"):
            return None  # the new form's first argument is an array
        f = rewrite_closure(args[2], 2, lambda p: [in_array(p[0]), p[1]],
                            lambda g: "|[__x], __ys| %s(__x, __ys)" % g)
        new = "par_zip_mut" if "par" in name else "zip_mut"
        if tf:  # ::<T, N> (one tree and N others) -> ::<T, 1, N, _>
            parts = [p.strip() for p in split_top(tf[tf.index("<") + 1:tf.rindex(">")])]
            tf = "::<%s>" % ", ".join(parts[:1] + ["1"] + parts[1:2] + ["_"])
        return "%s%s([%s], %s, %s)" % (with_name(name, new), tf, args[0].strip(), args[1].strip(), f.strip())
    text = rewrite_calls(text, r"(?:%s(?:walk|multi)::|\bpytree_std::|\bcrate::)(?:try_)?zip_mut" % PREFIX, fix)
    return rewrite_calls(text, r"(?:%sparallel::)par_zip_mut" % PREFIX, fix)


def par_for_each_mut(text):
    def fix(name, tf, args):
        if len(args) != 2:
            return None
        f = rewrite_closure(args[1], 1, lambda p: [in_array(p[0]), "[]"],
                            lambda g: "|[__x], []| %s(__x)" % g)
        return "%s([%s], [], %s)" % (with_name(name, "par_zip_mut"), args[0].strip(), f.strip())
    return rewrite_calls(text, r"(?:%sparallel::)par_for_each_mut" % PREFIX, fix)


def one_tree_with_path(text):
    def fix_for(new):
        def fix(name, tf, args):
            if len(args) != 2:
                return None
            f = rewrite_closure(args[1], 2, lambda p: p + ["[]"],
                                lambda g: "|__p, __x, []| %s(__p, __x)" % g)
            return "%s(%s, [], %s)" % (with_name(name, new), args[0].strip(), f.strip())
        return fix
    text = rewrite_calls(text, r"(?:%spaths::)for_each_with_path" % PREFIX, fix_for("for_each_with_path"))
    return rewrite_calls(text, r"(?:%spaths::)for_each_mut_with_path" % PREFIX, fix_for("zip_mut_with_path"))


def combine_filter_fill(text):
    def fix_combine(name, tf, args):
        if len(args) != 2:
            return None
        return "%s%s([%s, %s])" % (name, fish(tf, ["+"]).replace("_>", "2>") if tf else "",
                                   args[0].strip(), args[1].strip())
    text = rewrite_calls(text, r"(?:%ssplit::)combine" % PREFIX, fix_combine)

    def fix_fill(name, tf, args):
        return "%s%s(%s).map(|(kept, _)| kept)" % (with_name(name, "partition_fill"), tf, ",".join(args))
    return rewrite_calls(text, r"(?:%ssplit::)filter_fill" % PREFIX, fix_fill)


# Turbofishes that gained the closure's output `R` as a last parameter:
# (function, its old number of parameters).
GAINED_R = [("walk", "map_into", 2), (None, "map_n", 2), (None, "for_each_mut", 1),
            ("paths", "for_each_with_path", 1)]


def gained_r(text):
    for mod, name, arity in GAINED_R:
        path = r"(?:%s%s::)%s" % (PREFIX, mod, name) if mod else r"(?:%s(?:walk::)?)%s" % (PREFIX, name)

        def fix(found, tf, args):
            if not tf or len(split_top(tf[tf.index("<") + 1:tf.rindex(">")])) != arity:
                return None
            return "%s%s(%s)" % (found, fish(tf, ["+"]), ",".join(args))
        text = rewrite_calls(text, path, fix)
    return text


# Removed from pytree-std, kept in the engine (`pytree_std::generic`, the
# same function for any namespace): (module, name, engine path, number of
# the old turbofish's parameters).
TO_ENGINE = [("paths", "leaf_at_mut", "by_index::leaf_at_mut", 1),
             ("paths", "map_with_path_n", "multi_path::map_with_path_n", 3),
             ("nested", "map_prefix", "prefix::map_prefix", 4)]


def to_engine(text):
    for mod, name, engine, arity in TO_ENGINE:
        def fix(found, tf, args, engine=engine, arity=arity):
            parts = [p.strip() for p in split_top(tf[tf.index("<") + 1:tf.rindex(">")])] if tf else ["_"] * arity
            parts = [p for p in parts if not p.startswith("'")]
            closure_param = ["_"] if arity > 1 else []
            return "pytree_std::generic::%s::<pytree_std::Std, %s>(%s)" % (
                engine, ", ".join(parts + closure_param), ",".join(args))
        text = rewrite_calls(text, r"(?:\bpytree_std::%s::)%s" % (mod, name), fix)
    return text


# ---------------------------------------------------------------- pass 2
# Issue 28's second pass (changelog.d/issue-28-ops-2.md): the family
# modules cut to one door per capability.

ROOT = r"(?:\bpytree_std|\bcrate|\$crate)"


def root_of(name):
    """`pytree_std`, `crate` or `$crate`: the root a matched path starts with."""
    return re.match(r"\$?\w+", name).group(0)


def fish_parts(tf):
    """A turbofish's parameters, lifetimes left out."""
    if not tf:
        return None
    parts = [p.strip() for p in split_top(tf[tf.index("<") + 1:tf.rindex(">")])]
    return [p for p in parts if not p.startswith("'")]


# Removed from pytree-std in pass 2, kept in the engine: (module, name,
# engine module, the std function's type parameters, closures the engine
# names as parameters); the engine's function has the same name.
TO_ENGINE_2 = [(m, n, e, int(a), int(c)) for m, n, e, a, c in map(str.split, """
    walk check_same_structure multi 2 0
    reductions any reduce 1 1
    reductions all reduce 1 1
    reductions count reduce 1 1
    reductions sum reduce 1 0
    reductions min reduce 1 0
    reductions max reduce 1 0
    paths leaf_path_at by_index 1 0
    nested flatten_one_level prefix 1 0
    nested broadcast_prefix prefix 2 0
    nested pair_leaves transpose 3 0
    nested unpair_leaves transpose 3 0
    nested unflatten_pairs transpose 4 0
""".strip().splitlines())]


def to_engine_2(text):
    for mod, name, engine_mod, arity, closures in TO_ENGINE_2:
        engine = "%s::%s" % (engine_mod, name)

        def fix(found, tf, args, engine=engine, arity=arity, closures=closures):
            root = root_of(found)
            parts = fish_parts(tf) or ["_"] * arity
            return "%s::generic::%s::<%s::Std, %s>(%s)" % (
                root, engine, root, ", ".join(parts + ["_"] * closures), ",".join(args))
        text = rewrite_calls(text, r"%s::%s::%s" % (ROOT, mod, name), fix)
    return text


def visits(text):
    """`for_each(t, f)` -> a loop over `leaves`; `num_leaves(t)` ->
    `leaves(t).len()`; `reduce(t, f)` -> over `flatten(t).0`;
    `filter(t, p)` -> `partition(t, p)`'s first half."""
    def tree_and_closure(template):
        """`f(t, g)` -> `template` % (root, turbofish, t, g)."""
        def fix(found, tf, args):
            if len(args) != 2:
                return None
            return template % (root_of(found), tf, args[0].strip(), args[1].strip())
        return fix
    text = rewrite_calls(text, r"%s::(?:walk::)?for_each" % ROOT,
                         tree_and_closure("%s::leaves%s(%s).into_iter().for_each(%s)"))
    text = rewrite_calls(text, r"%s::reductions::reduce" % ROOT,
                         tree_and_closure("%s::flatten%s(%s).0.into_iter().reduce(%s)"))

    def num_leaves(found, tf, args):
        return "%s::leaves%s(%s).len()" % (root_of(found), tf, args[0].strip())
    text = rewrite_calls(text, r"%s::reductions::num_leaves" % ROOT, num_leaves)

    def filter(found, tf, args):
        return "%s::split::partition%s(%s).map(|(kept, _)| kept)" % (root_of(found), tf, ",".join(args))
    return rewrite_calls(text, r"%s::split::filter" % ROOT, filter)


def bare(param):
    """A closure parameter without its type annotation."""
    return split_top(param, ":")[0].strip()


def for_each_with_path_2(text):
    """`for_each_with_path(t, [], |p, x, []| ..)` ->
    `for_each_with_path(t, |p, x| ..)`, the path lent (issue 39; a
    `let _ =` before it and a `?` or `.unwrap()` after it dropped: it
    cannot fail); with others,
    `zip_mut_with_path([], [t, others..], |p, [], [x, ys..]| ..)`."""
    out, pos = [], 0
    for m in call_sites(text, r"%s::paths::for_each_with_path" % ROOT):
        if m.start < pos:
            continue
        args, close = split_args(text, m.end - 1)
        if args is None or len(args) != 3:
            continue
        first, others, f = (text[a:b] for a, b in args)
        root = root_of(m.name)
        start, end = m.start, close + 1
        if others.strip() == "[]":
            c = closure(f)
            if c is not None and len(c[1]) == 3:
                g = "%s|%s, %s|%s" % (c[0], c[1][0].strip(), c[1][1].strip(), c[2])
            else:
                g = "|__p, __x| %s(__p, __x, [])" % f.strip()
            new = "%s::paths::for_each_with_path(%s, %s)" % (root, first.strip(), g.strip())
            before = re.search(r"let\s+_\s*=\s*$", text[pos:start])
            if before:
                start = pos + before.start()
            after = re.match(r"\s*(\?|\.unwrap\(\)|\.expect\((\"[^\"]*\"|[^()]*)\))", text[end:])
            if after:
                end += len(after.group(0))
        else:
            o = others.strip()
            if not (o.startswith("[") and o.endswith("]")):
                continue
            inner = o[1:-1].strip()
            refs = "[%s%s]" % (first.strip(), ", " + inner if inner else "")

            def change(params):
                ys = params[2]
                if ys.startswith("[") and ys.endswith("]"):
                    rest = ys[1:-1].strip()
                    ys = "[%s%s]" % (params[1], ", " + rest if rest else "")
                elif bare(ys) == "_":
                    ys = "[%s, ..]" % params[1]
                else:
                    ys = "[%s, %s @ ..]" % (params[1], bare(ys))
                return [params[0], "[]", ys]
            g = rewrite_closure(f, 3, change, lambda h: "|p, [], [x, ys @ ..]| %s(p, x, ys)" % h)
            new = "%s::paths::zip_mut_with_path([], %s, %s)" % (root, refs, g.strip())
        out.append(text[pos:start])
        out.append(new)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def zip_mut_with_path_2(text):
    """`zip_mut_with_path(&mut t, others, |p, x, ys| ..)` ->
    `zip_mut_with_path([&mut t], others, |p, [x], ys| ..)`."""
    def fix(name, tf, args):
        if len(args) != 3 or args[0].strip().startswith("["):
            return None
        f = rewrite_closure(args[2], 3, lambda p: [p[0], in_array(p[1]), p[2]],
                            lambda g: "|p, [x], ys| %s(p, x, ys)" % g)
        return "%s%s([%s], %s, %s)" % (name, tf, args[0].strip(), args[1].strip(), f.strip())
    return rewrite_calls(text, r"%s::paths::zip_mut_with_path" % ROOT, fix)


def zip_op(text):
    def fix(name, tf, args):
        if len(args) != 5:
            return None
        return "%s%s(%s)" % (with_name(name, "zip_elements"), tf, ",".join(args[:4]))
    return rewrite_calls(text, r"(?<![\w])(?:[\w:<>]+::)?zip_op", fix)


def pass_2(text):
    text = to_engine_2(text)
    text = visits(text)
    text = zip_mut_with_path_2(text)
    text = zip_op(text)
    return for_each_with_path_2(text)


def rewrite(text):
    text = re.sub(r"\bLeafFnErr\b", "IntoLeafFnError", text)
    text = move_modules(text)
    text = map2(text)
    text = zip_mut_one(text)
    text = par_for_each_mut(text)
    text = one_tree_with_path(text)
    text = combine_filter_fill(text)
    text = gained_r(text)
    text = renames(text)
    text = to_engine(text)
    return pass_2(text)


def manual_sites(path, text):
    for name in MANUAL:
        for m in re.finditer(r"\b%s\s*(::\s*<|\()" % name, text):
            line = text.count("\n", 0, m.start()) + 1
            print("%s:%d: %s: rewrite by hand (changelog.d/issue-28-ops.md)" % (path, line, name), file=sys.stderr)


SKIP = ("docs/migration-issue-20.md", "scripts/migrate_issue28_ops.py")


CASES = [
    ("pytree_std::multi::map2(&a, &b, |x, y| x + y)?",
     "pytree_std::walk::map_n(&a, [&b], |x, [y]| x + y)?"),
    ("pytree_std::multi::try_map2(&a, &b, div)",
     "pytree_std::walk::map_n(&a, [&b], |__x, [__y]| div(__x, __y))"),
    # A function value that names the user's own `x`: the closure's
    # parameters must not shadow it.
    ("pytree_std::multi::map2(&a, &b, scale_by(x))",
     "pytree_std::walk::map_n(&a, [&b], |__x, [__y]| scale_by(x)(__x, __y))"),
    ("pytree_std::parallel::par_for_each_mut(&mut t, bump(x));",
     "pytree_std::parallel::par_zip_mut([&mut t], [], |[__x], []| bump(x)(__x));"),
    ("pytree_std::multi::map2(&a, &b, |x: &f32, y: &f32| x * y)",
     "pytree_std::walk::map_n(&a, [&b], |x: &f32, [y]: [&f32; 1]| x * y)"),
    ("pytree_std::zip_mut(&mut p, [&g], |p, [g]| *p -= g)?",
     "pytree_std::zip_mut([&mut p], [&g], |[p], [g]| *p -= g)?"),
    ("pytree_std::zip_mut([&mut p], [&g], |[p], [g]| *p -= g)?",
     "pytree_std::zip_mut([&mut p], [&g], |[p], [g]| *p -= g)?"),
    ("pytree_std::multi::try_zip_mut(&mut p, [&g], |p, [g]| { f(p, g) })",
     "pytree_std::walk::zip_mut([&mut p], [&g], |[p], [g]| { f(p, g) })"),
    ("pytree_std::multi::try_zip_mut_n::<T, 2, 1, E>(ms, rs, f)",
     "pytree_std::walk::zip_mut::<T, 2, 1, Result<(), E>>(ms, rs, f)"),
    ("pytree_std::basic::try_map::<_, (u8, Vec<u8>), _>(t, u8::try_from)",
     "pytree_std::walk::map_into::<_, (u8, Vec<u8>), Result<_, _>>(t, u8::try_from)"),
    ("pytree_std::parallel::par_for_each_mut(&mut t, |x| *x *= 3.0);",
     "pytree_std::parallel::par_zip_mut([&mut t], [], |[x], []| *x *= 3.0);"),
    ("pytree_std::paths::for_each_with_path(&t, |p, _| v.push(p.to_string()));",
     "pytree_std::paths::for_each_with_path(&t, |p, _| v.push(p.to_string()));"),
    ("pytree_std::paths::for_each_mut_with_path(&mut t, |p, x| *x += 1);",
     "pytree_std::paths::zip_mut_with_path([&mut t], [], |p, [x], []| *x += 1);"),
    ("pytree_std::paths::leaf_at(&t, 2)?", "pytree_std::paths::get(&t, 2)?"),
    ("pytree_std::filter::combine(a, b)?", "pytree_std::split::combine([a, b])?"),
    ("pytree_std::filter::combine_n([a, b, c])?", "pytree_std::split::combine([a, b, c])?"),
    ("pytree_std::filter::filter_fill(t, |_, x| *x > 0, |_, _| 0)",
     "pytree_std::split::partition_fill(t, |_, x| *x > 0, |_, _| 0).map(|(kept, _)| kept)"),
    ("pytree_std::reduce::reduce(t, f)", "pytree_std::flatten(t).0.into_iter().reduce(f)"),
    ("E: pytree_std::LeafFnErr, F: pytree_std::LeafFnError", "E: pytree_std::IntoLeafFnError, F: pytree_std::LeafFnError"),
    ("pytree_std::prefix::map_prefix::<_, _, i32, Tree<i32>>(a, b, f)",
     "pytree_std::generic::prefix::map_prefix::<pytree_std::Std, _, _, i32, Tree<i32>, _>(a, b, f)"),
    ("*pytree_std::paths::leaf_at_mut(&mut t, 2)? = 30.0;",
     "*pytree_std::generic::by_index::leaf_at_mut::<pytree_std::Std, _>(&mut t, 2)? = 30.0;"),
    ("pytree_std::basic::map_into::<M, Vec<f32>>(m, |x| x as f32)",
     "pytree_std::walk::map_into::<M, Vec<f32>, _>(m, |x| x as f32)"),
    ("use crate::{ravel::Ravel, tree_equal::ApproxEq, Std};", "use crate::{elements::Ravel, elements::ApproxEq, Std};"),
    ("pytree_std::tree_equal::tree_equal(&a, &b, tol)", "pytree_std::elements::tree_equal(&a, &b, tol)"),
    ("crate::multi::map2(self, rhs, |a, b| a + b)", "crate::walk::map_n(self, [rhs], |a, [b]| a + b)"),
    ("pytree_std::generic::multi::map_n::<Ns, _, 1, _>(a, [b], f)",
     "pytree_std::generic::multi::map_n::<Ns, _, 1, _>(a, [b], f)"),
    ('pytree_std::multi::map2(&a, &b, |x, y| format!("{x}, {y}"))',
     'pytree_std::walk::map_n(&a, [&b], |x, [y]| format!("{x}, {y}"))'),
    # Pass 2.
    ("pytree_std::for_each(&t, |x| n += *x);", "pytree_std::leaves(&t).into_iter().for_each(|x| n += *x);"),
    ("crate::walk::for_each(tree, f)", "crate::leaves(tree).into_iter().for_each(f)"),
    ("pytree_std::walk::check_same_structure(&a, &b)?",
     "pytree_std::generic::multi::check_same_structure::<pytree_std::Std, _, _>(&a, &b)?"),
    ("pytree_std::reductions::any(&t, |x| x.is_nan())",
     "pytree_std::generic::reduce::any::<pytree_std::Std, _, _>(&t, |x| x.is_nan())"),
    ("pytree_std::reductions::max::<Vec<f32>>(&t)", "pytree_std::generic::reduce::max::<pytree_std::Std, Vec<f32>>(&t)"),
    ("pytree_std::reductions::num_leaves(&(1, 2))", "pytree_std::leaves(&(1, 2)).len()"),
    ("crate::reductions::num_leaves(tree)", "crate::leaves(tree).len()"),
    ("pytree_std::reductions::reduce((1, vec![2]), |a, b| a + b)",
     "pytree_std::flatten((1, vec![2])).0.into_iter().reduce(|a, b| a + b)"),
    ("pytree_std::split::filter::<_, Vec<Option<i32>>>(t, |_, x| *x > 1)?",
     "pytree_std::split::partition::<_, Vec<Option<i32>>>(t, |_, x| *x > 1).map(|(kept, _)| kept)?"),
    ("pytree_std::paths::leaf_path_at(&t, 2)?",
     "pytree_std::generic::by_index::leaf_path_at::<pytree_std::Std, _>(&t, 2)?"),
    ("pytree_std::nested::unpair_leaves::<_, Tree<i32>, Tree<i32>>(z)",
     "pytree_std::generic::transpose::unpair_leaves::<pytree_std::Std, _, Tree<i32>, Tree<i32>>(z)"),
    ("pytree_std::nested::broadcast_prefix(&7, &t)?",
     "pytree_std::generic::prefix::broadcast_prefix::<pytree_std::Std, _, _>(&7, &t)?"),
    ("let _ = pytree_std::paths::for_each_with_path(tree, [], |path, _, []| bits.push(f(path)));",
     "pytree_std::paths::for_each_with_path(tree, |path, _| bits.push(f(path)));"),
    ("pytree_std::paths::for_each_with_path(&t, [], |path: &KeyPath, x: &f32, []| g(path, x))?;",
     "pytree_std::paths::for_each_with_path(&t, |path: &KeyPath, x: &f32| g(path, x));"),
    ("pytree_std::paths::for_each_with_path(&t, [], visit).unwrap();",
     "pytree_std::paths::for_each_with_path(&t, |__p, __x| visit(__p, __x, []));"),
    ("pytree_std::paths::for_each_with_path(&a, [&b], |path, x, [y]| d.push((x, y)))?;",
     "pytree_std::paths::zip_mut_with_path([], [&a, &b], |path, [], [x, y]| d.push((x, y)))?;"),
    ("pytree_std::paths::for_each_with_path(&a, [&b, &c], |_, _, _| n += 1)",
     "pytree_std::paths::zip_mut_with_path([], [&a, &b, &c], |_, [], [_, ..]| n += 1)"),
    ("pytree_std::paths::zip_mut_with_path(&mut p, [&g], |path, p, [g]| *p -= g)?",
     "pytree_std::paths::zip_mut_with_path([&mut p], [&g], |path, [p], [g]| *p -= g)?"),
    ("P::Leaf::zip_op([u], [], exec, &|[u], []| *u *= k, &ElementOp::Scale { factor: f })?",
     "P::Leaf::zip_elements([u], [], exec, &|[u], []| *u *= k)?"),
    ("<f32 as FloatLeaf>::zip_op([&mut y], [&x], Exec::Sequential, &f, &op)",
     "<f32 as FloatLeaf>::zip_elements([&mut y], [&x], Exec::Sequential, &f)"),
]


if __name__ == "__main__":
    command_line(CASES, rewrite, files=tracked, skip=SKIP, after=manual_sites)
