#!/usr/bin/env python3
"""The Done-when run of issue 25: many hosts on the official Python and TypeScript SDKs call
through a gateway to an upstream that is SIGKILLed and restarted several times; what the hosts
saw is counted. Everything listens on 127.0.0.1; every wait has a deadline.

    scripts/serve-fleet/run.py [--bin B] [--hosts 50] [--kills 5] [--every 5] [--peek-ms 300]
                               [--only serve-stdio,serve-http,direct,serve-calm]

Targets:
  serve-stdio  mcp-resilient serve, the mock server as its stdio child (killed; serve starts it)
  serve-http   mcp-resilient serve, the mock server over Streamable HTTP (killed and started
               again on the same port by this script)
  direct       the hosts straight to the mock over HTTP, no kill: the latency baseline
  serve-calm   serve in front of the HTTP mock, no kill: latency through serve
  mcp-proxy    npm mcp-proxy 6.7 (`--host 127.0.0.1 --server stream`), the mock as its stdio
               child (every such child killed at each kill; mcp-proxy is expected to start it)

supergateway 4.0 is installed by setup.sh but not run: its Streamable HTTP listener binds every
interface and has no option to bind loopback only.

Needs the Python SDK venv (scripts/counterparts/setup.sh, VENV=target/serve-fleet-venv) and the
TypeScript SDK (scripts/counterparts/setup-ts.sh, target/counterparts-ts). Prints one JSON
object per target, then a markdown table (BENCHMARKS.md, "Serve: many hosts through kills").
"""

import argparse
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV = os.environ.get("VENV", os.path.join(ROOT, "target", "serve-fleet-venv"))
TS_DIR = os.path.join(ROOT, "target", "counterparts-ts")
HERE = os.path.dirname(os.path.abspath(__file__))
START_LIMIT = 30.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Proc:
    """A child whose stderr (or stdout) lines are kept, and waited on with deadlines."""

    def __init__(self, argv, stream="stderr"):
        self.lines = []
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name in ("stdout", "stderr"):
            threading.Thread(target=self._read, args=(getattr(self.proc, name),), daemon=True).start()

    def _read(self, pipe):
        for line in pipe:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, pattern, limit=START_LIMIT):
        deadline = time.time() + limit
        while time.time() < deadline:
            for line in list(self.lines):
                m = re.search(pattern, line)
                if m:
                    return m.group(0)
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise SystemExit(f"no {pattern!r} within {limit}s: {self.lines[-20:]}")

    def stop(self, sig=signal.SIGTERM, limit=10.0):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(limit)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(limit)


def mock_http(bin_, port):
    mock = Proc([bin_, "mock-server", "--transport", "http", "--port", str(port)])
    STARTED.append(mock)
    mock.wait_for(r"LISTENING")
    return mock


SERVE_FLAGS: list = []


def serve(bin_, upstream):
    gateway = Proc([bin_, "serve", "--listen", "127.0.0.1:0", "-v", *SERVE_FLAGS, *upstream])
    STARTED.append(gateway)
    url = gateway.wait_for(r"http://127\.0\.0\.1:\d+/mcp")
    return gateway, url


def wait_ready(readyz, limit=START_LIMIT):
    """Waits until serve's /readyz answers 200 (its shared upstream is ready)."""
    import urllib.error
    import urllib.request
    deadline = time.time() + limit
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(readyz, timeout=2) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.1)
    raise SystemExit(f"{readyz} not ready within {limit}s")


def wait_port(port, limit=START_LIMIT):
    deadline = time.time() + limit
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"nothing listens on {port} within {limit}s")


def mocks_under(pid):
    """The mock servers among the descendants of `pid` (the upstreams a gateway started)."""
    out = subprocess.run(["ps", "-e", "-o", "pid=,ppid=,args="], capture_output=True, text=True)
    rows = [line.split(None, 2) for line in out.stdout.splitlines() if line.strip()]
    below, found = {pid}, []
    changed = True
    while changed:
        changed = False
        for row in rows:
            child, parent = int(row[0]), int(row[1])
            if parent in below and child not in below:
                below.add(child)
                changed = True
                if len(row) > 2 and "mock-server" in row[2]:
                    found.append(child)
    return found


