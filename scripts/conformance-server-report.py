#!/usr/bin/env python3
"""Writes CONFORMANCE-SERVER.md from the suite's result folders (scripts/conformance-server.sh).

    conformance-server-report.py RESULTS NODE COMMIT STATE SECONDS VERSIONS \
        --legs LEG... --upstreams UPSTREAM... --targets TARGET... [--front own|rmcp|default]

RESULTS holds <leg>/<upstream>/<target>/server-<scenario>-<timestamp>/checks.json and, per suite
version, scenarios-<version>.txt (`conformance list --server`). A scenario passes when its
checks.json holds at least one SUCCESS and no FAILURE or WARNING.
"""
import argparse
import datetime
import glob
import json
import os
import re

parser = argparse.ArgumentParser()
for name in ("results", "node", "commit", "state", "seconds", "versions"):
    parser.add_argument(name)
parser.add_argument("--legs", nargs="+", required=True)
parser.add_argument("--upstreams", nargs="+", required=True)
parser.add_argument("--targets", nargs="+", required=True)
parser.add_argument("--front", default="default",
                    help="serve's host-facing front (`--front`): own, rmcp, or default (serve's own choice)")
args = parser.parse_args()

UPSTREAMS = {
    "mock": "`mcp-resilient mock-server --conformance`: the suite's test tools, resources and prompts; "
            "in this mode it speaks the 2025 revisions only (`server/discover` and 2026-07-28 requests "
            "get -32022)",
    "everything": "`@modelcontextprotocol/server-everything` (TypeScript SDK 1.x, 2025-11-25 only; its "
                  "Streamable HTTP mode through `scripts/counterparts/ts/everything_loopback.mjs`, bound to "
                  "127.0.0.1): its own tools, not the suite's, so the tool, prompt and resource scenarios "
                  "fail against it directly",
    "py": "`scripts/sdk-hosts/py_server.py` on the Python SDK `mcp` 2.3 (`MCPServer`; speaks 2026-07-28 "
          "and the 2025 era): two tools, one prompt, one resource, none of the suite's",
}
LEGS = {
    "0.1.16": "the 2025 suite, `--suite all`",
    "0.2.0-alpha.12": "the newest suite, `--suite all`: each scenario at its default revision "
                      "(2026-07-28 for scenarios new in it and extensions, else 2025-11-25)",
    "0.2.0-alpha.12@2026-07-28": "the newest suite, `--suite all --spec-version 2026-07-28`: every scenario "
                                 "that applies at 2026-07-28, at the 2026-07-28 wire",
}


def scenarios(folder):
    """scenario -> (passed, failed, warned, the failing checks' messages)"""
    out = {}
    for checks_file in glob.glob(os.path.join(folder, "server-*", "checks.json")):
        name = os.path.basename(os.path.dirname(checks_file))[len("server-"):].rsplit("-", 6)[0]
        checks = json.load(open(checks_file))
        count = {s: sum(1 for c in checks if c.get("status") == s) for s in ("SUCCESS", "FAILURE", "WARNING")}
        notes = [f"{c['id']}: {' '.join(str(c.get('errorMessage', '')).split())}"[:240]
                 for c in checks if c.get("status") in ("FAILURE", "WARNING")]
        out[name] = (count["SUCCESS"], count["FAILURE"], count["WARNING"], notes)
    return out


def revisions(version):
    """scenario -> the revisions `conformance list` says it applies to"""
    path = os.path.join(args.results, f"scenarios-{version}.txt")
    out = {}
    if os.path.exists(path):
        for line in open(path):
            m = re.match(r"\s*- (\S+)(?: \[(.*)\])?", line)
            if m:
                out[m.group(1)] = m.group(2) or ""
    return out


def passed(entry):
    return entry is not None and entry[0] > 0 and entry[1] == 0 and entry[2] == 0


def cell(entry):
    if entry is None:
        return "not run"
    return f"{'pass' if passed(entry) else '**fail**'} {entry[0]}/{entry[1]}/{entry[2]}"


def wire(leg, applies):
    """The revision a scenario runs at in this leg."""
    if "@" in leg:
        return leg.split("@")[1]
    if leg.startswith("0.1."):
        return "2025-11-25"
    return "2026-07-28" if applies in ("2026-07-28", "extension") else "2025-11-25"


now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
out = ["# Conformance: the server side", "",
       "Results of the official MCP conformance suite's server scenarios (npm",
       "`@modelcontextprotocol/conformance`, `conformance server --url …`) against three upstreams, each",
       "directly and through `mcp-resilient serve` with the upstream as its stdio child (serve-stdio) and",
       "as a Streamable HTTP upstream (serve-http). Written by `scripts/conformance-server.sh` from the",
       "suite's own result files: do not edit by hand. The client side is CONFORMANCE.md.", "",
       f"- Date: {now}; wall time {args.seconds} s",
       f"- Commit built and run: `{args.commit}` ({args.state} src/, gateway/, cli/ and mock-server/); Node {args.node}",
       "- Upstream packages: " + "; ".join(f"`{v}`" for v in args.versions.split(";") if v),
       "- serve's host-facing front: " + ("its default (no `--front`)" if args.front == "default"
                                          else f"`--front {args.front}`"),
       "- Upstreams:"]
