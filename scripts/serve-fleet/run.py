#!/usr/bin/env python3
"""The Done-when run of issue 25: many hosts on the official Python and TypeScript SDKs call
through a gateway to an upstream that is SIGKILLed and restarted several times; what the hosts
saw is counted. Every address the hosts and the script target is 127.0.0.1; every wait has a
deadline.

    scripts/serve-fleet/isolated.sh [--bin B] [--hosts 50] [--kills 5] [--every 5] [--peek-ms 300]
                                    [--after-ready S [--slack 25]] [--mixed]
                                    [--only direct,serve-stdio,...] [--serve-flag=--reconnect-max=2s]
                                    [--save DIR]

isolated.sh runs this script inside a network namespace of its own whose only interface is
loopback (`unshare --net`, then `ip link set lo up`): there a gateway that binds every interface
(supergateway 4.0 has no option to bind loopback only) can reach nothing but 127.0.0.1. The
supergateway targets refuse to run outside such a namespace; the others bind 127.0.0.1 anyway
and may run with `python3 run.py` directly.

Targets (a name with `-calm` after it, e.g. `supergateway-calm`: the same, no kill, --calm s; the
latency figures come from those and from `direct`):
  direct       the hosts straight to the mock over HTTP, no kill: the latency baseline
  serve-stdio  mcp-resilient serve, the mock server as its stdio child (killed; serve starts it)
  serve-http   mcp-resilient serve, the mock server over Streamable HTTP (killed and started
               again on the same port by this script); `serve-calm` is serve-http-calm
  mcp-proxy    npm mcp-proxy 6.7 (`--host 127.0.0.1 --server stream`), the mock as its stdio
               child (every such child killed at each kill; mcp-proxy is expected to start it)
  supergateway-stateful
               npm supergateway 4.0, `--stdio MOCK --outputTransport streamableHttp --stateful`:
               one stdio child per host session (every such child killed at each kill)
  supergateway the same without --stateful: one stdio child per HTTP request (every child alive
               at a kill is killed)
  contextforge IBM ContextForge (PyPI mcp-contextforge-gateway 1.1, scripts/serve-fleet/setup.sh,
               venv target/serve-fleet-cf), one uvicorn worker, sqlite in a fresh folder under
               target/, a JWT made with its own create_jwt_token; the HTTP mock registered
               through its API (POST /gateways, then a virtual server with the mock's echo and
               peek: POST /servers); the hosts call /servers/<id>/mcp with the token, tools
               `mock-echo` and `mock-peek`; its rate limiter is off (by default 100 MCP
               requests a minute per user, and the hosts share one user). The mock is killed
               and started again on the same port by this script, as for serve-http.

Needs the Python SDK venv (scripts/counterparts/setup.sh, VENV=target/serve-fleet-venv), the
TypeScript SDK (scripts/counterparts/setup-ts.sh, target/counterparts-ts) and the gateways
(scripts/serve-fleet/setup.sh installs all of it). Prints one JSON object per target, then a
markdown table (BENCHMARKS.md, "serve through upstream kills").
"""

import argparse
import json
import os
import re
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV = os.environ.get("VENV", os.path.join(ROOT, "target", "serve-fleet-venv"))
TS_DIR = os.path.join(ROOT, "target", "counterparts-ts")
HERE = os.path.dirname(os.path.abspath(__file__))
GW = os.path.join(ROOT, "target", "serve-fleet-gw", "node_modules")
CF = os.path.join(ROOT, "target", "serve-fleet-cf")
START_LIMIT = 30.0
# ContextForge imports a great deal before it listens (about 10 s on this machine when idle).
CF_START_LIMIT = 120.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Proc:
    """A child whose stderr (or stdout) lines are kept, and waited on with deadlines."""

    def __init__(self, argv, stream="stderr", env=None, cwd=None):
        self.lines = []
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env=env, cwd=cwd, errors="replace")
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
    """Waits until `readyz` answers 200 (serve: its shared upstream is ready)."""
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


def descendants(pid):
    """The processes below `pid`, as (pid, command line) pairs."""
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
                found.append((child, row[2] if len(row) > 2 else ""))
    return found


def mocks_under(pid):
    """The mock servers among the descendants of `pid` (the upstreams a gateway started): the
    mock itself, not a shell that a gateway runs it with (`sh -c`)."""
    return [child for child, args in descendants(pid)
            if "mock-server" in args and not args.startswith(("/bin/sh", "sh "))]


