#!/usr/bin/env bash
# Checks the docs' cross-references: every relative Markdown link in README.md and docs/*.md
# must name an existing file and, with #anchor, an existing heading of it (GitHub's slugs);
# and every section cited by name, as `jobs.md, "Hangs"` in the docs or `docs/jobs.md, "Hangs"`
# in the code's comments, must be a heading of that page. Exit 1 and one line per bad reference.
# Usage: scripts/check-links.sh [REPO_ROOT]
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
exec python3 - <<'EOF'
import glob, os, re, sys

def slug(h):
    h = re.sub(r"[^\w\- ]", "", h.strip().lower().replace("`", ""))
    return h.replace(" ", "-")

def headings(path):
    names, slugs, seen, fence = set(), set(), {}, False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fence = not fence
        elif not fence and re.match(r"#{1,6} ", line):
            text = line.lstrip("#").strip()
            names.add(text.replace("`", ""))
            s = slug(text)
            n = seen.get(s, 0)
            seen[s] = n + 1
            slugs.add(s if n == 0 else f"{s}-{n}")
    return names, slugs

def prose(path):
    """The file's text outside fenced code blocks and inline code spans."""
    out, fence = [], False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fence = not fence
        elif not fence:
            out.append(re.sub(r"`[^`]*`", "``", line))
    return "".join(out)

pages = ["README.md"] + sorted(glob.glob("docs/*.md"))
cache, bad = {}, []
def heads(p):
    if p not in cache:
        cache[p] = headings(p)
    return cache[p]

for page in pages:
    text = prose(page)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue  # http:, https:, mailto:
        path, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
        if not os.path.exists(full):
            bad.append(f"{page}: link to missing {target}")
        elif anchor and full.endswith(".md") and anchor not in heads(full)[1]:
            bad.append(f"{page}: no heading for #{anchor} in {full}")

cite = re.compile(r"(?:(?<=docs/)|(?<![\w/.-]))([a-z-]+\.md)\]?(?:\([^)]*\))?,((?:\s+\"[^\"]+\",?)+)")
code = glob.glob("src/**/*.[ch]", recursive=True) + glob.glob("include/**/*.h", recursive=True)
for page in pages + code:
    text = open(page, encoding="utf-8", errors="replace").read()
    for doc, names in cite.findall(text):
        full = os.path.join("docs", doc)
        if not os.path.exists(full):
            continue
        for name in re.findall(r"\"([^\"]+)\"", names):
            name = re.sub(r"\s+(\*\s+)?", " ", name).replace("`", "")
            if name not in heads(full)[0]:
                bad.append(f"{page}: {doc} has no section \"{name}\"")

for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF
