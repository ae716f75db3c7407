#!/usr/bin/env python3
"""The hop's price, side by side (issue 44): wrk driving `tools/call echo` at the mock server
directly, through `mcp-resilient serve --url` (`--front rmcp` as `serve`, and `--front own`, the default, as `serve-own`), and through the Rust gateway mcp-proxy 0.6.0
(tower-mcp), all in front of one mock process over Streamable HTTP; then the memory of 1,000
idle host sessions on each. Everything binds and dials 127.0.0.1; every wait has a deadline;
every process started here is stopped on exit.

    scripts/hop/setup.sh                       # wrk (Debian), mcp-proxy 0.6.0 under target/hop-tools
    cargo build --release -p mcp-resilient-cli
    scripts/hop/run.py                         # 10 s a cell, 2 rounds, c = 1 and 32, 1,000 idle sessions
    scripts/hop/run.py --seconds 2 --rounds 1 --idle 100    # a smoke run
    scripts/hop/run.py --only direct,serve --modern         # serve's 2026-07-28 cells too

Cells (after a 2 s warm-up per target, not recorded): each target (`direct`, `serve`,
`serve-own`, `mcp-proxy`) at each concurrency; round 2 runs the targets in reverse order (ABBA), so that a
drift of the machine touches all. A cell opens as many host sessions as wrk has connections
(initialize, then notifications/initialized, protocol 2025-11-25), hands them to wrk (call.lua
deals them round robin: one request in flight per session on average), runs wrk for --seconds
with --latency, and closes them (DELETE). A cell fails if any answer was not a 200 carrying the
echo's result (call.lua counts them) or wrk saw a socket error or timeout. For each cell:
calls/s, wrk's p50/p90/p99 (closed loop: each connection sends its next request when the answer
is in), the p50 added to the direct cell of the same round and concurrency, and the CPU per call
of the gateway's process and of the mock behind it (utime + stime from /proc/PID/stat, in ticks
of 10 ms, over the cell), with the load average of the machine when the cell began.

Idle memory: on fresh processes before any call, 1,000 host sessions are opened on each target
(8 at a time) and held; RSS (VmRSS) is read before and 1 s after; the delta / 1,000 is the cost
of an idle host session (the mock's own is rmcp's server alone).

Writes target/hop/results.json (the rows in the shape of bench/results/*.json) and prints a
Markdown table; --save FILE replaces the rows of that bench/results area (keeping its meta,
setting its date), after which `python3 scripts/bench-report.py` renders BENCHMARKS.md.
"""

import argparse
import concurrent.futures
import datetime
import http.client
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))
MCP_PROXY = os.path.join(ROOT, "target", "hop-tools", "bin", "mcp-proxy")
VERSION = "2025-11-25"
MODERN = "2026-07-28"
START_LIMIT = 30.0
REQUEST_LIMIT = 10.0
CLK_TCK = os.sysconf("SC_CLK_TCK")
TARGETS = ("direct", "serve", "serve-own", "mcp-proxy")
STARTED: list = []


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Proc:
    """A child whose output lines are kept, waited on with deadlines, stopped on exit."""

    def __init__(self, argv, env=None):
        self.lines = []
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, errors="replace",
                                     env={**os.environ, **(env or {})})
        STARTED.append(self)
        for pipe in (self.proc.stdout, self.proc.stderr):
            threading.Thread(target=self._read, args=(pipe,), daemon=True).start()

    def _read(self, pipe):
        for line in pipe:
            # Only the start-up lines are needed; a chatty process must not grow this forever.
            if len(self.lines) < 2000:
                self.lines.append(line.rstrip("\n"))

    def wait_for(self, pattern, limit=START_LIMIT):
        deadline = time.time() + limit
        while time.time() < deadline:
            for line in list(self.lines):
                m = re.search(pattern, line)
                if m:
                    return m
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise SystemExit(f"no {pattern!r} within {limit}s: {self.lines[-20:]}")

    @property
    def pid(self):
        return self.proc.pid

    def stop(self, limit=5.0):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(limit)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(limit)


def stop_all():
    for proc in reversed(STARTED):
        proc.stop()
    STARTED.clear()


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise SystemExit(f"no VmRSS for {pid}")


def wait_http(port, path, limit=START_LIMIT):
    """Waits until GET path answers 2xx (serve's /readyz: its upstream is ready)."""
    deadline = time.time() + limit
    while time.time() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", path)
            if 200 <= conn.getresponse().status < 300:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"http://127.0.0.1:{port}{path} not ready within {limit}s")


class Target:
    def __init__(self, name, port, path, tool, proc):
        self.name, self.port, self.path, self.tool, self.proc = name, port, path, tool, proc

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}{self.path}"


def start(bin_, which):
    """The mock and the gateways asked for: {name: Target}."""
    mock = Proc([bin_, "mock-server", "--transport", "http", "--port", "0"])
    port = int(mock.wait_for(r"LISTENING 127\.0\.0\.1:(\d+)").group(1))
    upstream = f"http://127.0.0.1:{port}/mcp"
    # HOP_SERVE_ARGS: more arguments for both serve targets (e.g. `--protocol 2025-11-25`, the
    # upstream on the lean client link instead of `auto`'s 2026-07-28 on rmcp's session).
    extra = os.environ.get("HOP_SERVE_ARGS", "").split()
    targets = {"direct": Target("direct", port, "/mcp", "echo", mock)}
    if "serve" in which:
        serve = Proc([bin_, "serve", "--front", "rmcp", "--listen", "127.0.0.1:0", "--url",
                      upstream, *extra])
        port = int(serve.wait_for(r"http://127\.0\.0\.1:(\d+)/mcp").group(1))
        wait_http(port, "/readyz")
        targets["serve"] = Target("serve", port, "/mcp", "echo", serve)
    if "serve-own" in which:
        own = Proc([bin_, "serve", "--front", "own", "--listen", "127.0.0.1:0", "--url", upstream,
                    *extra])
        port = int(own.wait_for(r"http://127\.0\.0\.1:(\d+)/mcp").group(1))
        wait_http(port, "/readyz")
        targets["serve-own"] = Target("serve-own", port, "/mcp", "echo", own)
    if "mcp-proxy" in which:
        if not os.access(MCP_PROXY, os.X_OK):
            raise SystemExit(f"{MCP_PROXY} missing: run scripts/hop/setup.sh")
        port = free_port()
        with open(os.path.join(HERE, "mcp-proxy.toml.in")) as f:
            config = f.read().replace("@PORT@", str(port)).replace("@UPSTREAM@", upstream)
        path = os.path.join(tempfile.mkdtemp(prefix="hop-"), "mcp-proxy.toml")
        with open(path, "w") as f:
            f.write(config)
        peer = Proc([MCP_PROXY, "--config", path])  # its defaults (log level info)
        wait_http(port, "/admin/health")
        targets["mcp-proxy"] = Target("mcp-proxy", port, "/", "mock/echo", peer)
    return mock, targets


# ---------------------------------------------------------------------------------------------
# Host sessions, opened and closed with plain HTTP/1.1.

def post(conn, path, body, headers):
    conn.request("POST", path, body=json.dumps(body), headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        **headers})
    answer = conn.getresponse()
    return answer.status, answer.getheader("mcp-session-id"), answer.read().decode(errors="replace")


def open_session(target, conn):
    status, sid, body = post(conn, target.path, {
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": VERSION, "capabilities": {},
                   "clientInfo": {"name": "hop-bench", "version": "1"}}}, {})
    if status != 200 or not sid or '"result"' not in body:
        raise RuntimeError(f"{target.name}: initialize answered {status}: {body[:200]}")
    status, _, body = post(conn, target.path, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                           {"Mcp-Session-Id": sid, "Mcp-Protocol-Version": VERSION})
    if status not in (200, 202):
        raise RuntimeError(f"{target.name}: initialized answered {status}: {body[:200]}")
    return sid


