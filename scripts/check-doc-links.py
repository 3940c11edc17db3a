#!/usr/bin/env python3
"""Checks the relative links of README.md and docs/*.md: every `[text](path#anchor)` names a file
that exists (relative to the page) and, with an anchor, a heading of that page (GitHub's slugs);
every backquoted repository path (`docs/x.md`, `tests/common/`, `src/compiler/mod.rs`) exists
from the repository root (an example may be named without its `.c` or `.rs`). Prints each broken one; exit status 1 if any. Run from anywhere."""
import glob, os, re, sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.chdir(root)
pages = ["README.md"] + sorted(glob.glob("docs/*.md"))
TOP = ("docs/", "src/", "tests/", "cts-runner/", "examples/", "scripts/", "layer-manifest/",
       ".ci/", "shaders/")


def slugs(path):
    out = set()
    in_code = False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            in_code = not in_code
        m = None if in_code else re.match(r"^#+\s+(.*)", line)
        if m:
            s = m.group(1).strip().lower()
            s = re.sub(r"[^\w\- ]", "", s).replace(" ", "-")
            out.add(s)
    return out


bad = 0
for page in pages:
    text = open(page, encoding="utf-8").read()
    here = os.path.dirname(page)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(here, path)) if path else page
        if not os.path.exists(full):
            print(f"{page}: link {target}: no {full}")
            bad += 1
        elif anchor and anchor not in slugs(full):
            print(f"{page}: link {target}: no heading #{anchor} in {full}")
            bad += 1
    for quoted in re.findall(r"`([^`\s]+)`", text):
        if not quoted.startswith(TOP) or re.search(r"[*<>{}$]|\.\.\.", quoted):
            continue
        path = quoted.split("::")[0].rstrip(".,;:")
        if not any(os.path.exists(path + ext) for ext in ("", ".c", ".rs")):
            print(f"{page}: path `{quoted}` does not exist")
            bad += 1
sys.exit(1 if bad else 0)
