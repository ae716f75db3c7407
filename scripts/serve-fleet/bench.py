#!/usr/bin/env python3
"""The bench of issue 25: 1,000 host sessions connected to `mcp-resilient serve`, 100 of them
calling `echo` in a loop; the same against the mock server directly. Reports p50/p99 per call
and the resident memory `serve` gained per idle host session. Plain HTTP (httpx2, which the Python SDK 2.x brings into the venv
of setup.sh), sessions of revision 2025-11-25; everything on 127.0.0.1, bounded in count and time.

    target/serve-fleet-venv/bin/python scripts/serve-fleet/bench.py BIN [SESSIONS] [CALLING] [SECONDS]
"""

import asyncio
import json
import os
import subprocess
import sys
import time

import httpx2 as httpx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import Proc, free_port, mock_http, percentile, serve, wait_ready  # noqa: E402

BIN = sys.argv[1]
SESSIONS = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
CALLING = int(sys.argv[3]) if len(sys.argv) > 3 else 100
SECONDS = float(sys.argv[4]) if len(sys.argv) > 4 else 10.0
VERSION = "2025-11-25"
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
LIMIT = 30.0


def answer(response: httpx.Response) -> dict:
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in response.text.splitlines():
            if line.startswith("data:") and line[5:].strip():
                message = json.loads(line[5:])
                if "id" in message:
                    return message
        raise RuntimeError(f"no answer in {response.text[:200]}")
    return response.json()


async def open_session(client: httpx.AsyncClient, url: str) -> str:
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}
    response = await client.post(url, json=init, headers=HEADERS)
    response.raise_for_status()
    session = response.headers["mcp-session-id"]
    answer(response)
    headers = {**HEADERS, "mcp-session-id": session, "mcp-protocol-version": VERSION}
    note = await client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    note.raise_for_status()
    return session


async def caller(client, url, session, deadline, latencies, failures):
    headers = {**HEADERS, "mcp-session-id": session, "mcp-protocol-version": VERSION}
    n = 0
    while time.perf_counter() < deadline:
        n += 1
        call = {"jsonrpc": "2.0", "id": n, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "x"}}}
        start = time.perf_counter()
        try:
            message = answer(await client.post(url, json=call, headers=headers))
            if "result" not in message or message["result"].get("isError"):
                failures.append(str(message)[:200])
                continue
        except Exception as error:
            failures.append(repr(error)[:200])
            continue
        latencies.append(time.perf_counter() - start)


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


async def measure(url: str, pid):
    limits = httpx.Limits(max_connections=CALLING + 20, max_keepalive_connections=CALLING + 20)
    async with httpx.AsyncClient(limits=limits, timeout=LIMIT) as client:
        before = rss_kib(pid) if pid else None
        sessions = []
        for start in range(0, SESSIONS, 50):
            sessions += await asyncio.gather(*(open_session(client, url) for _ in range(start, min(SESSIONS, start + 50))))
        await asyncio.sleep(1.0)  # let the sessions' tasks settle before reading memory
        after = rss_kib(pid) if pid else None
        latencies, failures = [], []
        deadline = time.perf_counter() + SECONDS
        await asyncio.gather(*(caller(client, url, s, deadline, latencies, failures) for s in sessions[:CALLING]))
        return {
            "sessions": len(sessions), "calls": len(latencies), "failures": len(failures),
            "failure_examples": failures[:3],
            "p50_ms": round(1000 * percentile(latencies, 0.5), 3),
            "p99_ms": round(1000 * percentile(latencies, 0.99), 3),
            "rss_before_kib": before, "rss_after_sessions_kib": after,
            "kib_per_idle_session": round((after - before) / len(sessions), 2) if pid else None,
        }


def main():
    port = free_port()
    mock = mock_http(BIN, port)
    direct = f"http://127.0.0.1:{port}/mcp"
    results = {"direct": asyncio.run(measure(direct, mock.proc.pid))}
    mock.stop()
    mock = mock_http(BIN, port)
    gateway, url = serve(BIN, ["--url", direct])
    wait_ready(url.rsplit("/", 1)[0] + "/readyz")
    results["serve"] = asyncio.run(measure(url, gateway.proc.pid))
    gateway.stop()
    mock.stop()
    results["added_p50_ms"] = round(results["serve"]["p50_ms"] - results["direct"]["p50_ms"], 3)
    results["added_p99_ms"] = round(results["serve"]["p99_ms"] - results["direct"]["p99_ms"], 3)
    print(json.dumps(results, indent=1))


main()
