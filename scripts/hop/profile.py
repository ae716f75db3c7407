#!/usr/bin/env python3
"""Splits scripts/hop/profile.sh's callgrind dumps of serve by component, per call.

    python3 scripts/hop/profile.py target/hop/profile [--json OUT]

For each dump (`callgrind.PID.N` whose `desc: Trigger` names `c1` or `c32`, with the wrk line of
that window in `wrk-callgrind-cN.txt`): instructions per call = the dump's total Ir / the calls wrk
made while collection was on. Every function's own (exclusive) instructions go to one component,
so the components add up to the total: libc's allocator and mem* functions by name; anything of
serde / serde_json (derived Serialize/Deserialize impls included) to JSON; tracing; otherwise the
first crate named in the symbol that is not core/alloc/std (so `drop_in_place<rmcp::…>` is
rmcp's). Inclusive figures (a function and everything it calls) are given for the entry points
named in ENTRIES, and call counts per call for the functions in COUNTS. User space only: the
kernel's share is in perf's figures (profile.sh).

Python 3 standard library only.
"""

import json
import os
import re
import sys
import time
from collections import defaultdict

COMPONENTS = [
    # (component, crates)
    ("rmcp: Streamable HTTP server, session, service loop, model", ["rmcp"]),
    ("serve's own code (mcp_resilient_gateway)", ["mcp_resilient_gateway"]),
    ("the library: supervisor, upstream transport (mcp_resilient)", ["mcp_resilient"]),
    ("hyper / hyper-util / http / h2", ["hyper", "hyper_util", "http", "http_body", "http_body_util",
                                         "httparse", "h2", "want", "try_lock"]),
    ("axum / tower / tower-http", ["axum", "axum_core", "tower", "tower_http", "tower_layer",
                                   "tower_service", "matchit"]),
    ("reqwest", ["reqwest"]),
    ("tokio / tokio-util / futures / mio", ["tokio", "tokio_util", "tokio_stream", "futures",
                                            "futures_util", "futures_core", "futures_channel",
                                            "futures_task", "mio", "parking_lot", "parking_lot_core",
                                            "crossbeam_utils", "async_stream", "pin_project_lite"]),
    ("bytes / sse-stream / uuid / rand / other crates", []),
]
CRATE_OF = {c: comp for comp, crates in COMPONENTS for c in crates}
JSON = "JSON: serde / serde_json (parse, serialize, derived impls)"
TRACING = "tracing"
ALLOC = "allocator: glibc malloc / free / realloc"
MEM = "libc memcpy / memmove / memset / strlen"
STD = "Rust core / alloc / std (fmt, hashing, Vec, String, Arc, drop)"
KERNEL_FACE = "libc syscall wrappers, pthread, ld.so"
OTHER = "bytes / sse-stream / uuid / rand / other crates"

ALLOC_NAMES = re.compile(r"^(malloc|free|realloc|calloc|cfree|_int_malloc|_int_free|_int_realloc|"
                         r"malloc_consolidate|tcache_\w+|__libc_malloc|__libc_free|__libc_realloc|"
                         r"__libc_calloc|unlink_chunk[\w.]*|_int_free_\w+|arena_\w+|sysmalloc|"
                         r"alloc_perturb|__posix_memalign|posix_memalign|aligned_alloc|memalign|"
                         r"_mid_memalign|_int_memalign|mremap_chunk|__default_morecore|__glibc_morecore|"
                         r"checked_request2size|malloc_\w+)\b")
MEM_NAMES = re.compile(r"^(__)?(mem(cpy|move|set|cmp|chr|rchr)|str\w+|__mem\w+|__str\w+|bcmp|wmem\w+)")
# A path's first segment: its crate (`<core::str::X>` names core, not str).
CRATE = re.compile(r"(?:^|[<\s(&,*\[])([A-Za-z_][A-Za-z0-9_]*)::")

