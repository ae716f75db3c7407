#!/usr/bin/env python3
"""Checks the relative links of the documents: every link in README.md, the other top-level
Markdown files and docs/**/*.md must name a file or folder that exists, and every `#anchor` a
heading (or an explicit `id`/`name`) of the Markdown file it points into, with GitHub's rules for
turning a heading into an anchor. Links with a scheme (https:, mailto:, ...) are not followed:
the check needs no network.

    python3 scripts/links.py            # exit 0, or 1 with one line per broken link
    python3 scripts/links.py FILE...    # only these files

Python 3 standard library only.
"""

import os
import re
import sys
from urllib.parse import unquote

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

FENCE = re.compile(r"^ {0,3}(```+|~~~+)")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
# [text](target "title") and ![alt](target); the text may hold one level of brackets.
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
REFDEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HTML_ID = re.compile(r"<[a-zA-Z][^>]*\s(?:id|name)\s*=\s*[\"']([^\"']+)[\"']")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def documents():
    found = [os.path.join(ROOT, n) for n in sorted(os.listdir(ROOT)) if n.endswith(".md")]
    for base, dirs, files in os.walk(os.path.join(ROOT, "docs")):
        dirs.sort()
        found += [os.path.join(base, n) for n in sorted(files) if n.endswith(".md")]
    return found


def lines_outside_code(text):
    """(line number, line) for each line not inside a fenced code block."""
    fence = None
    for number, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        yield number, line


def slug(heading):
    """GitHub's anchor for a heading: its text as rendered (code marks, emphasis and link
    targets dropped), lower case, every character that is not a letter, a digit, `_`, `-` or a
    space removed, spaces turned into hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text)
    text = text.replace("`", "").replace("*", "")
    text = re.sub(r"(?<!\w)_+|_+(?!\w)", "", text)
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


_anchors = {}


def anchors(path):
    if path not in _anchors:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        seen, found, previous = {}, set(), None
        for _, line in lines_outside_code(text):
            title = None
            m = HEADING.match(line)
            if m:
                title = m.group(2)
            elif previous and previous.strip() and SETEXT.match(line) and not HEADING.match(previous):
                title = previous.strip()
            if title is not None:
                base = slug(title)
                n = seen.get(base, 0)
                seen[base] = n + 1
                found.add(base if n == 0 else f"{base}-{n}")
            found.update(HTML_ID.findall(line))
            previous = line
        _anchors[path] = found
    return _anchors[path]


def links(text):
    """(line number, target) of every link outside code."""
    for number, line in lines_outside_code(text):
        bare = CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)
        for m in INLINE.finditer(bare):
            yield number, m.group(1)
        m = REFDEF.match(bare)
        if m:
            yield number, m.group(1)


def check(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    broken = []
    for number, target in links(text):
        target = target.strip("<>")
        if not target or SCHEME.match(target):
            continue
        file_part, _, anchor = target.partition("#")
        file_part = unquote(file_part.split("?")[0])
        if file_part:
            base = ROOT if file_part.startswith("/") else os.path.dirname(path)
            dest = os.path.normpath(os.path.join(base, file_part.lstrip("/")))
            if not os.path.exists(dest):
                broken.append((number, target, "no such file"))
                continue
        else:
            dest = path
        if anchor and dest.endswith(".md") and os.path.isfile(dest):
            if unquote(anchor).lower() not in anchors(dest):
                broken.append((number, target, "no such anchor"))
    return broken


def main():
    paths = [os.path.abspath(p) for p in sys.argv[1:]] or documents()
    bad = 0
    for path in paths:
        for number, target, why in check(path):
            print(f"{os.path.relpath(path, ROOT)}:{number}: {target}: {why}")
            bad += 1
    if bad:
        print(f"links: {bad} broken link(s) in {len(paths)} files", file=sys.stderr)
        return 1
    print(f"links: {len(paths)} files, every relative link and anchor resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
