"""W3C trace context in `_meta` against the official SDK servers (docs/counterparts.md, j).

A host (this script, plain JSON-RPC lines on the proxy's stdin) sends `tools/call` with
`_meta.traceparent` and `_meta.tracestate` to `mcp-resilient proxy`, in front of the Python SDK
server (scripts/counterparts/server.py) or the TypeScript SDK server (ts/server.mjs). The proxy
continues the host's trace: its upstream call carries the traceparent of its own client span,
the host's trace id with a new span id. OTLP is pointed at a closed loopback port, so the SDK
tracer is real (spans get ids) and its exports fail quietly. Each server answers `echo` and
`meta` (the trace context it received); one JSON line per run.

Usage (from the repository root, after setup.sh and setup-ts.sh):
  target/counterparts-venv/bin/python scripts/counterparts/trace.py BIN [PORT_BASE]
"""

import json
import os
import socket
import subprocess
import re
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = sys.argv[1]
BASE = int(sys.argv[2]) if len(sys.argv) > 2 else 18790
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
HOST_SPAN = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE}-{HOST_SPAN}-01"
TRACESTATE = "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"


def wait_port(port, limit=20):
    deadline = time.time() + limit
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"nothing listens on {port}")


def server(kind, port):
    if kind == "python":
        cmd = [sys.executable, os.path.join(ROOT, "scripts/counterparts/server.py"), "--port", str(port)]
        return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cmd = ["node", os.path.join(ROOT, "scripts/counterparts/ts/server.mjs"), "--port", str(port)]
    return subprocess.Popen(cmd, cwd=os.path.join(ROOT, "target/counterparts-ts"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def run(kind, protocol, port):
    upstream = server(kind, port)
    proxy = None
    try:
        wait_port(port)
        env = dict(os.environ, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="http://127.0.0.1:9/v1/traces",
                   OTEL_METRICS_EXPORTER="none")
        log = tempfile.TemporaryFile(mode="w+")
        proxy = subprocess.Popen(
            [BIN, "-v", "proxy", "--url", f"http://127.0.0.1:{port}/mcp", "--transport", "http",
             "--protocol", protocol, "--name", kind],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env, text=True)

        def ask(message):
            proxy.stdin.write(json.dumps(message) + "\n")
            proxy.stdin.flush()
            if "id" not in message:
                return None
            while True:
                line = proxy.stdout.readline()
                if not line:
                    raise SystemExit("the proxy closed its stdout")
                answer = json.loads(line)
                if answer.get("id") == message["id"]:
                    return answer

        init = ask({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "trace.py", "version": "1"}}})
        ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
        meta = {"traceparent": TRACEPARENT, "tracestate": TRACESTATE}
        echo = ask({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"text": "traced"}, "_meta": meta}})
        got = ask({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                   "params": {"name": "meta", "arguments": {}, "_meta": meta}})
        echo_ok = "result" in echo and not echo["result"].get("isError") and \
            echo["result"]["content"][0]["text"] == "traced"
        received = {}
        if "result" in got and not got["result"].get("isError"):
            received = json.loads(got["result"]["content"][0]["text"])
        log.seek(0)
        upstream_era = re.findall(r"connected.*?protocol=(\S+)", log.read())
        parent = received.get("traceparent") or ""
        fields = parent.split("-")
        print(json.dumps({
            "server": kind,
            "protocol_asked": protocol,
            "host_session": init.get("result", {}).get("protocolVersion"),
            "upstream_era": upstream_era[0] if upstream_era else None,
            "echo_with_trace_context": "ok" if echo_ok else echo,
            "server_received_traceparent": parent or None,
            "same_trace": len(fields) == 4 and fields[1] == TRACE,
            "new_span": len(fields) == 4 and fields[2] != HOST_SPAN,
            "tracestate_kept": received.get("tracestate") == TRACESTATE,
        }), flush=True)
    finally:
        for process in (proxy, upstream):
            if process is not None:
                process.kill()
                process.wait()


for i, (kind, protocol) in enumerate([("python", "auto"), ("python", "2025-11-25"),
                                      ("typescript", "auto"), ("typescript", "2025-11-25")]):
    run(kind, protocol, BASE + i)
