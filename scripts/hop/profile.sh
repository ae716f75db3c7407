#!/usr/bin/env bash
# Where serve's CPU per call goes (issue 44): the hop profiled under wrk's `tools/call echo`, at
# c=1 and c=32, three ways:
#
#   1. callgrind (instructions, which do not depend on the machine's load): serve runs under
#      valgrind with collection off; after a warm-up, collection is switched on for one wrk window
#      per concurrency and dumped; scripts/hop/profile.py splits each dump by component and counts
#      JSON passes, spawns, wake-ups and allocations per call.
#   2. perf (`-e cpu-clock`, no hardware counters here): serve natively, sampled during a wrk
#      window per concurrency: user space against the kernel, by DSO.
#   3. strace -c: system calls per call, per concurrency.
#
#   scripts/hop/setup.sh --profile && cargo build --release -p mcp-resilient-cli
#   scripts/hop/profile.sh [--seconds 20] [--bin target/release/mcp-resilient] [--peer]
#
# serve runs its default front (the own front) unless MCP_RESILIENT_FRONT says otherwise:
# `MCP_RESILIENT_FRONT=rmcp scripts/hop/profile.sh` profiles rmcp's front.
#
# --peer: also mcp-proxy 0.6.0 (scripts/hop/setup.sh) under callgrind, the same windows, for its
# instructions per call beside serve's.
#
# The release profile carries line tables and symbols (.cargo/config.toml: debug = 1), so the
# binary measured is the one the harness measures. Output under target/hop/profile/, the summary on
# stdout. Everything on 127.0.0.1; every process started here is killed on exit.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
HERE="$ROOT/scripts/hop"
bin="$ROOT/target/release/mcp-resilient"
seconds=20
peer=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --seconds) seconds="$2"; shift 2 ;;
        --bin) bin="$2"; shift 2 ;;
        --peer) peer=1; shift ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
out="$ROOT/target/hop/profile"
rm -rf "$out" && mkdir -p "$out"
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

wait_line() { # FILE PATTERN: the first match within 60 s
    for _ in $(seq 600); do
        grep -o -m1 -E "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "no $2 in $1 within 60 s" >&2; exit 1
}

"$bin" mock-server --transport http --port 0 >"$out/mock.out" 2>&1 &
pids+=($!)
upstream="http://$(wait_line "$out/mock.out" '127\.0\.0\.1:[0-9]+')/mcp"

# One host session per wrk connection (initialize + notifications/initialized), as run.py does.
sessions() { # URL COUNT -> comma-separated ids
    local url="$1" n="$2" ids=() id
    for _ in $(seq "$n"); do
        id=$(curl -s -m 60 -D - -o /dev/null -X POST "$url" -H 'content-type: application/json' \
            -H 'accept: application/json, text/event-stream' \
            -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"hop-profile","version":"1"}}}' |
            awk 'tolower($1) == "mcp-session-id:" {print $2}' | tr -d '\r')
        curl -s -m 60 -o /dev/null -X POST "$url" -H 'content-type: application/json' \
            -H 'accept: application/json, text/event-stream' -H "mcp-session-id: $id" \
            -H 'mcp-protocol-version: 2025-11-25' -d '{"jsonrpc":"2.0","method":"notifications/initialized"}'
        ids+=("$id")
    done
    (IFS=,; echo "${ids[*]}")
}

drive() { # URL CONNS SECONDS SIDS -> the HOP line of call.lua
    local threads=$(($2 < 2 ? $2 : 2))
    timeout $(($3 + 120)) wrk --latency -t "$threads" -c "$2" -d "$3s" --timeout 30s -s "$HERE/call.lua" "$1" \
        -- echo 2025-11-25 "$4" "$threads" | grep '^HOP '
}

# Its own line, not valgrind's echo of the command line (which holds the upstream's URL).
serve_url() { wait_line "$1" 'serving MCP at http://127\.0\.0\.1:[0-9]+/mcp' | sed 's/^serving MCP at //'; }
ready() { # URL: /readyz answers within 120 s
    for _ in $(seq 1200); do curl -sf -m 2 "${1%/mcp}/readyz" >/dev/null && return 0; sleep 0.1; done
    echo "serve not ready" >&2; exit 1
}

echo "== callgrind (load: $(cut -d' ' -f1-3 /proc/loadavg))"
valgrind --tool=callgrind --dump-instr=no --callgrind-out-file="$out/callgrind.%p" \
    "$bin" serve --listen 127.0.0.1:0 --url "$upstream" >"$out/serve-cg.out" 2>&1 &
