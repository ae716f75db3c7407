#!/usr/bin/env bash
# The heap of N idle host sessions of `mcp-resilient serve`, by owner (BENCHMARKS.md, "serve with 1,000 host sessions").
#
#   scripts/serve-heap.sh [N]     # default N=1000
#
# Starts the mock server over Streamable HTTP and `serve --url` in front of it under heaptrack,
# opens N host sessions (revision 2025-11-25: initialize, notifications/initialized) with curl,
# lets them settle for 2 s, then SIGKILLs serve: what heaptrack finds still allocated is the
# process's heap with N idle host sessions. A run with 0 sessions is the baseline it subtracts.
# scripts/heap-owners.py sorts the difference by owner. Everything on 127.0.0.1. Installs
# heaptrack from Debian's packages if it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-1000}"
scripts/need-package.sh heaptrack heaptrack
cargo build --release -q -p mcp-resilient-cli --bin mcp-resilient
bin=target/release/mcp-resilient
out=target/bench/heap
mkdir -p "$out"
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

"$bin" mock-server --transport http --port 0 >"$out/mock.out" 2>/dev/null &
pids+=($!)
for _ in $(seq 100); do grep -q LISTENING "$out/mock.out" 2>/dev/null && break; sleep 0.1; done
upstream="http://$(awk '/LISTENING/ {print $2; exit}' "$out/mock.out")/mcp"

accept='accept: application/json, text/event-stream'
json='content-type: application/json'
open_sessions() { # URL COUNT
    local i id
    for i in $(seq "$2"); do
        id=$(curl -sS -m 10 -D - -o /dev/null -H "$accept" -H "$json" "$1" \
            -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"heap","version":"1"}}}' \
            | awk 'tolower($1)=="mcp-session-id:" {print $2}' | tr -d '\r')
        [[ -n "$id" ]] || { echo "session $i: no id" >&2; exit 1; }
        curl -sS -m 10 -o /dev/null -H "$accept" -H "$json" -H "mcp-session-id: $id" \
            -H "mcp-protocol-version: 2025-11-25" "$1" \
            -d '{"jsonrpc":"2.0","method":"notifications/initialized"}'
    done
}

for count in 0 "$n"; do
    rm -f "$out/serve-$count".* "$out/serve-$count.err"
    heaptrack -o "$out/serve-$count" "$bin" serve --listen 127.0.0.1:0 --url "$upstream" \
        >/dev/null 2>"$out/serve-$count.err" &
    wrapper=$!
    pids+=("$wrapper")
    url=""
    for _ in $(seq 300); do
        url=$(grep -o 'serving MCP at [^ ]*' "$out/serve-$count.err" 2>/dev/null | awk '{print $4}' || true)
        [[ -n "$url" ]] && break
        sleep 0.1
    done
    [[ -n "$url" ]] || { echo "serve did not start" >&2; cat "$out/serve-$count.err" >&2; exit 1; }
    open_sessions "$url" "$count"
    sleep 2
    # serve itself (heaptrack's wrapper has another command line, and must live to write)
    pkill -9 -f -- "^$bin serve --listen 127.0.0.1:0 --url $upstream" || true
    wait "$wrapper" || true
    data=$(ls "$out/serve-$count"*.zst "$out/serve-$count"*.gz 2>/dev/null | head -1 || true)
    [[ -n "$data" ]] || { echo "heaptrack wrote no data for $count sessions" >&2; exit 1; }
    heaptrack_print -f "$data" --flamegraph-cost-type leaked -F "$out/serve-$count.stacks" >/dev/null
done
echo "## serve, $n idle host sessions (heap at exit minus the heap with none)"
python3 scripts/heap-owners.py "$out/serve-$n.stacks" "$n" --minus "$out/serve-0.stacks"
