"""Drives scripts/sdk-hosts/run.sh: every host × front × upstream, one host process each, and
writes the results table. Run by run.sh, which installs the SDKs and builds the binary.

    run.py BIN WORK RESULTS_MD BUILD_NOTE

WORK is target/sdk-hosts (venv/, node/, versions.txt; logs/ is written). Fronts: `direct` (the
host talks to the upstream itself: the baseline), `serve` (`mcp-resilient serve` on 127.0.0.1,
the upstream its stdio child or its HTTP upstream) and `proxy` (the host launches `mcp-resilient
proxy` as its stdio server).
"""

import datetime
import json
import os
import re
import socket
import subprocess
import sys
import time
from collections import OrderedDict

BIN, WORK, RESULTS, BUILD_NOTE = sys.argv[1:5]
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PY = os.path.join(WORK, "venv", "bin", "python")
NODE_DIR = os.path.join(WORK, "node")
EVERYTHING = os.path.join(NODE_DIR, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
CALLS = os.path.join(HERE, "calls.json")
LOGS = os.path.join(WORK, "logs")
HOST_GUARD = 180  # one host's whole run
START_GUARD = 30

HOSTS = [
    # name, command prefix (then UPSTREAM CALLS_JSON --url/--stdio …)
    ("py 2.3 auto", [PY, os.path.join(HERE, "py_host.py"), "auto"]),
    ("py 2.3 legacy", [PY, os.path.join(HERE, "py_host.py"), "legacy"]),
    ("ts v2 auto", ["node", os.path.join(HERE, "ts_host.mjs"), "v2", "auto"]),
    ("ts v2 modern", ["node", os.path.join(HERE, "ts_host.mjs"), "v2", "modern"]),
    ("ts v2 legacy", ["node", os.path.join(HERE, "ts_host.mjs"), "v2", "legacy"]),
    ("ts v1", ["node", os.path.join(HERE, "ts_host.mjs"), "v1", "legacy"]),
]

# name, calls.json entry, how the upstream is reached (stdio command or http), gateway flags
UPSTREAMS = [
    ("everything (stdio)", "everything", ("stdio", ["node", EVERYTHING]), []),
    ("py (stdio)", "py", ("stdio", [PY, os.path.join(HERE, "py_server.py"), "--transport", "stdio"]), []),
    ("py (http)", "py", ("http", None), []),
    ("py (http), gateway pinned 2025-11-25", "py", ("http", None), ["--protocol", "2025-11-25"]),
]
# The direct row a gateway row is compared with: the pin is the gateway's, so its baseline is py (http).
BASELINE = {"py (http), gateway pinned 2025-11-25": "py (http)"}
FRONTS = ["direct", "serve", "proxy"]

children: list[subprocess.Popen] = []


def log(message: str) -> None:
    print(f"[sdk-hosts {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spawn(name: str, argv: list[str]) -> tuple[subprocess.Popen, str]:
    path = os.path.join(LOGS, f"{name}.log")
    out = open(path, "w")
    proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=NODE_DIR)
    children.append(proc)
    return proc, path


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def wait_for(path: str, pattern: str, proc: subprocess.Popen) -> str:
    deadline = time.time() + START_GUARD
    while time.time() < deadline:
        found = re.search(pattern, open(path, errors="replace").read())
        if found:
            return found.group(0)
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    raise SystemExit(f"{path}: nothing matching {pattern} within {START_GUARD} s")


def start_py_http() -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc, _ = spawn(f"py-http-{port}", [PY, os.path.join(HERE, "py_server.py"), "--transport", "http", "--port", str(port)])
    deadline = time.time() + START_GUARD
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            time.sleep(0.1)
    raise SystemExit("the Python SDK's HTTP server did not start")


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def run_host(host, entry: str, target: list[str], tag: str) -> list[dict]:
    name, prefix = host
    argv = [*prefix, entry, CALLS, *target]
    errlog = open(os.path.join(LOGS, f"host-{slug(name)}-{tag}.log"), "w")
    try:
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=errlog, stdin=subprocess.DEVNULL,
                              cwd=NODE_DIR, timeout=HOST_GUARD, text=True)
        out, note = done.stdout, None
    except subprocess.TimeoutExpired as e:
        out, note = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), \
            f"host did not finish within {HOST_GUARD} s"
    steps = []
    for line in out.splitlines():
        try:
            steps.append(json.loads(line))
        except json.JSONDecodeError:
            pass
    if not steps:
        steps.append({"step": "connect", "ok": False, "error": note or f"host printed nothing (see {errlog.name})"})
    elif note:
        steps.append({"step": "host", "ok": False, "error": note})
    return steps


def main() -> int:
    os.makedirs(LOGS, exist_ok=True)
    started = time.time()
    rows = []
    for up_name, entry, (kind, command), flags in UPSTREAMS:
        http_proc, http_url = start_py_http() if kind == "http" else (None, None)
        for front in FRONTS:
            if front == "direct" and flags:
                continue  # the pin is the gateway's: direct is the row above
            tag = slug(f"{front}-{up_name}")
            serve = None
            if front == "direct":
                target = ["--url", http_url] if kind == "http" else ["--stdio", *command]
            elif front == "serve":
                source = ["--url", http_url] if kind == "http" else ["--stdio", "--", *command]
                serve, path = spawn(f"serve-{tag}", [BIN, "serve", "--listen", "127.0.0.1:0", *flags, *source])
                target = ["--url", wait_for(path, r"http://127\.0\.0\.1:[0-9]+/mcp", serve)]
            else:
                source = ["--url", http_url] if kind == "http" else ["--stdio", "--", *command]
                target = ["--stdio", BIN, "proxy", *flags, *source]
            for host in HOSTS:
                steps = run_host(host, entry, target, tag)
                failed = [s for s in steps if not s["ok"]]
                log(f"{host[0]:14} {front:6} {up_name}: {len(steps) - len(failed)}/{len(steps)} ok")
                rows.append({"host": host[0], "front": front, "upstream": up_name,
                             "revision": next((s.get("revision") for s in steps if s["step"] == "connect"), None),
                             "steps": steps})
            if serve is not None:
                stop(serve)
        if http_proc is not None:
            stop(http_proc)
    json.dump(rows, open(os.path.join(WORK, "rows.json"), "w"), indent=1)
    write(rows, time.time() - started)
    passed, failed, regressions = counts(rows)
    print(f"through a gateway, of the steps that pass directly: {regressions} failed")
    print(f"{passed} passed, {failed} failed")
    return 0 if regressions == 0 else 1