cg=$!
pids+=($cg)
url=$(serve_url "$out/serve-cg.out")
ready "$url"
for conns in 1 32; do
    sids=$(sessions "$url" "$conns")
    drive "$url" "$conns" 5 "$sids" >/dev/null   # warm-up (code translated), then zeroed
    sleep 3   # what the warm-up left in flight finishes outside the window
    callgrind_control --zero "$cg" >/dev/null
    line=$(drive "$url" "$conns" "$seconds" "$sids")
    callgrind_control --dump="c$conns" "$cg" >/dev/null
    echo "c=$conns $line" | tee "$out/wrk-callgrind-c$conns.txt"
done
kill "$cg"; wait "$cg" 2>/dev/null || true

if [[ "$peer" == 1 ]]; then
    echo "== callgrind, mcp-proxy 0.6.0 (load: $(cut -d' ' -f1-3 /proc/loadavg))"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    sed -e "s/@PORT@/$port/" -e "s#@UPSTREAM@#$upstream#" "$HERE/mcp-proxy.toml.in" >"$out/mcp-proxy.toml"
    valgrind --tool=callgrind --dump-instr=no --callgrind-out-file="$out/peer-callgrind.%p" \
        "$ROOT/target/hop-tools/bin/mcp-proxy" --config "$out/mcp-proxy.toml" >"$out/peer-cg.out" 2>&1 &
    pg=$!
    pids+=($pg)
    for _ in $(seq 1200); do curl -sf -m 2 "http://127.0.0.1:$port/admin/health" >/dev/null && break; sleep 0.1; done
    url="http://127.0.0.1:$port/"
    for conns in 1 32; do
        sids=$(sessions "$url" "$conns")
        threads=$((conns < 2 ? conns : 2))
        peer_drive() {
            timeout $(($1 + 120)) wrk --latency -t "$threads" -c "$conns" -d "$1s" --timeout 30s -s "$HERE/call.lua" \
                "$url" -- mock/echo 2025-11-25 "$sids" "$threads" | grep '^HOP '
        }
        peer_drive 5 >/dev/null
        sleep 3
        callgrind_control --zero "$pg" >/dev/null
        line=$(peer_drive "$seconds")
        callgrind_control --dump="peer-c$conns" "$pg" >/dev/null
        echo "mcp-proxy c=$conns $line" | tee "$out/wrk-callgrind-peer-c$conns.txt"
    done
    kill "$pg"; wait "$pg" 2>/dev/null || true
fi

echo "== perf and strace, natively (load: $(cut -d' ' -f1-3 /proc/loadavg))"
"$bin" serve --listen 127.0.0.1:0 --url "$upstream" >"$out/serve.out" 2>&1 &
sv=$!
pids+=($sv)
url=$(serve_url "$out/serve.out")
ready "$url"
for conns in 1 32; do
    sids=$(sessions "$url" "$conns")
    drive "$url" "$conns" 3 "$sids" >/dev/null
    drive "$url" "$conns" 10 "$sids" >"$out/wrk-perf-c$conns.txt" &
    driver=$!
    sleep 1
    perf record -q -e cpu-clock -F 4999 -g -p "$sv" -o "$out/perf-c$conns.data" -- sleep 8 2>/dev/null
    wait "$driver"
    echo "c=$conns $(cat "$out/wrk-perf-c$conns.txt")"
    perf report -q -i "$out/perf-c$conns.data" --no-children --sort dso --stdio -g none 2>/dev/null |
        grep -v '^$' >"$out/perf-dso-c$conns.txt" || true
    head -8 "$out/perf-dso-c$conns.txt"
    perf report -q -i "$out/perf-c$conns.data" --no-children --sort dso,sym --stdio -g none 2>/dev/null |
        grep -v '^$' >"$out/perf-sym-c$conns.txt" || true
    drive "$url" "$conns" 10 "$sids" >"$out/wrk-strace-c$conns.txt" &
    driver=$!
    sleep 1
    timeout 8 strace -c -f -p "$sv" -o "$out/strace-c$conns.txt" 2>/dev/null || true
    wait "$driver"
    echo "c=$conns (under strace) $(cat "$out/wrk-strace-c$conns.txt")"
    head -20 "$out/strace-c$conns.txt" || true
done

python3 "$HERE/profile.py" "$out"
