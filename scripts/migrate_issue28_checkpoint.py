#!/usr/bin/env python3
"""Rewrites the checkpoint call sites that issue 28 changed (one door per
capability), in the tracked *.rs and *.md files of a checkout (run from its
root; CHANGELOG.md, BENCHMARKS.md, changelog.d/ and this script are left
alone), or in the files named on the command line:

- `checkpoint::to_bytes(t)` -> `checkpoint::Save::new().to_bytes(t)` (and a
  bare `to_bytes(t)` imported from `pytree_std::checkpoint`);
- `Checkpoint::open(p)` / `Checkpoint::from_bytes(b)` -> `Load::new().open(p)`
  / `Load::new().from_bytes(b)` (the sources are `Load`'s);
- `checkpoint::load_like(p, t)` / `checkpoint::load_into(p, t)` and `Load`'s
  `.load(p)`, `.load_like(p, t)`, `.load_like_with_report(p, t)`,
  `.load_into(p, t)` -> `.open(p).and_then(|__ckpt| __ckpt.<target>(t))`: a path is
  opened once, then loaded (`Load`'s targets are its `Checkpoint`'s);
- `Checkpoint`'s `.load()` and `.load_like(t)` return the tree with its
  `LoadReport`: where the tree alone was taken, `.0` is added after the
  `?`, `.unwrap()` or `.expect(..)` that follows (else `.map(|(t, _)| t)`);
- `.load_like_with_report(t)` -> `.load_like(t)`,
  `.load_by_names_with_report::<T>()` -> `.load::<T>()` (a file without a
  TreeDef loads by names; for one with a TreeDef add `.by_names()` to its
  `Load`);
- `Renames::...check()` -> `.validate()` where the chain starts at
  `Renames::new()`.

Not idempotent for the `.0`: run it once. Not handled: a `Load` kept in a
variable whose `.load(p)` is called later, a `Renames` check on a
variable, an import of `Checkpoint` left unused (the compiler names all
three). Run `cargo fmt --all` after it.
"""
import re

from migrate_common import command_line

LOAD_TARGETS = ("load_like_with_report", "load_by_names_with_report", "load_like", "load_into", "load")
METHOD = re.compile(r"\.(%s)\b(::<)?" % "|".join(LOAD_TARGETS))
CLOSE = {"(": ")", "[": "]", "{": "}", "<": ">"}
# Put before a call this script wrote, so that it is not rewritten again
# in the same run; removed at the end.
MARK = "\x01"


def skip_string(text, i):
    """Index after the string literal starting at `i` (a `"`)."""
    j = i + 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
            continue
        if text[j] == '"':
            return j + 1
        j += 1
    return j


def matching(text, i):
    """Index of the bracket closing the one at `i` (or -1)."""
    opener = text[i]
    closer = CLOSE[opener]
    depth = 0
    j = i
    while j < len(text):
        c = text[j]
        if c == '"':
            j = skip_string(text, j)
            continue
        if c == opener:
            depth += 1
        elif c == closer:
            depth -= 1
            if depth == 0:
                return j
        elif opener == "<" and c in ";{}":
            return -1
        j += 1
    return -1


def split_args(inner):
    """The top-level comma-separated arguments of a call's inside."""
    args, depth, start, j = [], 0, 0, 0
    while j < len(inner):
        c = inner[j]
        if c == '"':
            j = skip_string(inner, j)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "<" and depth == 0 and j > 0 and inner[j - 1] == ":":
            k = matching(inner, j)
            if k > 0:
                j = k + 1
                continue
        elif c == "," and depth == 0:
            args.append(inner[start:j].strip())
            start = j + 1
        j += 1
    last = inner[start:].strip()
    if last:
        args.append(last)
    return args


def receiver(text, dot):
    """The text of the expression before the method call at `dot`."""
    j = dot
    while j > 0:
        k = j - 1
        while k >= 0 and text[k] in " \t\r\n":
            k -= 1
        if k < 0:
            break
        c = text[k]
        if c in ")]":
            depth = 0
            m = k
            while m >= 0:
                if text[m] in ")]":
                    depth += 1
                elif text[m] in "([":
                    depth -= 1
                    if depth == 0:
                        break
                m -= 1
            j = m
            continue
        if c == "?":
            j = k
            continue
        if c.isalnum() or c in "_:.>":
            m = k
            while m >= 0 and (text[m].isalnum() or text[m] in "_:.<>&"):
                m -= 1
            j = m + 1
            continue
        break
    return text[j:dot]