def counts(rows: list[dict]) -> tuple[int, int, int]:
    """Steps passed and failed in all; and the gateway's regressions: steps that fail through
    serve or proxy although the same host's same step passes against the upstream directly."""
    direct = {(r["host"], r["upstream"], s["step"]): s["ok"] for r in rows if r["front"] == "direct" for s in r["steps"]}
    passed = sum(1 for r in rows for s in r["steps"] if s["ok"])
    failed = sum(1 for r in rows for s in r["steps"] if not s["ok"])
    regressions = 0
    for r in rows:
        if r["front"] == "direct":
            continue
        base = BASELINE.get(r["upstream"], r["upstream"])
        ok_direct = {step for (host, up, step), ok in direct.items() if host == r["host"] and up == base and ok}
        got = {s["step"]: s["ok"] for s in r["steps"]}
        regressions += sum(1 for step in ok_direct if not got.get(step, False))
    return passed, failed, regressions


COLUMNS = ["connect", "tools/list", "tools/call", "prompts/list", "prompts/get", "resources/list",
           "resources/templates/list", "resources/read"]


def cell(steps: list[dict], column: str) -> str:
    mine = [s for s in steps if s["step"] == column or s["step"].startswith(column + " ")]
    if not mine:
        return "–"
    ok = sum(1 for s in mine if s["ok"])
    if len(mine) == 1:
        return "ok" if ok else "**fail**"
    return f"{ok}/{len(mine)}" if ok == len(mine) else f"**{ok}/{len(mine)}**"


def write(rows: list[dict], seconds: float) -> None:
    versions = open(os.path.join(WORK, "versions.txt")).read().strip().splitlines()
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "src", "cli", "Cargo.lock"],
                           capture_output=True, text=True).stdout.strip()
    passed, failed, regressions = counts(rows)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
    out = ["# SDK hosts through `serve` and `proxy`", "",
           "Hosts on the official MCP SDKs, each in front of servers nobody here wrote: directly, through",
           "`mcp-resilient serve` (Streamable HTTP) and through `mcp-resilient proxy` (stdio). Written by",
           "`scripts/sdk-hosts/run.sh`: do not edit by hand.", "",
           f"- Date: {now}; wall time {seconds:.0f} s",
           f"- Commit built and run: `{commit}` ({'src/ or cli/ modified' if dirty else 'clean src/ and cli/'}); {BUILD_NOTE}",
           "- Installed: " + "; ".join(f"`{v}`" for v in versions),
           "- Hosts: the Python SDK's `Client` with `mode=\"auto\"` (its default) and `\"legacy\"`; the TypeScript",
           "  SDK v2 `Client` with `versionNegotiation.mode` `auto`, `{pin: \"2026-07-28\"}` (modern) and `legacy`",
           "  (its default); the v1 SDK's `Client` (2025-11-25 only).",
           "- Upstreams: `@modelcontextprotocol/server-everything` over stdio (speaks 2025-11-25 only), and",
           "  `scripts/sdk-hosts/py_server.py` on the Python SDK's `MCPServer` over stdio and over Streamable",
           "  HTTP (it speaks 2026-07-28 and the 2025 `initialize` era on both). The gateway speaks `auto` to",
           "  its upstream unless the row says it is pinned to 2025-11-25.",
           "- Steps: connect (`initialize` or `server/discover`), `tools/list`, `tools/call` of each tool of",
           "  `scripts/sdk-hosts/calls.json`, `prompts/list`, `prompts/get` of each prompt there,",
           "  `resources/list`, `resources/templates/list`, `resources/read` of the first resource listed.",
           "  A tool result with `isError` is a failure.", "",
           f"**{passed} passed, {failed} failed** (steps). Through `serve` or `proxy`, **{regressions}** steps",
           "failed that pass when the same host talks to the upstream directly (a step the host cannot take",
           "directly, such as a 2026-07-28 pin against a 2025-only server, counts as failed but not here; a",
           "host that cannot connect takes no other step, and each of its steps that passes directly counts",
           "here).", "",
           "| host | revision | front | upstream | " + " | ".join(COLUMNS) + " |",
           "|---|---|---|---|" + "---|" * len(COLUMNS)]
    for r in rows:
        out.append(f"| {r['host']} | {r['revision'] or '–'} | {r['front']} | {r['upstream']} | "
                   + " | ".join(cell(r["steps"], c) for c in COLUMNS) + " |")
    groups: "OrderedDict[str, list[str]]" = OrderedDict()
    for r in rows:
        for s in r["steps"]:
            if not s["ok"]:
                groups.setdefault(s["error"] or "(no message)", []).append(
                    f"{r['host']} / {r['front']} / {r['upstream']}: `{s['step']}`")
    if groups:
        out += ["", "## Failures, by message", ""]
        for message, where in groups.items():
            out.append(f"- `{message}`")
            for w in where:
                out.append(f"  - {w}")
    open(RESULTS, "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        for child in children:
            stop(child)