out += [f"  - {u}: {UPSTREAMS.get(u, u)}" for u in args.upstreams]
out += ["- Suite runs (legs):"]
out += [f"  - `{leg}`: {LEGS.get(leg, leg)}" for leg in args.legs]
out += ["", "A scenario passes when its `checks.json` holds at least one SUCCESS and no FAILURE or WARNING.",
        "Cells: pass/fail, then checks ✓/✗/⚠. The rule: through serve, no scenario that passes against the",
        "upstream directly may fail; and a 2026-07-28 scenario in front of an upstream that speaks only",
        "2025 is answered by the gateway itself (it speaks 2026-07-28 to the host), so it should pass",
        "wherever the upstream has what the scenario asks for.", ""]

data = {(leg, u, t): scenarios(os.path.join(args.results, leg, u, t))
        for leg in args.legs for u in args.upstreams for t in args.targets}
summary, violations, gateway_2026 = [], [], []
for leg in args.legs:
    applies = revisions(leg.split("@")[0])
    for u in args.upstreams:
        names = sorted({n for t in args.targets for n in data[(leg, u, t)]})
        line = [f"`{leg}` {u}:"]
        for t in args.targets:
            ok = sum(1 for n in names if passed(data[(leg, u, t)].get(n)))
            line.append(f"{t} {ok}/{len(names)}")
        summary.append(" ".join(line[:1]) + " " + ", ".join(line[1:]))
        direct = data[(leg, u, "direct")]
        for t in args.targets:
            if t == "direct":
                continue
            for n in names:
                e = data[(leg, u, t)].get(n)
                if passed(direct.get(n)) and not passed(e):
                    violations.append((leg, u, t, n, e))
                elif (not passed(e) and not passed(direct.get(n)) and u == "mock"
                      and wire(leg, applies.get(n, "")) == "2026-07-28"):
                    gateway_2026.append((leg, u, t, n, e))

out += ["## Summary (scenarios passed)", ""] + [f"- {s}" for s in summary] + [""]
out += [f"**Rule check: {len(violations)} scenario runs fail through serve that pass directly.**", ""]
for leg, u, t, n, e in violations:
    out.append(f"- `{leg}` {u} {t} / {n}: " + ("; ".join(e[3][:3]) if e and e[3] else "not run"))
if violations:
    out.append("")
out += ["2026-07-28-wire scenarios that fail through serve in front of the mock: it has the suite's",
        "test tools but speaks only 2025 in its conformance mode, so the gateway answers the 2026-07-28",
        "wire itself; a failure is the gateway's unless the mock lacks what the scenario asks for (its",
        "tools are those of 0.1.16: no `test_input_required_*`, no task tools). Failing checks, serve-stdio",
        f"and serve-http together where they agree ({len(gateway_2026)} scenario runs):", ""]
merged = {}
for leg, u, t, n, e in gateway_2026:
    notes = tuple(e[3][:3]) if e and e[3] else ("not run",)
    merged.setdefault((leg, n, notes), []).append(t)
for (leg, n, notes), targets in merged.items():
    out.append(f"- `{leg}` {'/'.join(targets)} / {n}: " + "; ".join(notes))
out.append("")

for leg in args.legs:
    applies = revisions(leg.split("@")[0])
    cols = [(u, t) for u in args.upstreams for t in args.targets]
    names = sorted({n for (u, t) in cols for n in data[(leg, u, t)]})
    out += [f"## `{leg}`", "", LEGS.get(leg, leg)[0].upper() + LEGS.get(leg, leg)[1:] + ".", "",
            "| scenario | runs at | " + " | ".join(f"{u} {t}" for u, t in cols) + " |",
            "|---|---|" + "---|" * len(cols)]
    for n in names:
        out.append(f"| {n} | {wire(leg, applies.get(n, ''))} | "
                   + " | ".join(cell(data[(leg, u, t)].get(n)) for u, t in cols) + " |")
    out.append("")

out += ["## Failing and warning checks through serve", "",
        "Those of serve-stdio and serve-http that the same scenario does not also fail with directly.", ""]
for leg in args.legs:
    for u in args.upstreams:
        for t in args.targets:
            if t == "direct":
                continue
            for n, e in sorted(data[(leg, u, t)].items()):
                same = set(data[(leg, u, "direct")].get(n, (0, 0, 0, []))[3])
                for note in e[3]:
                    if note not in same:
                        out.append(f"- `{leg}` {u} {t} / {n}: {note}")
print("\n".join(out))