# Inclusive instructions per call of these entry points (the first function whose name matches).
ENTRIES = [
    ("rmcp's Streamable HTTP service: the POST handler", r"StreamableHttpService<.*>::handle_post"),
    ("rmcp's session manager: create/handle request", r"LocalSessionManager as rmcp::transport::streamable_http_server::session::SessionManager>::create_stream"),
    ("the gateway's tools/call handler (its future's polls)", r"^<mcp_resilient_gateway::handler::ProxyHandler as rmcp::handler::server::ServerHandler>::call_tool::\{\{closure\}\}$"),
    ("hyper's server dispatcher (host side, HTTP/1)", r"hyper::proto::h1::dispatch::Dispatcher<hyper::proto::h1::dispatch::Server"),
    ("hyper's client dispatcher (upstream side, HTTP/1)", r"hyper::proto::h1::dispatch::Dispatcher<hyper::proto::h1::dispatch::Client"),
    ("reqwest's pending request", r"<reqwest::async_impl::client::Pending as core::future::future::Future>::poll"),
    ("tokio's I/O driver turn", r"tokio::runtime::io::driver::Driver::turn"),
]
# Calls per call of functions whose name matches.
COUNTS = [
    ("JSON parses into a type or a Value (serde_json::from_slice / from_str / from_trait)",
     r"^serde_json::de::from_(slice|str|trait)"),
    ("serde_json::to_value / from_value (tree conversions)", r"^serde_json::value::(to_value|from_value)|^serde_json::value::de::.*from_value"),
    # serde_json::to_vec and friends are inlined: the top-level serializations are not countable
    # by name, but each string written is.
    ("strings written by serde_json (format_escaped_str)", r"^serde_json::ser::format_escaped_str"),
    ("serde errors made and dropped (serde_json make_error: untagged enums trying variants)",
     r"^serde_json::error::make_error"),
    ("tasks spawned (tokio::task::spawn)", r"^tokio::task::spawn::spawn(<|$)"),
    ("task wake-ups (tokio waker wake / wake_by_ref)", r"^tokio::runtime::task::waker::(wake_by_val|wake_by_ref)|^tokio::runtime::task::raw::(wake_by_val|wake_by_ref)"),
    ("task polls (tokio Harness::poll)", r"^tokio::runtime::task::harness::Harness<T,S>::poll"),
    ("wakers cloned (tokio clone_waker)", r"^tokio::runtime::task::waker::clone_waker"),
    ("mpsc sends (tokio::sync::mpsc)", r"^tokio::sync::mpsc::.*::send"),
    ("allocations (malloc)", r"^malloc$"),
    ("frees (free)", r"^free$|^cfree$"),
    ("reallocs (realloc)", r"^realloc$"),
    ("memcpy / memmove calls", r"^(__)?mem(cpy|move)"),
]


def component(name):
    if ALLOC_NAMES.match(name):
        return ALLOC
    if MEM_NAMES.match(name):
        return MEM
    if "serde" in name or "Serialize" in name or "Deserializ" in name:
        return JSON
    if "tracing" in name:
        return TRACING
    crates = CRATE.findall(name)
    for c in crates:
        if c in ("core", "alloc", "std", "impl", "dyn"):
            continue
        if c in CRATE_OF:
            return CRATE_OF[c]
        if c[0].islower():
            return OTHER
    if crates:
        return STD
    return KERNEL_FACE


def parse(path):
    """(self Ir by function, inclusive Ir of calls into function by caller != callee, call counts,
    total Ir, trigger description)."""
    names = {}
    self_ir = defaultdict(int)
    incl_calls = defaultdict(int)
    calls = defaultdict(int)
    total = 0
    desc = ""
    fn = None
    pending = None  # (callee, count) after a calls= line
    ref = re.compile(r"^\((\d+)\)(?: (.*))?$")

    def name_of(text):
        m = ref.match(text)
        if not m:
            return text
        if m.group(2) is not None:
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), text)

    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            c0 = line[0]
            if c0.isdigit() or c0 in "+-*":
                parts = line.split()
                ir = int(parts[1]) if len(parts) > 1 else 0
                if pending:
                    callee, count = pending
                    if callee != fn:
                        incl_calls[callee] += ir
                    calls[callee] += count
                    pending = None
                else:
                    self_ir[fn] += ir
                continue
            if line.startswith("fn="):
                fn = name_of(line[3:])
            elif line.startswith("cfn="):
                callee = name_of(line[4:])
                pending = (callee, 0)
            elif line.startswith("calls="):
                pending = (pending[0] if pending else "?", int(line[6:].split()[0]))
            elif line.startswith("summary:") or line.startswith("totals:"):
                total = int(line.split()[1])
            elif line.startswith("desc: Trigger:"):
                desc = line
    return self_ir, incl_calls, calls, total, desc


