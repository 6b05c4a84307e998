"""What the call-site rewrite scripts (`scripts/migrate_issue*.py`) share:
the walk that rewrites a checkout's tracked *.rs and *.md files in place,
the self-test of a script's cases, and the command line running either.

A script defines `rewrite(text)` (or one that also takes the file's path)
and ends with `rewrite_checkout(...)`, or with `command_line(...)` where
it has cases to test; the walk leaves CHANGELOG.md,
BENCHMARKS.md and changelog.d/ alone (their entries name the old forms on
purpose), as well as links (a crate's README is the top one: rewritten
once), files missing from the working tree and files that are not UTF-8
text (a fuzz seed named *.rs).
"""
import os
import subprocess
import sys

ALWAYS_SKIPPED = ("CHANGELOG.md", "BENCHMARKS.md")


def tracked(pathspecs=()):
    """The tracked *.rs and *.md files, limited to `pathspecs` if any."""
    return subprocess.check_output(["git", "ls-files", "*.rs", "*.md", *pathspecs]).decode().split()


def rewrite_checkout(rewrite, files=None, skip=(), after=None):
    """Rewrites each of `files` (default: every tracked *.rs and *.md file)
    with `rewrite(path, text)`, writing back those that changed, and prints
    how many did. `skip` names more files to leave alone; `after(path,
    new_text)`, if given, sees every file read (to point at what a script
    leaves to be rewritten by hand)."""
    changed = 0
    for f in tracked() if files is None else files:
        if f in ALWAYS_SKIPPED or f in skip or f.startswith("changelog.d/"):
            continue
        if os.path.islink(f) or not os.path.exists(f):
            continue
        try:
            with open(f, encoding="utf-8") as fh:
                old = fh.read()
        except UnicodeDecodeError:
            continue
        new = rewrite(f, old)
        if after is not None:
            after(f, new)
        if new != old:
            with open(f, "w", encoding="utf-8") as fh:
                fh.write(new)
            changed += 1
    print(f"{changed} files rewritten", file=sys.stderr)


def matching_paren(text, start):
    """`text[start]` is `(` (or another opening bracket): the index of the
    bracket that closes it, or None."""
    depth = 0
    for i in range(start, len(text)):
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i
    return None


def self_test(cases, rewrite, idempotent=True):
    """Runs `rewrite` on each `(before, after)` of `cases`, printing each
    case whose output is not `after` (and, if `idempotent`, each output
    that a second run changes); returns whether all passed."""
    failed = 0
    for before, after in cases:
        got = rewrite(before)
        if got != after:
            failed += 1
            print("FAIL\n  in:   %s\n  want: %s\n  got:  %s" % (before, after, got))
        if idempotent and rewrite(got) != got:
            failed += 1
            print("NOT IDEMPOTENT: %s" % got)
    print("%d of %d cases pass" % (len(cases) - failed, len(cases)))
    return failed == 0


def command_line(cases, rewrite, idempotent=True, files=lambda args: args or None, **checkout):
    """A script's command line: `--self-test` runs `self_test(cases,
    rewrite, idempotent)` and exits with 0 if every case passes, 1 if not;
    other arguments name the files to rewrite with `rewrite(text)` (through
    `files(args)`; by default the files named, or every tracked one), and
    `checkout` (`skip`, `after`) goes on to `rewrite_checkout`."""
    args = sys.argv[1:]
    if args == ["--self-test"]:
        sys.exit(0 if self_test(cases, rewrite, idempotent) else 1)
    rewrite_checkout(lambda path, text: rewrite(text), files=files(args), **checkout)
