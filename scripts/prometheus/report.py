"""Writes PROMETHEUS.md from what scripts/prometheus.sh asked Prometheus (stdin files)."""
import json
import os
import sys


def results(answer):
    return json.loads(answer)["data"]["result"]


def labels(metric, drop=("__name__", "job", "instance")):
    return ", ".join(f'{k}="{v}"' for k, v in sorted(metric.items()) if k not in drop)


answers = {}
with open(sys.argv[1]) as f:
    for line in f:
        key, _, body = line.partition("|")
        answers[key] = body
before = open(sys.argv[2]).read()
after = open(sys.argv[3]).read()
env = os.environ

out = []
w = out.append
w("# Prometheus scrape: a proxy across an upstream restart\n")
w("Written by `scripts/prometheus.sh` (do not edit by hand). A real Prometheus "
  f"({env['VERSION']}, Debian's package) scraped `mcp-resilient proxy --metrics` every second "
  f"on commit `{env['COMMIT']}` while its upstream, the mock server over Streamable HTTP, was "
  f"SIGKILLed at t = {env['KILLED']} s and restarted on the same port at t = {env['RESTARTED']} s "
  f"(run ended at t = {env['ENDED']} s). Every figure below is Prometheus's own answer through its "
  "HTTP API (`/api/v1/query`, `/api/v1/query_range`), not the proxy's.\n")
w(f"- `promtool check metrics` on the last scrape: **{env['METRICS_OK']}**")
if env["PROMTOOL_METRICS"].strip():
    w("\n```\n" + env["PROMTOOL_METRICS"].strip() + "\n```")
w(f"- `promtool check rules scripts/prometheus/alerts.yml` (the alerts of docs/guide/telemetry.md): **{env['RULES_OK']}**")
if env["PROMTOOL_RULES"].strip():
    w("\n```\n" + env["PROMTOOL_RULES"].strip() + "\n```")
w("")
w("## Series after the restart\n")
w("| query | series | value |")
w("|---|---|---|")
for key, query in [
    ("losses", "mcp_client_resilience_losses_total"),
    ("connect_failures", "mcp_client_resilience_connect_failures_total"),
    ("reconnects", "mcp_client_resilience_reconnect_attempts_total"),
    ("generations", "mcp_client_resilience_generations_total"),
    ("outage", "mcp_client_resilience_outage_duration_seconds_sum"),
    ("sessions", "mcp_client_session_duration_seconds_count"),
    ("calls", 'mcp_client_operation_duration_seconds_count{mcp_method_name="tools/call"}'),
    ("probes", "mcp_client_resilience_probe_duration_seconds_count"),
]:
    rows = results(answers[key])
    if not rows:
        w(f"| `{query}` | (none) | |")
    for row in rows:
        value = float(row["value"][1])
        shown = f"{value:.3f}" if key == "outage" else f"{value:g}"
        w(f"| `{query}` | `{labels(row['metric'])}` | {shown} |")
w("")
w("## The ready state over the run\n")
w("`mcp_client_resilience_state{mcp_resilient_state=\"ready\"}`, one sample a second from the "
  "range query: 1 while the upstream was ready, 0 from the loss to the new generation.\n")
for row in results(answers["ready_range"]):
    values = [int(float(v)) for _, v in row["values"]]
    runs, last, count = [], None, 0
    for v in values:
        if v == last:
            count += 1
        else:
            if last is not None:
                runs.append(f"{last} × {count}")
            last, count = v, 1
    runs.append(f"{last} × {count}")
    w(f"- `{labels(row['metric'])}`: " + ", ".join(runs) + f" ({len(values)} samples)")
w("")
w("## Alert rules as Prometheus loaded them\n")
w("| alert | state | health |")
w("|---|---|---|")
for group in json.loads(answers["alerts"])["data"]["groups"]:
    for rule in group["rules"]:
        w(f"| {rule['name']} | {rule.get('state', '')} | {rule.get('health', '')} |")
w("")
w("`MCPServerNotReady` waits 5 minutes and `MCPCallFailureRatio` 10 before firing, longer than "
  "this run: `pending` or `inactive` is what they should say here; the point is that they load "
  "and evaluate (`health: ok`) against the real series.\n")
w("## The exposition after the restart (our series)\n")
w("```")
for line in after.splitlines():
    if line.startswith(("mcp_client_resilience_", "# TYPE mcp_client")) and "_bucket" not in line:
        w(line)
w("```")
print("\n".join(out))
