#!/usr/bin/env python3
"""Files and functions past the house size (issue 18): prints each and exits 1 when there is
one, 0 when there is none. tests/shape.rs runs the same checks in `cargo test`.

    python3 scripts/sizes.py [--all] [--root DIR]...

--all: also list every file over 250 lines. --root DIR (relative to the repository,
repeatable): the source roots to check; by default src/ and mock-server/src/.

- A file over 300 lines needs a reason in its module docs: a `//!` line that says
  "over 300 lines" and why (one state machine and its invariants, one case per line...).
- No function is over 100 lines, counted from the line of its `fn` to its closing brace.
  Braces inside strings, characters and comments do not count.
"""
import os, re, sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_ROOTS = ["src", "mock-server/src"]
FILE_LIMIT, FN_LIMIT = 300, 100


def blank(text):
    """`text` with comments, strings and character literals blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    keep_lines = lambda s: re.sub(r"[^\n]", " ", s)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i)); i = j; continue
        if text.startswith("/*", i):
            depth, j = 0, i
            while j < n:
                if text.startswith("/*", j): depth += 1; j += 2; continue
                if text.startswith("*/", j):
                    depth -= 1; j += 2
                    if depth == 0: break
                    continue
                j += 1
            out.append(keep_lines(text[i:j])); i = j; continue
        raw = re.match(r'b?r(#*)"', text[i:i + 70])
        if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = '"' + raw.group(1)
            j = text.find(end, i + len(raw.group(0)))
            j = n if j < 0 else j + len(end)
            out.append(keep_lines(text[i:j])); i = j; continue
        if text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append(keep_lines(text[i:j])); i = j; continue
        if text[i] == "'":
            ch = re.match(r"'(\\(x..|u\{[0-9a-fA-F]+\}|.)|[^\\'])'", text[i:i + 12])
            if ch:
                out.append(" " * len(ch.group(0))); i += len(ch.group(0)); continue
        out.append(text[i]); i += 1
    return "".join(out)


def long_functions(text):
    """`(name, first line, lines)` of every function over FN_LIMIT lines."""
    code, found = blank(text), []
    for m in re.finditer(r"\bfn\s+(\w+)", code):
        j = m.end()
        while j < len(code) and code[j] not in "{;":
            j += 1
        if j >= len(code) or code[j] == ";":
            continue
        depth, k = 0, j
        while k < len(code):
            depth += {"{": 1, "}": -1}.get(code[k], 0)
            if depth == 0:
                break
            k += 1
        first = code.count("\n", 0, m.start()) + 1
        lines = code.count("\n", 0, k) + 1 - first + 1
        if lines > FN_LIMIT:
            found.append((m.group(1), first, lines))
    return found


def has_reason(text):
    docs = [line for line in text.splitlines() if line.startswith("//!")]
    return any("over 300 lines" in line.lower() for line in docs)


def roots(argv):
    """The `--root` arguments, or the default roots."""
    found, argv = [], list(argv)
    while argv:
        arg = argv.pop(0)
        if arg == "--root":
            if not argv:
                sys.exit("--root needs a directory")
            found.append(argv.pop(0).rstrip("/"))
        elif arg.startswith("--root="):
            found.append(arg.split("=", 1)[1].rstrip("/"))
        elif arg != "--all":
            sys.exit(f"unexpected argument {arg!r}")
    return found or DEFAULT_ROOTS


def main():
    show_all = "--all" in sys.argv[1:]
    bad = 0
    walks = [sorted(os.walk(os.path.join(REPO, root))) for root in roots(sys.argv[1:])]
    for d, _, files in (step for walk in walks for step in walk):
        for f in sorted(files):
            if not f.endswith(".rs"):
                continue
            path = os.path.join(d, f)
            rel = os.path.relpath(path, REPO)
            text = open(path, encoding="utf-8").read()
            lines = text.count("\n")
            if lines > FILE_LIMIT and not has_reason(text):
                print(f"{rel}: {lines} lines, and no reason in its module docs")
                bad += 1
            elif show_all and lines > 250:
                print(f"{rel}: {lines} lines" + (" (reason given)" if lines > FILE_LIMIT else ""))
            for name, first, count in long_functions(text):
                print(f"{rel}:{first}: fn {name} is {count} lines")
                bad += 1
    if bad == 0:
        print(f"no file over {FILE_LIMIT} lines without a reason, no function over {FN_LIMIT} lines")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
