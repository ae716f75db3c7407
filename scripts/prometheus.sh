#!/usr/bin/env bash
# A real Prometheus scrapes `mcp-resilient proxy --metrics` while the upstream mock server is
# killed and restarted, and writes PROMETHEUS.md from what Prometheus itself stored.
#
#   scripts/prometheus.sh          # rewrites PROMETHEUS.md
#
# What it does:
#   1. installs Debian's `prometheus` package (apt) unless `prometheus` and `promtool` are there;
#   2. builds the CLI (debug; CARGO_TARGET_DIR is respected);
#   3. starts, all on 127.0.0.1: the mock server (Streamable HTTP), `mcp-resilient proxy
#      --metrics` in front of it with a host on its stdin (initialize, a few tools/call), and
#      Prometheus scraping /metrics every second;
#   4. kills the mock server, waits until Prometheus has stored the loss, restarts it on the
#      same port, waits until Prometheus has stored the new generation;
#   5. checks the exposition with `promtool check metrics`, the example alert rules (docs/guide/telemetry.md)
#      (scripts/prometheus/alerts.yml) with `promtool check rules`, and asks Prometheus's HTTP
#      API for the loss, reconnect, state and outage series; writes PROMETHEUS.md.
#
# Needs apt and the network to Debian's mirror for step 1 (as root), cargo for step 2. Nothing
# here is used by `cargo test`. Everything it starts is stopped on exit.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
BIN="$TARGET/debug/mcp-resilient"
WORK="$(mktemp -d)"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

"$ROOT/scripts/need-package.sh" prometheus prometheus
"$ROOT/scripts/need-package.sh" promtool prometheus
(cd "$ROOT" && cargo build -q --bin mcp-resilient)

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
MOCK_PORT=$(free_port); METRICS_PORT=$(free_port); PROM_PORT=$(free_port)
PROM="http://127.0.0.1:$PROM_PORT"

start_mock() {
  "$BIN" mock-server --transport http --port "$MOCK_PORT" >>"$WORK/mock.log" 2>&1 &
  MOCK_PID=$!; PIDS+=("$MOCK_PID")
  for _ in $(seq 100); do
    (echo >"/dev/tcp/127.0.0.1/$MOCK_PORT") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "the mock server did not listen on $MOCK_PORT" >&2; exit 1
}

# Waits (at most $2 seconds) until the PromQL expression $1 has a sample > 0.
wait_query() {
  local deadline=$((SECONDS + $2))
  while ((SECONDS < deadline)); do
    if curl -fsS "$PROM/api/v1/query" --data-urlencode "query=$1" 2>/dev/null \
      | python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; sys.exit(0 if any(float(x["value"][1])>0 for x in r) else 1)' 2>/dev/null; then
      return 0
    fi
    sleep 0.5
  done
  echo "Prometheus never saw: $1" >&2; exit 1
}

start_mock
mkfifo "$WORK/host"
exec 3<>"$WORK/host"
"$BIN" proxy --url "http://127.0.0.1:$MOCK_PORT/mcp" --transport http --name upstream \
  --metrics "127.0.0.1:$METRICS_PORT" --heartbeat-interval 1s --heartbeat-timeout 500ms \
  --reconnect-initial 200ms --reconnect-max 2s --max-attempts 1000 \
  <"$WORK/host" >"$WORK/proxy.out" 2>"$WORK/proxy.err" &
PIDS+=($!)
host() { printf '%s\n' "$1" >&3; }
host '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"prometheus.sh","version":"1"}}}'
host '{"jsonrpc":"2.0","method":"notifications/initialized"}'
for id in 2 3 4; do
  host "{\"jsonrpc\":\"2.0\",\"id\":$id,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}}"
done

cat >"$WORK/prometheus.yml" <<EOF
global: { scrape_interval: 1s, evaluation_interval: 1s }
rule_files: ["$ROOT/scripts/prometheus/alerts.yml"]
scrape_configs:
  - job_name: mcp-resilient
    static_configs: [{ targets: ["127.0.0.1:$METRICS_PORT"] }]