def start_hosts(url, seconds, peek_ms, ts=0, py25=0, py26=0, env=None):
    """Starts `ts` TypeScript hosts (2025-11-25) and `py25`/`py26` Python hosts at 2025-11-25 and
    2026-07-28, one process per kind that has any; returns the processes. `env`: variables added
    to theirs (MCP_BEARER, TOOL_PREFIX)."""
    python, script = os.path.join(VENV, "bin", "python"), os.path.join(HERE, "py_hosts.py")
    env = {**os.environ, **(env or {})}
    argv = [[python, script, url, str(n), str(seconds), str(peek_ms), era]
            for n, era in ((py25, "2025"), (py26, "2026")) if n]
    procs = [subprocess.Popen(a, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
             for a in argv]
    if ts:
        procs.append(subprocess.Popen(["node", os.path.join(HERE, "ts_hosts.mjs"), url, str(ts),
                                       str(seconds), str(peek_ms)], cwd=TS_DIR, env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True))
    STARTED.extend(procs)
    return procs


def hosts(url, count, seconds, peek_ms, env=None, mixed=False):
    """Starts the Python and the TypeScript hosts (half each, 2025-11-25; `mixed`: half the
    Python hosts at 2026-07-28, the TypeScript SDK speaking only 2025-11-25); returns the
    processes."""
    ts = count // 2
    py26 = (count - ts) // 2 if mixed else 0
    return start_hosts(url, seconds, peek_ms, ts=ts, py25=count - ts - py26, py26=py26, env=env)


def stop_tree(proc, sig=signal.SIGTERM):
    """Stops `proc` and then whatever it had started and left (the mocks a gateway started,
    ContextForge.s child processes), by their ids, found before the signal."""
    below = [child for child, _ in descendants(proc.proc.pid)] if proc.proc.poll() is None else []
    proc.stop(sig)
    for pid in below:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def stop_started():
    """Stops whatever the run started (SIGKILL; children waited for) and forgets it, and what
    those started in turn (by their process ids, found below them)."""
    for proc in STARTED:
        if isinstance(proc, Proc):
            stop_tree(proc, signal.SIGKILL)
        elif proc.poll() is None:
            proc.kill()
            proc.wait(10)
    STARTED.clear()
    for folder in FOLDERS:
        shutil.rmtree(folder, ignore_errors=True)
    FOLDERS.clear()


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


def analyse(name, data, kills, replays, victims=None, log=None):
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
        "echo_calm_calls": len(calm),
        "failed_by_tool": {t: sum(1 for c in calls if c[1] == t and c[4] != "ok") for t in ("echo", "peek")},
        "killed_per_kill": victims,
        "gateway_log": log,
    }


STARTED: list = []
FOLDERS: list = []


def run(target, args):
    """Runs one target; whatever it started is stopped when it ends, by error too."""
    try:
        return run_target(target, args)
    finally:
        stop_started()


def only_loopback():
    """True when the only network interface here is loopback (inside isolated.sh's namespace)."""
    # /proc/net/dev is this process's namespace's (/sys/class/net is the one sysfs was mounted in).
    try:
        with open("/proc/net/dev") as table:
            names = [line.split(":")[0].strip() for line in table.readlines()[2:]]
    except OSError:
        return False
    return names == ["lo"]


def supergateway(child, stateful):
    """supergateway 4.0 with the mock as its stdio child, Streamable HTTP out. It binds every
    interface: only inside a namespace whose only interface is loopback (isolated.sh)."""
    if not only_loopback():
        raise SystemExit("supergateway binds every interface: run it through scripts/serve-fleet/isolated.sh")
    port = free_port()
    tool = os.path.join(GW, "supergateway", "dist", "index.js")
    gateway = Proc(["node", tool, "--stdio", " ".join(child), "--outputTransport", "streamableHttp",
                    "--port", str(port), *(["--stateful"] if stateful else [])])
    STARTED.append(gateway)
    wait_port(port)
    return gateway, f"http://127.0.0.1:{port}/mcp"


