#!/usr/bin/env python3
"""Rewrites the names that issue 27 changed, in the tracked *.rs and *.md
files of a checkout (run from its root; CHANGELOG.md, BENCHMARKS.md and
changelog.d/ are left alone):

- pytree-optim's `Ema` (the average of the parameters, starting as a copy
  of them) is `EmaOfParams`, so that it is not taken for optax's `ema`
  (`pytree_optim::ema`, an average of the updates starting at zero, whose
  name and transformation `EmaOfUpdates` are unchanged).

`pytree_optim::Ema` is rewritten everywhere; a bare `Ema` in a file that
imports it from pytree_optim (`use pytree_optim::Ema;`, `use
pytree_optim::{.., Ema, ..};`), and in pytree-optim's own sources.
Idempotent. Not handled: a re-export under another path (the compiler
names it). Run `cargo fmt --all` after it.
"""
import re

from migrate_common import rewrite_checkout

RENAMED = {"Ema": "EmaOfParams"}


def imports(text, name):
    """Whether `text` imports `name` from pytree_optim."""
    if re.search(r"\buse\s+pytree_optim::%s\b" % name, text):
        return True
    for body in re.findall(r"\buse\s+pytree_optim::\{(.*?)\};", text, flags=re.S):
        if re.search(r"(^|[\s,{])%s\b(?!::)" % name, body):
            return True
    return False


def rewrite(text, in_pytree_optim):
    for old, new in RENAMED.items():
        bare = in_pytree_optim or imports(text, old)
        text = re.sub(r"\bpytree_optim::%s\b" % old, "pytree_optim::" + new, text)
        if bare:
            text = re.sub(r"\b%s\b" % old, new, text)
    return text


if __name__ == "__main__":
    rewrite_checkout(lambda path, text: rewrite(text, path.startswith("pytree-optim/src/")))