EOF
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/data" \
  --web.listen-address="127.0.0.1:$PROM_PORT" >"$WORK/prometheus.log" 2>&1 &
PIDS+=($!)

STARTED=$(date +%s)
wait_query 'mcp_client_resilience_state{mcp_resilient_state="ready"}' 60
wait_query 'mcp_client_operation_duration_seconds_count{mcp_method_name="tools/call"}' 30
sleep 3 # a few scrapes of the ready server, for the record
curl -fsS "http://127.0.0.1:$METRICS_PORT/metrics" >"$WORK/before.txt"

kill -KILL "$MOCK_PID"; wait "$MOCK_PID" 2>/dev/null || true
KILLED=$(date +%s)
wait_query 'mcp_client_resilience_losses_total' 30
wait_query 'mcp_client_resilience_connect_failures_total' 30
sleep 3 # a few scrapes of the outage
start_mock
RESTARTED=$(date +%s)
wait_query 'mcp_client_resilience_generations_total >= 2' 60
wait_query 'mcp_client_resilience_outage_duration_seconds_count' 30
sleep 3
curl -fsS "http://127.0.0.1:$METRICS_PORT/metrics" >"$WORK/after.txt"
ENDED=$(date +%s)

CHECK_METRICS=$(promtool check metrics <"$WORK/after.txt" 2>&1) && METRICS_OK=clean || METRICS_OK="problems (exit $?)"
CHECK_RULES=$(promtool check rules "$ROOT/scripts/prometheus/alerts.yml" 2>&1) && RULES_OK=clean || RULES_OK="problems (exit $?)"

query() { curl -fsS "$PROM/api/v1/query" --data-urlencode "query=$1"; }
range() {
  curl -fsS "$PROM/api/v1/query_range" --data-urlencode "query=$1" \
    --data-urlencode "start=$STARTED" --data-urlencode "end=$ENDED" --data-urlencode "step=1"
}
{
  echo "losses|$(query 'mcp_client_resilience_losses_total')"
  echo "connect_failures|$(query 'mcp_client_resilience_connect_failures_total')"
  echo "reconnects|$(query 'mcp_client_resilience_reconnect_attempts_total')"
  echo "generations|$(query 'mcp_client_resilience_generations_total')"
  echo "outage|$(query 'mcp_client_resilience_outage_duration_seconds_sum')"
  echo "sessions|$(query 'mcp_client_session_duration_seconds_count')"
  echo "calls|$(query 'mcp_client_operation_duration_seconds_count{mcp_method_name="tools/call"}')"
  echo "probes|$(query 'mcp_client_resilience_probe_duration_seconds_count')"
  echo "ready_range|$(range 'mcp_client_resilience_state{mcp_resilient_state="ready"}')"
  echo "alerts|$(curl -fsS "$PROM/api/v1/rules")"
} >"$WORK/answers.txt"

COMMIT=$(git -C "$ROOT" rev-parse --short HEAD)
DIRTY=$(git -C "$ROOT" status --porcelain --untracked-files=no | grep -q . && echo " (with uncommitted changes)" || true)
VERSION=$(prometheus --version 2>&1 | head -1)
PROMTOOL_METRICS="$CHECK_METRICS" PROMTOOL_RULES="$CHECK_RULES" METRICS_OK="$METRICS_OK" \
RULES_OK="$RULES_OK" COMMIT="$COMMIT$DIRTY" VERSION="$VERSION" KILLED=$((KILLED - STARTED)) \
RESTARTED=$((RESTARTED - STARTED)) ENDED=$((ENDED - STARTED)) \
  python3 "$ROOT/scripts/prometheus/report.py" "$WORK/answers.txt" "$WORK/before.txt" "$WORK/after.txt" \
  >"$ROOT/PROMETHEUS.md"
echo "wrote PROMETHEUS.md (promtool check metrics: $METRICS_OK; rules: $RULES_OK)"
[[ "$METRICS_OK" == clean && "$RULES_OK" == clean ]]