def open_sessions(target, count, parallel=8):
    def worker(share):
        conn = http.client.HTTPConnection("127.0.0.1", target.port, timeout=REQUEST_LIMIT)
        try:
            return [open_session(target, conn) for _ in range(share)]
        finally:
            conn.close()
    shares = [count // parallel + (1 if i < count % parallel else 0) for i in range(parallel)]
    with concurrent.futures.ThreadPoolExecutor(parallel) as pool:
        return [sid for got in pool.map(worker, [s for s in shares if s]) for sid in got]


def close_sessions(target, sids, parallel=8):
    def worker(share):
        conn = http.client.HTTPConnection("127.0.0.1", target.port, timeout=REQUEST_LIMIT)
        try:
            for sid in share:
                conn.request("DELETE", target.path, headers={"Mcp-Session-Id": sid,
                                                             "Mcp-Protocol-Version": VERSION})
                conn.getresponse().read()
        finally:
            conn.close()
    with concurrent.futures.ThreadPoolExecutor(parallel) as pool:
        list(pool.map(worker, [sids[i::parallel] for i in range(parallel)]))


# ---------------------------------------------------------------------------------------------
# Cells

def wrk_cell(target, conns, seconds, version, mock_pid, quiet=False):
    sids = open_sessions(target, conns) if version == VERSION else []
    threads = min(conns, 2)
    argv = ["wrk", "--latency", "-t", str(threads), "-c", str(conns), "-d", f"{seconds}s",
            "--timeout", "5s", "-s", os.path.join(HERE, "call.lua"), target.url, "--",
            target.tool, version, ",".join(sids) or "-", str(threads)]
    load = os.getloadavg()[0]
    before = (cpu_ticks(target.proc.pid), cpu_ticks(mock_pid))
    out = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 60)
    after = (cpu_ticks(target.proc.pid), cpu_ticks(mock_pid))
    if sids:
        close_sessions(target, sids)
    m = re.search(r"^HOP (\{.*\})$", out.stdout, re.M)
    if out.returncode != 0 or not m:
        raise SystemExit(f"wrk failed on {target.name}: {out.stdout[-500:]} {out.stderr[-500:]}")
    got = json.loads(m.group(1))
    calls = got["requests"]
    errors = sum(got[k] for k in ("bad", "connect", "read", "write", "status", "timeout"))
    cell = {
        "target": target.name, "conns": conns, "version": version, "calls": calls,
        "calls_per_s": calls / (got["duration_us"] / 1e6), "p50_ms": got["p50_us"] / 1000,
        "p90_ms": got["p90_us"] / 1000, "p99_ms": got["p99_us"] / 1000, "errors": errors,
        "first_bad": got["first_bad"], "load": round(load, 2),
        "cpu_us_per_call": (after[0] - before[0]) / CLK_TCK * 1e6 / max(calls, 1),
        "mock_cpu_us_per_call": (after[1] - before[1]) / CLK_TCK * 1e6 / max(calls, 1),
    }
    if not quiet:
        print(json.dumps(cell), flush=True)
    if errors:
        raise SystemExit(f"{target.name} c={conns}: {errors} bad answers or socket errors; first: {got['first_bad']}")
    return cell


def idle_memory(targets, count):
    """KiB of RSS per idle host session on each target (fresh processes, sessions held)."""
    out = {}
    for name, target in targets.items():
        pid = target.proc.pid
        before = rss_kib(pid)
        sids = open_sessions(target, count)
        time.sleep(1.0)
        after = rss_kib(pid)
        out[name] = (after - before) / count
        print(json.dumps({"target": name, "idle_sessions": count, "rss_before_kib": before,
                          "rss_after_kib": after, "kib_per_session": round(out[name], 2)}), flush=True)
        close_sessions(target, sids)
    return out


# ---------------------------------------------------------------------------------------------
# Rows

def rounded(v, digits):
    return int(round(v)) if digits == 0 else round(v, digits)


def rows_of(cells, memory, args):
    """One row per figure, a column per target; each cell holds the median over rounds and the
    note lists every round's value."""
    names = [t for t in TARGETS if t in args.only]
    rows = []

    def row(name, unit, pick, conns, version=VERSION, digits=3, note="", skip=()):
        r = {"section": "hop", "name": name, "unit": unit, "n": None, "failed": 0, "errors": [],
             "median": None, "p99": None, "min": None, "max": None, "target": None,
             "target_met": None, "note": note}
        rounds = {}
        for t in names:
            if t in skip:
                continue
            vals = [pick(c) for c in cells if c["target"] == t and c["conns"] == conns and c["version"] == version]
            vals = [v for v in vals if v is not None]
            if vals:
                r[t.replace("-", "_")] = rounded(statistics.median(vals), digits)
                rounds[t] = vals
        r["rounds"] = {t: [rounded(v, digits) for v in vs] for t, vs in rounds.items()}
        rows.append(r)

    direct = {(c["round"], c["conns"], c["version"]): c for c in cells if c["target"] == "direct"}

    def added(c):
        d = direct.get((c["round"], c["conns"], c["version"]))
        return None if d is None or c["target"] == "direct" else c["p50_ms"] - d["p50_ms"]

    def share(c):
        d = direct.get((c["round"], c["conns"], c["version"]))
        return None if d is None else 100 * c["calls_per_s"] / d["calls_per_s"]

    for conns in args.conns:
        row(f"c={conns}: calls/s", "calls/s", lambda c: c["calls_per_s"], conns, digits=0)
        row(f"c={conns}: share of direct throughput", "%", share, conns, digits=1, skip=("direct",))
        row(f"c={conns}: p50", "ms", lambda c: c["p50_ms"], conns)
        row(f"c={conns}: p99", "ms", lambda c: c["p99_ms"], conns)
        row(f"c={conns}: p50 added to direct's", "ms", added, conns, skip=("direct",))
        row(f"c={conns}: the gateway's CPU per call", "µs", lambda c: c["cpu_us_per_call"], conns, digits=0,
            note="direct: the mock's own")
        row(f"c={conns}: the mock's CPU per call", "µs", lambda c: c["mock_cpu_us_per_call"], conns, digits=0)
        if args.modern:
            row(f"c={conns}, {MODERN}: calls/s", "calls/s", lambda c: c["calls_per_s"], conns, MODERN, digits=0)
            row(f"c={conns}, {MODERN}: p50", "ms", lambda c: c["p50_ms"], conns, MODERN)
            row(f"c={conns}, {MODERN}: the gateway's CPU per call", "µs", lambda c: c["cpu_us_per_call"], conns,
                MODERN, digits=0, skip=("direct",))
    if memory:
        r = {"section": "hop", "name": f"RSS per idle host session ({args.idle:,} held)", "unit": "KiB",
             "n": args.idle, "failed": 0, "errors": [], "median": None, "p99": None, "min": None, "max": None,
             "target": None, "target_met": None, "note": "direct: rmcp's server in the mock", "rounds": {}}
        for t, v in memory.items():
            r[t.replace("-", "_")] = round(v, 1)
        rows.append(r)
    for r in rows:
        r["note"] = "; ".join(x for x in [r["note"], "rounds: " + ", ".join(
            f"{t} {' / '.join(str(v) for v in vs)}" for t, vs in r.pop("rounds").items())] if x and x != "rounds: ")
    return rows


def markdown(rows, names):
    cols = [t.replace("-", "_") for t in names]
    out = ["| figure | unit | " + " | ".join(names) + " | note |", "|---|---|" + "---|" * len(names) + "---|"]
    for r in rows:
        out.append(f"| {r['name']} | {r['unit']} | " + " | ".join(
            "–" if r.get(c) is None else f"{r[c]:,}" for c in cols) + f" | {r['note']} |")
    return "\n".join(out)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "mcp-resilient"))
    p.add_argument("--seconds", type=int, default=10, help="per cell (default 10)")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--warmup", type=int, default=2, help="seconds of unrecorded calls per target first")
    p.add_argument("--conns", default="1,32", help="wrk connections per cell, comma-separated")
    p.add_argument("--idle", type=int, default=1000, help="idle host sessions held per target; 0: skip")
    p.add_argument("--only", default=",".join(TARGETS))
    p.add_argument("--modern", action="store_true", help=f"also serve's {MODERN} cells (no session)")
    p.add_argument("--save", help="a bench/results/*.json whose rows this run replaces")
    args = p.parse_args()
    args.only = [t.strip() for t in args.only.split(",")]
    args.conns = [int(c) for c in args.conns.split(",")]
    if "direct" not in args.only:
        args.only.insert(0, "direct")
    if subprocess.run(["which", "wrk"], capture_output=True).returncode:
        raise SystemExit("wrk missing: run scripts/hop/setup.sh")
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: (stop_all(), sys.exit(1)))
    began = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    uptime_before = open("/proc/loadavg").read().split()[:3]
    try:
        mock, targets = start(args.bin, args.only)
        memory = idle_memory(targets, args.idle) if args.idle else {}
        cells = []
        order = [t for t in TARGETS if t in targets]
        # Warm-up, not recorded: every path (pools, allocator, upstream session) in use once.
        for t in order:
            wrk_cell(targets[t], 4, args.warmup, VERSION, mock.pid, quiet=True)
        for rnd in range(args.rounds):
            for conns in args.conns:
                for t in (order if rnd % 2 == 0 else order[::-1]):
                    versions = [VERSION] + ([MODERN] if args.modern and t.startswith("serve") else [])
                    for version in versions:
                        cell = wrk_cell(targets[t], conns, args.seconds, version, mock.pid)
                        cell["round"] = rnd
                        cells.append(cell)
                    # The direct cell of a 2026-07-28 comparison is the 2025-11-25 one.
                    if t == "direct" and args.modern:
                        cells.append({**cell, "version": MODERN})
    finally:
        stop_all()
    uptime_after = open("/proc/loadavg").read().split()[:3]
    rows = rows_of(cells, memory, args)
    result = {"meta": {"measured": began[:10], "began": began, "seconds": args.seconds,
                       "rounds": args.rounds, "loadavg_before": uptime_before,
                       "loadavg_after": uptime_after, "bin": args.bin},
              "cells": cells, "memory": memory, "rows": rows}
    os.makedirs(os.path.join(ROOT, "target", "hop"), exist_ok=True)
    with open(os.path.join(ROOT, "target", "hop", "results.json"), "w") as f:
        json.dump(result, f, indent=2)
    print(f"\nloadavg (1, 5, 15 min) before: {' '.join(uptime_before)}, after: {' '.join(uptime_after)}")
    print(markdown(rows, [t for t in TARGETS if t in args.only]))
    if args.save:
        with open(args.save) as f:
            area = json.load(f)
        area["rows"] = rows
        area["meta"]["measured"] = began[:10]
        with open(args.save, "w") as f:
            json.dump(area, f, indent=2, ensure_ascii=False)
            f.write("\n")
        print(f"rows written to {args.save}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