def analyse(path, calls_made):
    self_ir, incl, counts, total, desc = parse(path)
    per = lambda v: v / calls_made
    comps = defaultdict(int)
    for fn, ir in self_ir.items():
        comps[component(fn or "?")] += ir
    out = {"dump": os.path.basename(path), "trigger": desc, "calls": calls_made, "total_ir": total,
           "ir_per_call": round(per(total)),
           "components": sorted(((k, round(per(v)), round(100 * v / total, 1)) for k, v in comps.items()),
                                key=lambda x: -x[1]),
           "top_self": [(fn, round(per(ir)), round(100 * ir / total, 2))
                        for fn, ir in sorted(self_ir.items(), key=lambda x: -x[1])[:40]],
           "entries": [], "counts": []}
    for label, pattern in ENTRIES:
        rx = re.compile(pattern)
        hits = [(fn, ir) for fn, ir in incl.items() if fn and rx.search(fn)]
        if hits:
            fn, ir = max(hits, key=lambda x: x[1])
            out["entries"].append((label, round(per(ir)), round(100 * ir / total, 1), fn[:160]))
    for label, pattern in COUNTS:
        rx = re.compile(pattern)
        n = sum(c for fn, c in counts.items() if fn and rx.search(fn))
        out["counts"].append((label, round(per(n), 2)))
    json_fns = sorted(((fn, c) for fn, c in counts.items() if fn and fn.startswith("serde_json::")),
                      key=lambda x: -x[1])[:25]
    out["serde_json_calls"] = [(fn[:160], round(per(c), 2)) for fn, c in json_fns]
    return out


def save(path, results, folder, peers):
    """Replaces the rows of the bench/results area at `path` with this profile's: one row per
    component, inclusive entry point and count, a column pair per concurrency."""
    by = {r["conns"]: r for r in results}
    rows, seen = [], []

    def row(kind, name, unit, values):
        r = {"section": "hop-profile", "kind": kind, "name": name, "unit": unit, "n": None, "failed": 0,
             "errors": [], "median": None, "p99": None, "min": None, "max": None, "target": None,
             "target_met": None, "note": {"component": "own instructions", "inclusive":
                                          "inclusive: the function and all it calls", "total": ""}.get(kind, "")}
        for conns, (v, share) in values.items():
            r[f"c{conns}"] = v
            if share is not None:
                r[f"c{conns}_share"] = share
        rows.append(r)

    row("total", "instructions per call (serve's process, user space)", "instructions",
        {c: (r["ir_per_call"], 100.0) for c, r in by.items()})
    for r in by.values():
        for name, _, _ in r["components"]:
            if name not in seen:
                seen.append(name)
    order = sorted(seen, key=lambda n: -max((v for k, v, _ in by.get(1, by[min(by)])["components"] if k == n), default=0))
    for name in order:
        row("component", name, "instructions",
            {c: next(((v, s) for k, v, s in r["components"] if k == name), (0, 0.0)) for c, r in by.items()})
    for label, _ in ENTRIES:
        vals = {c: next(((v, s) for l, v, s, _ in r["entries"] if l == label), None) for c, r in by.items()}
        if all(vals.values()):
            row("inclusive", label, "instructions", vals)
    for label, _ in COUNTS:
        row("count", label, "per call", {c: (next(v for l, v in r["counts"] if l == label), None) for c, r in by.items()})
    if peers:
        row("peer", "mcp-proxy 0.6.0: instructions per call (its process, user space)", "instructions",
            {c: (r["ir_per_call"], None) for c, r in peers.items()})
        for label, _ in COUNTS:
            if any(label.startswith(p) for p in PEER_ROWS):
                row("peer", "mcp-proxy 0.6.0: " + label, "per call",
                    {c: (next(v for l, v in r["counts"] if l == label), None) for c, r in peers.items()})
    with open(path) as f:
        area = json.load(f)
    area["rows"] = rows
    area["meta"]["measured"] = time.strftime("%Y-%m-%d", time.gmtime(os.path.getmtime(folder)))
    with open(path, "w") as f:
        json.dump(area, f, indent=2, ensure_ascii=False)
        f.write("\n")
    print(f"rows written to {path}")