def start_hosts(url, seconds, peek_ms, ts=0, py25=0, py26=0):
    """Starts `ts` TypeScript hosts (2025-11-25) and `py25`/`py26` Python hosts at 2025-11-25 and
    2026-07-28, one process per kind that has any; returns the processes."""
    python, script = os.path.join(VENV, "bin", "python"), os.path.join(HERE, "py_hosts.py")
    argv = [[python, script, url, str(n), str(seconds), str(peek_ms), era]
            for n, era in ((py25, "2025"), (py26, "2026")) if n]
    procs = [subprocess.Popen(a, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
             for a in argv]
    if ts:
        procs.append(subprocess.Popen(["node", os.path.join(HERE, "ts_hosts.mjs"), url, str(ts),
                                       str(seconds), str(peek_ms)], cwd=TS_DIR,
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True))
    STARTED.extend(procs)
    return procs


def hosts(url, count, seconds, peek_ms):
    """Starts the Python and the TypeScript hosts (half each, 2025-11-25); returns the processes."""
    return start_hosts(url, seconds, peek_ms, ts=count // 2, py25=count - count // 2)


def stop_started():
    """Stops whatever the run started (SIGKILL; children waited for) and forgets it."""
    for proc in STARTED:
        if isinstance(proc, Proc):
            proc.stop(signal.SIGKILL)
        elif proc.poll() is None:
            proc.kill()
            proc.wait(10)
    STARTED.clear()


def collect(procs, limit):
    out = {"calls": [], "sessions_lost": 0, "sessions": 0}
    for p in procs:
        stdout, _ = p.communicate(timeout=limit)
        data = json.loads(stdout.strip().splitlines()[-1])
        out["calls"] += data["calls"]
        out["sessions_lost"] += data["sessions_lost"]
        out["sessions"] += data["sessions"]
    return out


def percentile(values, q):
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def analyse(name, data, kills, replays):
    calls = data["calls"]
    ok = [c for c in calls if c[4] == "ok"]
    not_run = [c for c in calls if c[4] == "tool_error" and "was not run" in c[5]]
    may_have_run = [c for c in calls if c[4] == "tool_error" and "may have run" in c[5]]
    other = [c for c in calls if c[4] == "error" or (c[4] == "tool_error" and c not in not_run + may_have_run)]
    spanning = [c for c in calls if c[1] == "peek" and any(c[2] < k < c[3] for k in kills)]
    recover = []
    for k in kills:
        after = [c[3] for c in ok if c[2] > k]
        if after:
            recover.append(min(after) - k)
    calm = [c[3] - c[2] for c in ok if c[1] == "echo"
            and not any(k - 0.5 < c[3] and c[2] < k + 12 for k in kills)]
    return {
        "target": name,
        "hosts_sessions_opened": data["sessions"],
        "sessions_lost": data["sessions_lost"],
        "calls": len(calls),
        "ok": len(ok),
        "failed_not_run": len(not_run),
        "failed_may_have_run": len(may_have_run),
        "failed_other": len(other),
        "other_examples": sorted({c[5][:120] for c in other})[:5],
        "peeks_in_flight_at_a_kill": len(spanning),
        "of_which_answered": sum(1 for c in spanning if c[4] == "ok"),
        "replays_logged_by_serve": replays,
        "recover_s_max": round(max(recover), 3) if recover else None,
        "recover_s": [round(r, 2) for r in recover],
        "echo_p50_ms": round(1000 * percentile(calm, 0.5), 2) if calm else None,
        "echo_p99_ms": round(1000 * percentile(calm, 0.99), 2) if calm else None,
    }


STARTED: list = []


def run(target, args):
    """Runs one target; whatever it started is stopped when it ends, by error too."""
    try:
        return run_target(target, args)
    finally:
        stop_started()


def run_target(target, args):
    bin_ = args.bin
    kills, mock, gateway, replays = [], None, None, None
    if target in ("serve-http", "serve-calm", "direct"):
        port = free_port()
        mock = mock_http(bin_, port)
        upstream = ["--url", f"http://127.0.0.1:{port}/mcp"]
    else:
        upstream = ["--stdio", "--", bin_, "mock-server", "--transport", "stdio"]
    if target == "direct":
        url = f"http://127.0.0.1:{port}/mcp"
    elif target == "mcp-proxy":
        gw_port = free_port()
        tool = os.path.join(ROOT, "target", "serve-fleet-gw", "node_modules", ".bin", "mcp-proxy")
        gateway = Proc(["node", tool, "--host", "127.0.0.1", "--port", str(gw_port), "--server",
                        "stream", "--", *upstream[2:]])
        STARTED.append(gateway)
        url = f"http://127.0.0.1:{gw_port}/mcp"
        wait_port(gw_port)
    else:
        gateway, url = serve(bin_, upstream)
        wait_ready(url.rsplit("/", 1)[0] + "/readyz")
    killing = target in ("serve-stdio", "serve-http", "mcp-proxy")
    seconds = args.warmup + (args.kills * args.every if killing else args.calm) + args.tail
    procs = hosts(url, args.hosts, seconds, args.peek_ms)
    started = time.time()
    if killing:
        for i in range(args.kills):
            time.sleep(max(0.0, started + args.warmup + i * args.every - time.time()))
            if target in ("serve-stdio", "mcp-proxy"):
                victims = mocks_under(gateway.proc.pid)
                kills.append(time.time())
                for victim in victims:
                    os.kill(victim, signal.SIGKILL)
            else:
                kills.append(time.time())
                mock.stop(signal.SIGKILL)
                time.sleep(args.down)
                mock = mock_http(bin_, port)
    data = collect(procs, seconds + 120)
    if gateway:
        gateway.stop()
        if target != "mcp-proxy":
            replays = sum(1 for line in gateway.lines if "sending it again to the next" in line)
    if mock:
        mock.stop()
    return analyse(target, data, kills, replays)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "mcp-resilient"))
    parser.add_argument("--hosts", type=int, default=50)
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--every", type=float, default=5.0)
    parser.add_argument("--down", type=float, default=0.5, help="HTTP upstream: seconds dead")
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--tail", type=float, default=5.0)
    parser.add_argument("--calm", type=float, default=10.0)
    parser.add_argument("--peek-ms", type=int, default=300)
    parser.add_argument("--only", default="direct,serve-calm,serve-stdio,serve-http")
    parser.add_argument("--serve-flag", action="append", default=[],
                        help="a flag for serve (repeatable), e.g. --serve-flag=--reconnect-max=2s")
    args = parser.parse_args()
    SERVE_FLAGS.extend(args.serve_flag)
    results = []
    for target in args.only.split(","):
        result = run(target, args)
        print(json.dumps(result), flush=True)
        results.append(result)
    print()
    print("| target | host sessions lost | calls | failed, not run | failed, may have run | other failures "
          "| peeks in flight at a kill (answered) | replays (serve log) | slowest recovery | echo p50 / p99 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['target']} | {r['sessions_lost']} | {r['calls']} | {r['failed_not_run']} "
              f"| {r['failed_may_have_run']} | {r['failed_other']} | {r['peeks_in_flight_at_a_kill']} "
              f"({r['of_which_answered']}) | {r['replays_logged_by_serve'] if r['replays_logged_by_serve'] is not None else '—'} "
              f"| {r['recover_s_max'] if r['recover_s_max'] is not None else '—'} s "
              f"| {r['echo_p50_ms']} / {r['echo_p99_ms']} ms |")


if __name__ == "__main__":
    sys.exit(main())