def cf_api(base, token, method, path, body=None, limit=60):
    """One call to ContextForge's REST API; returns the decoded JSON answer."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method, headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=limit) as answer:
            return json.loads(answer.read())
    except urllib.error.HTTPError as error:
        raise SystemExit(f"ContextForge {method} {path}: {error.code} {error.read()[:500]!r}")


def contextforge(mock_url):
    """ContextForge in front of the HTTP mock: started with sqlite in a fresh folder and secrets
    of its own, the mock registered and put in a virtual server through its API. Returns the
    gateway, the hosts' URL and the variables the hosts need (token, tool prefix)."""
    folder = tempfile.mkdtemp(prefix="serve-fleet-cf-", dir=os.path.join(ROOT, "target"))
    FOLDERS.append(folder)
    port = free_port()
    jwt_secret = secrets.token_hex(32)
    env = {**os.environ,
           "HOST": "127.0.0.1", "PORT": str(port),
           "DATABASE_URL": f"sqlite:///{folder}/mcp.db",
           "JWT_SECRET_KEY": jwt_secret,
           "AUTH_ENCRYPTION_SECRET": secrets.token_hex(32),
           "PLATFORM_ADMIN_EMAIL": "admin@example.com",
           "PLATFORM_ADMIN_PASSWORD": "Aa-" + secrets.token_hex(12) + "!",
           "DEFAULT_USER_PASSWORD": "Bb-" + secrets.token_hex(12) + "!",
           # The mock is on loopback, which its SSRF guard refuses by default.
           "SSRF_ALLOW_LOCALHOST": "true",
           "MCPGATEWAY_UI_ENABLED": "false",
           "MCPGATEWAY_ADMIN_API_ENABLED": "false",
           # No Redis here: its caches in memory (the default is the database).
           "CACHE_TYPE": "memory",
           # Its rate limiter (on by default) allows one user 100 MCP requests a minute, then locks
           # the user out for 15 minutes; the 50 hosts share one token, so it is off.
           "RATE_LIMITING_ENABLED": "false"}
    gateway = Proc([os.path.join(CF, "bin", "mcpgateway"), "--host", "127.0.0.1", "--port", str(port)],
                   env=env, cwd=folder)
    STARTED.append(gateway)
    base = f"http://127.0.0.1:{port}"
    wait_ready(base + "/health", CF_START_LIMIT)
    made = subprocess.run([os.path.join(CF, "bin", "python"), "-m", "mcpgateway.utils.create_jwt_token",
                           "--username", "admin@example.com", "--admin", "--exp", "120",
                           "--secret", jwt_secret], env=env, cwd=folder, capture_output=True,
                          text=True, timeout=60)
    token = made.stdout.strip().splitlines()[0] if made.stdout.strip() else ""
    if not token:
        raise SystemExit(f"ContextForge's create_jwt_token made no token: {made.stderr[-500:]}")
    registered = cf_api(base, token, "POST", "/gateways",
                        {"name": "mock", "url": mock_url, "transport": "STREAMABLEHTTP"})
    tools = cf_api(base, token, "GET", "/tools")
    tools = tools if isinstance(tools, list) else tools.get("items", tools.get("data", []))
    wanted = [t["id"] for t in tools if t.get("gatewayId") == registered["id"]
              and t.get("originalName") in ("echo", "peek")]
    if len(wanted) != 2:
        raise SystemExit(f"ContextForge lists no echo and peek of the mock: {[t.get('name') for t in tools]}")
    server = cf_api(base, token, "POST", "/servers",
                    {"server": {"name": "fleet", "associated_tools": wanted}})
    return gateway, f"{base}/servers/{server['id']}/mcp", {"MCP_BEARER": token, "TOOL_PREFIX": "mock-"}


def log_summary(gateway):
    """What a gateway wrote that looks like an error: how many lines, and a few different ones."""
    if gateway is None:
        return None
    bad = [line for line in gateway.lines if re.search(r"error|fail|exit|warn", line, re.I)
           and '"jsonrpc"' not in line]
    shapes = {}
    for line in bad:
        shapes.setdefault(re.sub(r"[0-9a-f]{8,}|\d+", "N", line)[:160], line[:300])
    return {"lines": len(gateway.lines), "error_like": len(bad), "examples": list(shapes.values())[:8]}