def peer(folder):
    """mcp-proxy's instructions per call (profile.sh --peer), beside serve's: {conns: analysis}."""
    out = {}
    for conns in (1, 32):
        wrk = os.path.join(folder, f"wrk-callgrind-peer-c{conns}.txt")
        if not os.path.exists(wrk):
            continue
        made = json.loads(open(wrk).read().split("HOP ", 1)[1])["requests"]
        dumps = [os.path.join(folder, n) for n in sorted(os.listdir(folder)) if n.startswith("peer-callgrind.")]
        dump = next((d for d in dumps if f"desc: Trigger: dump peer-c{conns}\n" in open(d, errors="replace").read(4096)), None)
        if dump and made:
            r = analyse(dump, made)
            print(f"\n== mcp-proxy 0.6.0, c={conns}: {made} calls, {r['ir_per_call']:,} instructions per call")
            for k, v, s in r["components"][:8]:
                print(f"  {k}: {v:,} ({s} %)")
            for label, v in r["counts"]:
                print(f"  {label}: {v}")
            out[conns] = r
    return out


PEER_ROWS = ["tasks spawned", "task wake-ups", "task polls", "mpsc sends", "allocations (malloc)",
             "JSON parses"]


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "target/hop/profile"
    peers = peer(folder)
    results = []
    for conns in (1, 32):
        wrk = os.path.join(folder, f"wrk-callgrind-c{conns}.txt")
        if not os.path.exists(wrk):
            continue
        made = json.loads(open(wrk).read().split("HOP ", 1)[1])["requests"]
        if not made:
            print(f"c={conns}: wrk made no call in the callgrind window", file=sys.stderr)
            continue
        dumps = [os.path.join(folder, n) for n in sorted(os.listdir(folder)) if n.startswith("callgrind.")]
        dump = next((d for d in dumps if f"desc: Trigger: dump c{conns}\n" in open(d, errors="replace").read(4096)), None)
        if not dump:
            print(f"no callgrind dump for c={conns}", file=sys.stderr)
            continue
        r = analyse(dump, made)
        r["conns"] = conns
        results.append(r)
        print(f"\n== c={conns}: {made} calls, {r['ir_per_call']:,} instructions per call ({r['dump']})")
        print("| component | instructions per call | share |\n|---|---|---|")
        for k, v, s in r["components"]:
            print(f"| {k} | {v:,} | {s} % |")
        print("\ninclusive:")
        for label, v, s, fn in r["entries"]:
            print(f"  {label}: {v:,} ({s} %)   [{fn}]")
        print("\nper call:")
        for label, v in r["counts"]:
            print(f"  {label}: {v}")
        print("\nserde_json functions called, per call:")
        for fn, v in r["serde_json_calls"]:
            print(f"  {v:>6}  {fn}")
        print("\ntop functions by own instructions:")
        for fn, v, s in r["top_self"][:25]:
            print(f"  {v:>7,} {s:>5} %  {fn[:150]}")
    for conns in (1, 32):
        # strace -c ran for 8 s, from 1 s into a 10 s wrk window: calls ~ wrk's rate x 8 s.
        st, wrk = os.path.join(folder, f"strace-c{conns}.txt"), os.path.join(folder, f"wrk-strace-c{conns}.txt")
        if os.path.exists(st) and os.path.exists(wrk) and "HOP " in open(wrk).read():
            got = json.loads(open(wrk).read().split("HOP ", 1)[1])
            calls = got["requests"] / (got["duration_us"] / 1e6) * 8
            print(f"\n== c={conns}: system calls per call under strace (about {calls:,.0f} calls in its 8 s)")
            for line in open(st):
                parts = line.split()
                if len(parts) >= 5 and parts[0][0].isdigit() and parts[-1] != "total":
                    print(f"  {parts[-1]}: {int(parts[3]) / calls:.2f}")
    if "--save" in sys.argv:
        save(sys.argv[sys.argv.index("--save") + 1], results, folder, peers)
    if "--json" in sys.argv:
        with open(sys.argv[sys.argv.index("--json") + 1], "w") as f:
            json.dump(results, f, indent=1)
    return 0 if results else 1


if __name__ == "__main__":
    sys.exit(main())
