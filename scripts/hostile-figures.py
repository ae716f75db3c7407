#!/usr/bin/env python3
"""The release figures for BENCHMARKS.md's "hostile input" section that are about whole
processes (memory over time, time to exit), as a person would run them.

    cargo build --release --workspace --bins
    python3 scripts/hostile-figures.py [--quick]

Every server is the mock (`mcp-resilient mock-server`) on 127.0.0.1 or a stdio child; every
case is bounded in time and stops by itself. Memory is VmRSS / VmHWM from /proc/PID/status of
the process under test, sampled every 100 ms; times are wall clock from the step named. Prints
one Markdown table. The per-byte CPU figures of legacy SSE are the benchmark's section 11.
"""

import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "mcp-resilient")
QUICK = "--quick" in sys.argv
ROWS = []


def status_kib(pid, field):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except FileNotFoundError:
        return None
    return None


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


def wait_port(port, limit=15):
    """Waits until something listens on 127.0.0.1:port."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"nothing listens on {port} after {limit} s")


def admin(port, path):
    import urllib.request
    request = urllib.request.Request(f"http://127.0.0.1:{port}/_mock/{path}", data=b"{}",
                                     headers={"content-type": "application/json"})
    urllib.request.urlopen(request, timeout=10).read()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def row(case, figure, goal, met):
    ROWS.append((case, figure, goal, "met" if met else "**missed**"))


def send(proc, message):
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()


class Lines:
    """Lines from a pipe, read without blocking past a deadline."""

    def __init__(self, pipe):
        self.fd = pipe.fileno()
        os.set_blocking(self.fd, False)
        self.buf = b""
        self.eof = False

    def next(self, deadline):
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if self.eof or left <= 0:
                return None
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                chunk = os.read(self.fd, 1 << 16)
                if not chunk:
                    self.eof = True
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line


def start_proxy(upstream, log="warn"):
    env = dict(os.environ, RUST_LOG=log)
    err = tempfile.TemporaryFile()
    proc = subprocess.Popen(
        [BIN, "proxy", "--stdio", "--", BIN, "mock-server", "--transport", "stdio"] + upstream,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=err,
        env=env,
    )
    return proc, err


def initialize(proc, out):
    send(proc, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "hostile-figures", "version": "0"}}})
    deadline = time.monotonic() + 15
    while True:
        line = out.next(deadline)
        assert line is not None, "no initialize answer"
        if json.loads(line).get("id") == 0:
            break
    send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})


def call(id_, tool, args):
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call",
            "params": {"name": tool, "arguments": args}}


def upstream_pid(proc, out):
    send(proc, call(900, "whoami", {}))
    deadline = time.monotonic() + 15
    while True:
        line = out.next(deadline)
        assert line is not None, "no whoami answer"
        message = json.loads(line)
        if message.get("id") == 900:
            return message["result"]["structuredContent"]["pid"]


def proxy_flood():
    stall = 5 if QUICK else 30
    proc, err = start_proxy(["--hostile", "flood", "--flood-count", "100000000",
                             "--flood-bytes", "1024", "--flood-ms", str((stall + 5) * 1000)])
    out = Lines(proc.stdout)
    initialize(proc, out)
    for i in range(1, 21):
        send(proc, call(i, "echo", {"text": str(i)}))
    # The host reads nothing for `stall` seconds.
    peak, samples, start = 0, [], time.monotonic()
    while time.monotonic() - start < stall:
        rss = status_kib(proc.pid, "VmRSS") or 0
        peak = max(peak, rss)
        samples.append(rss)
        time.sleep(0.1)
    # It reads again: every answer arrives.
    answers, deadline = set(), time.monotonic() + 60
    while len(answers) < 20:
        line = out.next(deadline)
        assert line is not None, f"answers so far {sorted(answers)}"
        message = json.loads(line)
        if "id" in message:
            answers.add(message["id"])
        peak = max(peak, status_kib(proc.pid, "VmRSS") or 0)
    proc.stdin.close()
    while out.next(time.monotonic() + 30) is not None:
        pass
    proc.wait(30)
    err.seek(0)
    dropped = [l for l in err.read().decode(errors="replace").splitlines() if "slow host" in l]
    first = samples[len(samples) // 10] if samples else 0
    row(f"proxy, stdio upstream flooding 1 KiB log messages, host reads nothing for {stall} s",
        f"peak RSS {peak / 1024:.0f} MiB (at 10 %: {first / 1024:.0f} MiB, at the end: "
        f"{samples[-1] / 1024:.0f} MiB); {len(answers)}/20 answers after it reads again; "
        f"{len(dropped)} drop report lines", "< 100 MiB, every answer", peak < 100 * 1024
        and len(answers) == 20 and len(dropped) > 0)


def proxy_sigterm():
    proc, err = start_proxy([])
    out = Lines(proc.stdout)
    initialize(proc, out)
    child = upstream_pid(proc, out)
    began = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    proc.wait(10)
    took = time.monotonic() - began
    deadline = time.monotonic() + 2
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.01)
    row("proxy: SIGTERM with stdin held open", f"exit in {took * 1000:.0f} ms (code "
        f"{proc.returncode}); upstream child {'alive' if alive(child) else 'gone'}",
        "< 2 s, child reaped", took < 2 and not alive(child))


def proxy_eof_hung(in_flight):
    port = free_port()
    server = subprocess.Popen([BIN, "mock-server", "--transport", "http", "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port)
        env = dict(os.environ, RUST_LOG="warn")
        proc = subprocess.Popen([BIN, "proxy", "--name", "mock", "--url", f"http://127.0.0.1:{port}/mcp",
                                 "--protocol", "2025-11-25"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        out = Lines(proc.stdout)
        initialize(proc, out)
        # One answered call, then the server hangs.
        send(proc, call(1, "echo", {"text": "up"}))
        assert out.next(time.monotonic() + 15) is not None, "no answer to the first call"
        admin(port, "hang")
        if in_flight:
            send(proc, call(3, "echo", {"text": "never answered"}))
        began = time.monotonic()
        proc.stdin.close()
        proc.wait(30)
        took = time.monotonic() - began
        what = "with a call in flight" if in_flight else "nothing in flight"
        row(f"proxy: stdin EOF, hung 2025-11-25 HTTP upstream, {what}",
            f"exit in {took * 1000:.0f} ms", "< 2 s", took < 2)
    finally:
        server.kill()
        server.wait()


def measured(argv, timeout):
    """Runs argv; returns (seconds, exit code, peak RSS KiB, stderr)."""
    err = tempfile.TemporaryFile()
    began = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
    peak, status, usage = 0, None, None
    while time.monotonic() - began < timeout:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        peak = max(peak, status_kib(proc.pid, "VmHWM") or 0)
        time.sleep(0.02)
    else:
        proc.kill()
        _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    took = time.monotonic() - began
    err.seek(0)
    return took, proc.returncode, max(peak, usage.ru_maxrss), \
        err.read().decode(errors="replace")


class MockHttp:
    """`mcp-resilient mock-server --transport http` with `flags` on a free port, killed on exit."""

    def __init__(self, *flags):
        self.port = free_port()
        self.proc = subprocess.Popen([BIN, "mock-server", "--transport", "http", "--port",
                                      str(self.port), *flags], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)

    def __enter__(self):
        wait_port(self.port)
        return f"http://127.0.0.1:{self.port}/mcp"

    def __exit__(self, *_):
        self.proc.kill()
        self.proc.wait()


def huge_pages():
    pages = ["--hostile", "huge-pages", "--page-bytes", str(4 << 20), "--pages"]
    with MockHttp(*pages, "100") as url:
        took, code, peak, err = measured([BIN, "tools", "--url", url], 30)
        named = "max_list_bytes" in err
        row("`tools --url`, 100 pages of 4 MiB, default limits",
            f"fails in {took:.2f} s, exit {code}, peak RSS {peak / 1024:.0f} MiB, cause names "
            f"the limit: {'yes' if named else 'no: ' + err[-200:]}",
            "< 5 s, < 150 MiB, names it", took < 5 and peak < 150 * 1024 and named)
    # Raised limits let a larger list through: 5 pages of 4 MiB (about 23 000 tools).
    with MockHttp(*pages, "5") as url:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"mcpServers": {"big": {"url": url, "limits": {
                "maxListBytes": "32MiB", "maxListItems": 50000}}}}, f)
        took, code, peak, err = measured([BIN, "tools", "--config", f.name, "--server", "big"],
                                         60)
        os.unlink(f.name)
        row("`tools`, 5 pages of 4 MiB, `limits` `maxListBytes` 32 MiB, `maxListItems` 50 000",
            f"exit {code} in {took:.2f} s, peak RSS {peak / 1024:.0f} MiB",
            "lists them (exit 0)", code == 0)


def discover_empty():
    with MockHttp("--discover-refusal", "empty-result") as url:
        took, code, _, err = measured([BIN, "tools", "--url", url], 30)
        row("`tools --url` (default `protocol`), `server/discover` answered with `{}`",
            f"exit {code} in {took * 1000:.0f} ms", "lists its tools, < 1 s",
            code == 0 and took < 1)


def main():
    if not os.path.exists(BIN):
        sys.exit(f"{BIN} is missing: cargo build --release --workspace --bins")
    for case in (huge_pages, discover_empty, proxy_sigterm, lambda: proxy_eof_hung(False),
                 lambda: proxy_eof_hung(True), proxy_flood):
        try:
            case()
        except Exception as e:  # a case that breaks is a row, not the end of the run
            row(getattr(case, "__name__", "case"), f"failed: {e!r}", "-", False)
    print("| case | measured | goal | |")
    print("|---|---|---|---|")
    for r in ROWS:
        print("| " + " | ".join(r) + " |")
    sys.exit(0 if all(r[3] == "met" for r in ROWS) else 1)


if __name__ == "__main__":
    main()