def drop_report(text, end):
    """The suffix that takes the tree out of `(tree, report)` at `end`."""
    rest = text[end:]
    m = re.match(r"\s*\?", rest)
    if m:
        return end + m.end(), "?.0"
    m = re.match(r"\s*\.unwrap\(\)", rest)
    if m:
        return end + m.end(), ".unwrap().0"
    m = re.match(r"\s*\.expect\(", rest)
    if m:
        k = matching(text, end + m.end() - 1)
        if k > 0:
            return k + 1, text[end:k + 1].strip() + ".0"
    return end, ".map(|(t, _)| t)"


def follower(text, end):
    """What follows a call ending at `end`: `?`, `.unwrap()` or
    `.expect(..)` (its text, and the index after it), else None."""
    rest = text[end:]
    m = re.match(r"\s*\?", rest)
    if m:
        return "?", end + m.end()
    m = re.match(r"\s*\.unwrap\(\)", rest)
    if m:
        return ".unwrap()", end + m.end()
    m = re.match(r"\s*\.expect\(", rest)
    if m:
        k = matching(text, end + m.end() - 1)
        if k > 0:
            return text[end:k + 1].strip(), k + 1
    return None, end


def opened(text, after, path, call, drop):
    """`.open(path)` then `call` on the checkpoint, as the code after the
    original call (at `after`) takes the result: the replacement and the
    index it ends at."""
    how, end = follower(text, after)
    if how is not None:
        return ".open(%s)%s.%s%s%s" % (path, how, MARK + call, how, ".0" if drop else ""), end
    # The closure's parameter is a name a user's code cannot collide with:
    # `t` may name the user's own `f`.
    new = ".open(%s).and_then(|__ckpt| __ckpt.%s)" % (path, MARK + call)
    if drop:
        after, suffix = drop_report(text, after)
        new += suffix
    return new, after


def splice(text, matches, fix):
    """`text` with each match of `matches` that `fix(m)` rewrites (it returns
    the replacement and where it ends, or None) put in place; a match inside
    an earlier replacement is skipped."""
    out = []
    pos = 0
    for m in matches:
        if m.start() < pos:
            continue
        fixed = fix(m)
        if fixed is None:
            continue
        out.append(text[pos:m.start()])
        out.append(fixed[0])
        pos = fixed[1]
    out.append(text[pos:])
    return "".join(out)


def rewrite_loads(text, in_checkpoint_file):
    def fix(m):
        name = m.group(1)
        turbo = ""
        j = m.end()
        if m.group(2):
            k = matching(text, j - 1)
            if k < 0:
                return None
            turbo = text[m.end(1):k + 1]
            j = k + 1
        if j >= len(text) or text[j] != "(":
            return None
        close = matching(text, j)
        if close < 0:
            return None
        if "//" in text[j + 1:close]:
            return None  # a call in prose, across doc-comment lines
        if text.endswith("|__ckpt| __ckpt", 0, m.start()):
            return None  # a rewrite's own call
        args = split_args(text[j + 1:close])
        recv = receiver(text, m.start())
        on_load = re.search(r"\bLoad::new\(\)", recv) is not None
        after = close + 1
        replacement = None
        drop = False
        if name == "load_by_names_with_report" and not args:
            replacement = ".load%s()" % turbo
        elif name == "load_like_with_report" and len(args) == 1:
            replacement = ".load_like(%s)" % args[0]
        elif name == "load_like_with_report" and len(args) == 2:
            replacement, after = opened(text, after, args[0], "load_like(%s)" % args[1], False)
        elif name == "load_like" and len(args) == 2:
            replacement, after = opened(text, after, args[0], "load_like(%s)" % args[1], True)
        elif name == "load_into" and len(args) == 2:
            replacement, after = opened(text, after, args[0], "load_into(%s)" % args[1], False)
        elif name == "load" and len(args) == 1 and on_load:
            replacement, after = opened(text, after, args[0], "load%s()" % turbo, True)
        elif name == "load_like" and len(args) == 1 and in_checkpoint_file:
            replacement = text[m.start():after]
            drop = True
        elif name == "load" and not args and in_checkpoint_file:
            replacement = text[m.start():after]
            drop = True
        if replacement is None:
            return None
        if drop:
            after, suffix = drop_report(text, after)
            replacement += suffix
        return replacement, after
    return splice(text, METHOD.finditer(text), fix)