def run_target(target, args):
    bin_ = args.bin
    base = target[:-len("-calm")] if target.endswith("-calm") else target
    base = "serve-http" if base == "serve" else base
    killing = base != "direct" and not target.endswith("-calm")
    kills, victims, mock, gateway, replays, env = [], [], None, None, None, None
    http_upstream = base in ("direct", "serve-http", "contextforge")
    child = [bin_, "mock-server", "--transport", "stdio"]
    if http_upstream:
        port = free_port()
        mock = mock_http(bin_, port)
        mock_url = f"http://127.0.0.1:{port}/mcp"
    if base == "direct":
        url = mock_url
    elif base == "mcp-proxy":
        gw_port = free_port()
        tool = os.path.join(GW, ".bin", "mcp-proxy")
        gateway = Proc(["node", tool, "--host", "127.0.0.1", "--port", str(gw_port), "--server",
                        "stream", "--", *child])
        STARTED.append(gateway)
        url = f"http://127.0.0.1:{gw_port}/mcp"
        wait_port(gw_port)
    elif base in ("supergateway", "supergateway-stateful"):
        gateway, url = supergateway(child, stateful=base == "supergateway-stateful")
    elif base == "contextforge":
        gateway, url, env = contextforge(mock_url)
    elif base in ("serve-stdio", "serve-http"):
        gateway, url = serve(bin_, ["--url", mock_url] if http_upstream else ["--stdio", "--", *child])
        wait_ready(url.rsplit("/", 1)[0] + "/readyz")
    else:
        raise SystemExit(f"unknown target {target}")
    seconds = args.warmup + (args.kills * args.every if killing else args.calm) + args.tail
    after_ready = args.after_ready is not None and killing
    if after_ready:
        if not base.startswith("serve"):
            raise SystemExit("--after-ready reads serve's log: serve-stdio and serve-http only")
        seconds += args.slack
    procs = hosts(url, args.hosts, seconds, args.peek_ms, env, mixed=args.mixed)
    started = time.time()
    if killing:
        for i in range(args.kills):
            at = started + args.warmup + i * args.every
            if after_ready and i > 0:
                # The upstream was restarted: serve's log says the previous kill's outage ended
                # (one `recovered` line per kill), and it has been back for --after-ready s.
                back = recovered(gateway, i, started + seconds - args.tail - time.time())
                if back is None:
                    print(f"{target}: not recovered from kill {i} in time; "
                          f"{i} kills made", file=sys.stderr)
                    break
                at = max(at, back + args.after_ready)
            if at > started + seconds - args.tail:
                print(f"{target}: kill {i + 1} would fall in the tail; {i} kills made",
                      file=sys.stderr)
                break
            time.sleep(max(0.0, at - time.time()))
            if http_upstream:
                kills.append(time.time())
                victims.append(1)
                mock.stop(signal.SIGKILL)
                time.sleep(args.down)
                mock = mock_http(bin_, port)
            else:
                found = mocks_under(gateway.proc.pid)
                kills.append(time.time())
                for victim in found:
                    try:
                        os.kill(victim, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                victims.append(len(found))
    data = collect(procs, seconds + 120)
    if gateway:
        stop_tree(gateway)
        if base.startswith("serve"):
            replays = sum(1 for line in gateway.lines if "sending it again to the next" in line)
    if args.save:
        os.makedirs(args.save, exist_ok=True)
        with open(os.path.join(args.save, f"{target}.json"), "w") as out:
            json.dump({"kills": kills, "killed_per_kill": victims, **data}, out)
        if gateway:
            with open(os.path.join(args.save, f"{target}.gateway.log"), "w") as out:
                out.write("\n".join(gateway.lines) + "\n")
    if mock:
        mock.stop()
    return analyse(target, data, kills, replays, victims if killing else None, log_summary(gateway))


def recovered(gateway, count, limit):
    """When serve's log had its `count`-th `recovered` line (the time this script saw it), or
    None if it did not within `limit` seconds."""
    deadline = time.time() + max(0.0, limit)
    while True:
        if sum(1 for line in list(gateway.lines) if "downtime_ms=" in line) >= count:
            return time.time()
        if time.time() >= deadline or gateway.proc.poll() is not None:
            return None
        time.sleep(0.02)


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
    parser.add_argument("--after-ready", type=float,
                        help="serve targets: each kill also waits until serve has recovered from "
                        "the previous one and this many seconds more (the upstream is killed, "
                        "restarted, then killed again); without it kills are every --every s")
    parser.add_argument("--mixed", action="store_true",
                        help="half the Python hosts speak 2026-07-28 (the TypeScript SDK does not)")
    parser.add_argument("--slack", type=float, default=25.0,
                        help="with --after-ready: how much longer the hosts run, for the outages")
    parser.add_argument("--only", default="direct,serve-calm,serve-stdio,serve-http")
    parser.add_argument("--save", help="a folder: each target's calls and kill times (TARGET.json) "
                        "and its gateway's output (TARGET.gateway.log) are written there")
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
    direct = [r for r in results if r["target"] == "direct" and r["echo_p50_ms"] is not None]
    if direct:
        # Against the mean of the `direct` runs of this invocation (a run at each end shows drift).
        p50 = statistics.mean(r["echo_p50_ms"] for r in direct)
        p99 = statistics.mean(r["echo_p99_ms"] for r in direct)
        print(f"Added echo latency, calm runs against `direct` (p50 {p50:.1f} ms, p99 {p99:.1f} ms):")
        for r in results:
            if r["target"].endswith("-calm") and r["echo_p50_ms"] is not None:
                print(f"  {r['target']}: p50 {r['echo_p50_ms'] - p50:+.1f} ms, "
                      f"p99 {r['echo_p99_ms'] - p99:+.1f} ms ({r['echo_calm_calls']} calls)")
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
