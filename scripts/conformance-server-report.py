#!/usr/bin/env python3
"""Writes CONFORMANCE-SERVER.md from the suite's result folders (scripts/conformance-server.sh).

    conformance-server-report.py RESULTS SUITE NODE COMMIT STATE TARGET...

A scenario passes when its checks.json holds at least one SUCCESS and no FAILURE or WARNING.
"""
import datetime
import glob
import json
import os
import sys

results, suite, node, commit, state, *targets = sys.argv[1:]


def scenarios(target):
    """scenario -> (passed, failed, warned, the failing checks' messages)"""
    out = {}
    for checks_file in glob.glob(os.path.join(results, target, "server-*", "checks.json")):
        folder = os.path.basename(os.path.dirname(checks_file))
        name = folder[len("server-"):].rsplit("-", 6)[0]  # strip the timestamp
        checks = json.load(open(checks_file))
        count = {s: sum(1 for c in checks if c.get("status") == s) for s in ("SUCCESS", "FAILURE", "WARNING")}
        notes = [f"{c['id']}: {c.get('errorMessage', '')}"[:160]
                 for c in checks if c.get("status") in ("FAILURE", "WARNING")]
        out[name] = (count["SUCCESS"], count["FAILURE"], count["WARNING"], notes)
    return out


def passed(entry):
    return entry is not None and entry[0] > 0 and entry[1] == 0 and entry[2] == 0


by_target = {t: scenarios(t) for t in targets}
names = sorted({n for t in targets for n in by_target[t]})
now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
print("# Conformance: the server side")
print()
print("Results of the official MCP conformance suite's server scenarios (npm")
print("`@modelcontextprotocol/conformance`, `conformance server --url … --suite all`) against the mock")
print("server's conformance mode (`mcp-resilient mock-server --conformance`: the suite's test tools,")
print("resources and prompts) directly, and through `mcp-resilient serve` with the mock as its stdio")
print("child and as a Streamable HTTP upstream. Written by `scripts/conformance-server.sh` from the")
print("suite's own result files: do not edit by hand. The client side is CONFORMANCE.md.")
print()
print(f"- Date: {now}")
print(f"- Commit built and run: `{commit}` ({state} checkout)")
print(f"- Suite: `{suite}`; Node {node}")
for t in targets:
    entries = by_target[t]
    ok = sum(1 for n in names if passed(entries.get(n)))
    print(f"- {t}: {ok} of {len(names)} scenarios passed")
print()
print("A scenario passes when its `checks.json` holds at least one SUCCESS and no FAILURE or WARNING.")
print("Cells: pass/fail, then checks ✓/✗/⚠.")
print()
print("| scenario | " + " | ".join(targets) + " |")
print("|---|" + "---|" * len(targets))
for n in names:
    cells = []
    for t in targets:
        e = by_target[t].get(n)
        if e is None:
            cells.append("not run")
        else:
            cells.append(f"{'pass' if passed(e) else 'fail'} {e[0]}/{e[1]}/{e[2]}")
    print(f"| {n} | " + " | ".join(cells) + " |")
failing = [(t, n, by_target[t][n][3]) for t in targets for n in names
           if n in by_target[t] and by_target[t][n][3]]
if failing:
    print()
    print("## Failing and warning checks")
    print()
    for t, n, notes in failing:
        for note in notes:
            print(f"- {t} / {n}: {note}")
