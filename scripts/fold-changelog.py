#!/usr/bin/env python3
"""Folds changelog.d/*.md (everything but README.md) into CHANGELOG.md's
[Unreleased] section: each file's bullets under `### Added/Changed/Fixed/
Removed` are appended to the heading of the same name (created in Keep a
Changelog order if missing), then the file is removed.
Usage: scripts/fold-changelog.py   (from the repository root)"""
import pathlib, re, sys

ORDER = ["Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"]
root = pathlib.Path(__file__).resolve().parent.parent
log = root / "CHANGELOG.md"
text = log.read_text()
start = text.index("## [Unreleased]")
end = text.index("\n## [", start + 1)
head, unreleased, tail = text[:start], text[start:end], text[end:]


def sections(body):
    out, cur = {}, None
    for line in body.splitlines():
        m = re.match(r"^### (\w+)\s*$", line)
        if m:
            cur = m.group(1)
            out.setdefault(cur, [])
        elif cur is not None:
            out[cur].append(line)
    return out


ours = sections(unreleased)
files = sorted(p for p in (root / "changelog.d").glob("*.md") if p.name != "README.md")
for f in files:
    for name, lines in sections(f.read_text()).items():
        if name not in ORDER:
            sys.exit(f"{f}: unknown heading ### {name}")
        body = "\n".join(lines).strip("\n")
        if body:
            cur = "\n".join(ours.get(name, [])).rstrip("\n")
            ours[name] = (cur + "\n" + body if cur else body).splitlines() + [""]
new = "## [Unreleased]\n\n" + "".join(
    f"### {n}\n" + "\n".join(ours[n]).strip("\n") + "\n\n" for n in ORDER if n in ours and "\n".join(ours[n]).strip()
)
log.write_text(head + new.rstrip("\n") + "\n" + tail)
for f in files:
    f.unlink()
print(f"folded {len(files)} file(s): {', '.join(f.name for f in files)}")