def rewrite_free(text):
    """`checkpoint::load_like(p, t)` / `checkpoint::load_into(p, t)`."""
    def fix(m):
        open_ = m.end() - 1
        close = matching(text, open_)
        if close < 0:
            return None
        if "//" in text[open_ + 1:close]:
            return None  # a call in prose, across doc-comment lines
        args = split_args(text[open_ + 1:close])
        if len(args) != 2:
            return None
        tail, after = opened(text, close + 1, args[0], "%s(%s)" % (m.group(1), args[1]), m.group(1) == "load_like")
        return "checkpoint::Load::new()" + tail, after
    return splice(text, re.finditer(r"\bcheckpoint::(load_like|load_into)\(", text), fix)


def fix_imports(text):
    """`to_bytes` and `Checkpoint` in `use pytree_std::checkpoint::{..}`."""
    def one(m):
        items = [i.strip() for i in m.group(1).split(",") if i.strip()]
        if "to_bytes" in items:
            items = [("Save" if i == "to_bytes" else i) for i in items]
        seen = []
        for i in items:
            if i not in seen:
                seen.append(i)
        return "use pytree_std::checkpoint::{%s};" % ", ".join(seen)
    return re.sub(r"use pytree_std::checkpoint::\{([^}]*)\};", one, text)


def rewrite(text):
    if "checkpoint" not in text and "Checkpoint" not in text:
        return text
    bare_to_bytes = re.search(r"use pytree_std::checkpoint::\{[^}]*\bto_bytes\b", text) is not None
    text = re.sub(r"\bcheckpoint::to_bytes\(", "checkpoint::Save::new().to_bytes(", text)
    if bare_to_bytes:
        text = re.sub(r"(?<![.:\w])to_bytes\(", "Save::new().to_bytes(", text)
        text = fix_imports(text)
    text = re.sub(r"\bcheckpoint::Checkpoint::(open|from_bytes)\(", r"checkpoint::Load::new().\1(", text)
    uses_bare = re.search(r"(?<![:\w])Checkpoint::(open|from_bytes)\(", text) is not None
    text = re.sub(r"(?<![:\w])Checkpoint::(open|from_bytes)\(", r"Load::new().\1(", text)
    if uses_bare:
        def add_load(m):
            items = [i.strip() for i in m.group(1).split(",") if i.strip()]
            if "Load" not in items:
                at = items.index("Checkpoint") + 1 if "Checkpoint" in items else int(items[:1] == ["self"])
                items.insert(at, "Load")
            return "use pytree_std::checkpoint::{%s};" % ", ".join(items)
        text = re.sub(r"use pytree_std::checkpoint::\{([^}]*)\};", add_load, text)
        text = re.sub(r"use pytree_std::checkpoint::Checkpoint;", "use pytree_std::checkpoint::{Checkpoint, Load};", text)
    text = rewrite_free(text)
    text = rewrite_loads(text, True)
    text = re.sub(r"(Renames::new\(\)[^;]*?)\.check\(\)", r"\1.validate()", text)
    return text.replace(MARK, "")


CASES = [
    # The user's own `f`: the closure's parameter must not shadow it.
    ("checkpoint::load_into(&path, &mut f)",
     "checkpoint::Load::new().open(&path).and_then(|__ckpt| __ckpt.load_into(&mut f))"),
    ("let m: Model = checkpoint::load_like(&path, &m0)?;",
     "let m: Model = checkpoint::Load::new().open(&path)?.load_like(&m0)?.0;"),
    ("let m = checkpoint::Load::new().load_like(&path, &m0).unwrap();",
     "let m = checkpoint::Load::new().open(&path).unwrap().load_like(&m0).unwrap().0;"),
    ("let t = checkpoint::to_bytes(&m)?;", "let t = checkpoint::Save::new().to_bytes(&m)?;"),
    ("let c = Checkpoint::open(&p)?;", "let c = Load::new().open(&p)?;"),
]


if __name__ == "__main__":
    command_line(CASES, rewrite, idempotent=False)
