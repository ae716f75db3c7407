#!/usr/bin/env python3
"""What a call through `mcp-resilient proxy` costs with each given binary, side by side.

    scripts/dist/overhead.py [--calls N] [--rounds R] LABEL=BINARY...

For each binary: the mock server (the first binary's hidden `mock-server`, over Streamable HTTP on
127.0.0.1) upstream, `BINARY proxy --url …` on stdio, and this host sending `tools/call echo`
sequentially (one in flight) and 16 at a time. Reported per binary: wall time per call (median
over the rounds) and the proxy process's own CPU time per call (user + system, from /proc), which
load on the machine changes far less. Binaries alternate round by round (ABAB…), so a drift of
the machine hits each alike. Prints a Markdown table; the ratios are against the first binary.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


class Host:
    def __init__(self, binary, url):
        self.proc = subprocess.Popen(
            [binary, "proxy", "--name", "m", "--url", url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "overhead", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.request("tools/list", {})

    def send(self, message):
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")

    def call_many(self, n, width):
        """n echo calls, `width` in flight at once; returns when every answer is in."""
        pending, sent, done = set(), 0, 0
        while done < n:
            while sent < n and len(pending) < width:
                self.next_id += 1
                pending.add(self.next_id)
                self.send({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}})
                sent += 1
            self.proc.stdin.flush()
            answer = json.loads(self.proc.stdout.readline())
            if answer.get("id") in pending:
                if "error" in answer or answer["result"].get("isError"):
                    sys.exit(f"call failed: {answer}")
                pending.discard(answer["id"])
                done += 1

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        self.proc.stdin.flush()
        while True:
            answer = json.loads(self.proc.stdout.readline())
            if answer.get("id") == self.next_id:
                return answer

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("binaries", nargs="+")
    args = parser.parse_args()
    binaries = [b.split("=", 1) for b in args.binaries]

    mock = subprocess.Popen([binaries[0][1], "mock-server", "--transport", "http", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = mock.stdout.readline()
        if not line.startswith("LISTENING "):
            sys.exit(f"mock server said {line!r}")
        url = f"http://{line.split()[1]}/mcp"
        hosts = {label: Host(binary, url) for label, binary in binaries}
        for host in hosts.values():
            host.call_many(300, 1)  # warm up
        results = {label: {1: [], 16: [], "cpu1": [], "cpu16": []} for label in hosts}
        for _ in range(args.rounds):
            for width in (1, 16):
                for label, host in hosts.items():
                    cpu = cpu_seconds(host.proc.pid)
                    begun = time.perf_counter()
                    host.call_many(args.calls, width)
                    wall = time.perf_counter() - begun
                    results[label][width].append(wall / args.calls * 1e6)
                    results[label][f"cpu{width}"].append((cpu_seconds(host.proc.pid) - cpu) / args.calls * 1e6)
        for host in hosts.values():
            host.close()
    finally:
        mock.kill()
    first = binaries[0][0]
    med = {label: {k: statistics.median(v) for k, v in r.items()} for label, r in results.items()}
    print(f"{args.rounds} rounds of {args.calls} calls per binary and width, alternating; medians.\n")
    print("| binary | µs/call, 1 in flight | proxy CPU µs/call | µs/call, 16 in flight | proxy CPU µs/call | ratio to " + first + " (wall 1 / 16, CPU 1 / 16) |")
    print("|---|---|---|---|---|---|")
    for label, m in med.items():
        f = med[first]
        ratios = f"{m[1] / f[1]:.2f} / {m[16] / f[16]:.2f}, {m['cpu1'] / f['cpu1']:.2f} / {m['cpu16'] / f['cpu16']:.2f}"
        print(f"| {label} | {m[1]:.0f} | {m['cpu1']:.0f} | {m[16]:.0f} | {m['cpu16']:.0f} | {ratios} |")


if __name__ == "__main__":
    main()
