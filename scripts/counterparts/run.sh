#!/usr/bin/env bash
# Runs the counterpart experiments: mcp-resilient against MCP servers written by others (the
# official Python SDK, `mcp` on PyPI, and the TypeScript SDK), with the loopback fault proxies of
# `mcp-resilient fault-proxy`. Clients speak `--protocol auto` (the default: 2026-07-28 where the
# server knows `server/discover`, else `initialize`) unless a variant's name ends in `-2025`,
# which pins 2025-11-25. Raw results go to target/counterparts/ (one folder per experiment), and
# summarize.py turns them into the tables of docs/counterparts.md.
#
#   scripts/counterparts/setup.sh                      # once: the venv with `mcp`
#   cargo build --release -p mcp-resilient -p mcp-resilient-cli --example counterpart_calls --bin mcp-resilient
#   scripts/counterparts/run.sh [a b c d d_long e f g h] # default: a b c d e
#
# The binaries are taken from $CARGO_TARGET_DIR (default target/); OUT=dir writes the results
# elsewhere (default target/counterparts). HTTP2=auto|prior-knowledge runs the counterpart_calls
# clients' Streamable HTTP over HTTP/2 where the server speaks it (their stderr names a fallback
# to HTTP/1.1); the `mcp-resilient` commands stay on HTTP/1.1.
#
# f needs scripts/counterparts/setup-ts.sh first; d_long takes about 75 s.
#
# Everything binds 127.0.0.1 on ports PORT_BASE+1 … PORT_BASE+99 (PORT_BASE=18700). Every
# client runs under `timeout`; every process this script starts is killed by pid on exit.
set -uo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
HERE="$ROOT/scripts/counterparts"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
BIN="$TARGET/release/mcp-resilient"
EX="$TARGET/release/examples/counterpart_calls"
VENV="${VENV:-$ROOT/target/counterparts-venv}"
PY="$VENV/bin/python"
OUT="${OUT:-$ROOT/target/counterparts}"
BASE="${PORT_BASE:-18700}"
PY_HTTP=$((BASE + 11))  # Python SDK, Streamable HTTP at /mcp
PY_SSE=$((BASE + 12))   # Python SDK, legacy SSE at /sse
PY_401=$((BASE + 13))   # Python SDK behind an ASGI middleware answering 401
PY_403=$((BASE + 14))   # … answering 403
GW=$((BASE + 21))       # fault-proxy http
TCP=$((BASE + 22))      # fault-proxy tcp
DEAD=$((BASE + 99))     # nobody listens here
TS_HTTP=$((BASE + 31))  # TypeScript SDK server (experiment f)

for f in "$BIN" "$EX" "$PY"; do
    [[ -x "$f" ]] || { echo "missing $f: run setup.sh and the cargo build first" >&2; exit 2; }
done
mkdir -p "$OUT"

PIDS=()
cleanup() {
    exec 7>&- 8>&- 2>/dev/null
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s%3N; }
# log, up, wait_port
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# wait_line FILE PATTERN SECONDS
wait_line() {
    local deadline=$(($(date +%s) + $3))
    until grep -q "$2" "$1" 2>/dev/null; do
        (($(date +%s) >= deadline)) && return 1
        sleep 0.05
    done
}

# start_py LOGFILE PORT [server.py args] -> SRV_PID
start_py() {
    local logfile=$1 port=$2
    shift 2
    if up "$port"; then log "port $port is taken"; return 1; fi
    "$PY" "$HERE/server.py" --port "$port" "$@" >>"$logfile" 2>&1 &
    SRV_PID=$!
    PIDS+=("$SRV_PID")
    wait_port "$port" 30 || { log "server on $port did not start (see $logfile)"; return 1; }
}

stop_pid() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

# ex SECONDS ARGS...: the counterpart_calls client under `timeout SECONDS`; with
# HTTP2=auto|prior-knowledge its Streamable HTTP sessions go over HTTP/2 where the server speaks
# it (stderr then says when it fell back).
ex() {
    local seconds=$1 extra=()
    shift
    if [[ -n "${HTTP2:-}" && " $* " != *" --sse "* && " $* " != *" --stdio "* ]]; then
        extra=(--http2 "$HTTP2")
    fi
    timeout "$seconds" "$EX" "$@" "${extra[@]}"
}

# start_gw DIR NAME UPSTREAM_PORT [fault args]: fault-proxy http on $GW, stdin held on fd 7.
start_gw() {
    local dir=$1 name=$2 upstream=$3
    shift 3
    rm -f "$dir/$name.gw.in"
    mkfifo "$dir/$name.gw.in"
    "$BIN" fault-proxy http --upstream "http://127.0.0.1:$upstream" --port "$GW" "$@" \
        <"$dir/$name.gw.in" >"$dir/$name.gw.out" 2>"$dir/$name.gw.err" &
    GW_PID=$!
    PIDS+=("$GW_PID")
    exec 7>"$dir/$name.gw.in"
    wait_line "$dir/$name.gw.out" LISTENING 10 || { log "gateway did not start"; return 1; }
}

# stop_gw: EOF on its stdin; it prints {"injected":…,"forwarded":…} and exits.
stop_gw() {
    exec 7>&-
    wait "$GW_PID" 2>/dev/null
}

# start_tcp DIR NAME UPSTREAM_PORT: fault-proxy tcp on $TCP, commands on fd 8.
start_tcp() {
    local dir=$1 name=$2 upstream=$3
    rm -f "$dir/$name.tcp.in"
    mkfifo "$dir/$name.tcp.in"
    "$BIN" fault-proxy tcp --upstream "127.0.0.1:$upstream" --port "$TCP" \
        <"$dir/$name.tcp.in" >"$dir/$name.tcp.out" 2>"$dir/$name.tcp.err" &
    TCP_PID=$!
    PIDS+=("$TCP_PID")
    exec 8>"$dir/$name.tcp.in"
    wait_line "$dir/$name.tcp.out" LISTENING 10 || { log "tcp proxy did not start"; return 1; }
}

# tcp_say DIR NAME COMMAND: sends a command, waits for its OK, records when it took effect.
tcp_say() {
    echo "$3" >&8
    wait_line "$1/$2.tcp.out" "OK $3" 5
    echo "{\"ts\":$(now),\"command\":\"$3\"}" >>"$1/$2.marks.jsonl"
}

stop_tcp() {
    echo stats >&8
    sleep 0.2
    exec 8>&-
    wait "$TCP_PID" 2>/dev/null
}

mark() { echo "{\"ts\":$(now),\"mark\":\"$3\"}" >>"$1/$2.marks.jsonl"; }

# ---------------------------------------------------------------------------------------------
# a. The flaky gateway: 1 in 25 tools/call / ping POSTs answered by the gateway itself.
exp_a() {
    local dir="$OUT/a"
    rm -rf "$dir"; mkdir -p "$dir"
    start_py "$dir/server.log" "$PY_HTTP" || return 1
    local srv=$SRV_PID
    # run_a NAME [gateway args] [-- example args]
    run_a() {
        local name=$1 gw=() ex=()
        shift
        while (($#)); do
            if [[ $1 == -- ]]; then shift; ex=("$@"); break; fi
            gw+=("$1"); shift
        done
        log "a/$name"
        start_gw "$dir" "$name" "$PY_HTTP" "${gw[@]}" || return 1
        ex 180 --url "http://127.0.0.1:$GW/mcp" --tool echo --args '{"text":"hi"}' \
            --calls 200 --spacing-ms 10 "${ex[@]}" --events >"$dir/$name.json" 2>"$dir/$name.events.jsonl"
        echo "{\"rc\":$?}" >"$dir/$name.rc.json"
        stop_gw
    }
    local m=(--fail-methods tools/call,ping)
    run_a 429-ra1 --fail-status 429 --fail-every 25 --retry-after 1 "${m[@]}"
    run_a 503 --fail-status 503 --fail-every 25 "${m[@]}"
    run_a 503-ra1 --fail-status 503 --fail-every 25 --retry-after 1 "${m[@]}"
    for seed in 1 2 3; do
        run_a "429-ra1-seed$seed" --fail-status 429 --fail-every 25 --retry-after 1 --seed "$seed" "${m[@]}"
    done
    for seed in 1 2 3 4 5 6; do
        run_a "503-seed$seed" --fail-status 503 --fail-every 25 --seed "$seed" "${m[@]}"
    done
    # The seeds whose draws put two 503s on consecutive calls, with 2025-11-25 (probe = ping).
    for seed in 1 4; do
        run_a "503-seed$seed-2025" --fail-status 503 --fail-every 25 --seed "$seed" "${m[@]}" \
            -- --protocol 2025-11-25
    done
    # Every POST, not only calls and pings: initialize, notifications and tools/list too.
    run_a 503-allposts --fail-status 503 --fail-every 25
    run_a 429-ra1-allposts --fail-status 429 --fail-every 25 --retry-after 1
    # Probes: an idle `watch` with a 300 ms heartbeat for 12 s while the gateway answers probes:
    # `ping` (2025-11-25) or `server/discover` (2026-07-28; also the 2026 handshake).
    # run_probe NAME [gateway args] [-- watch args]
    run_probe() {
        local name=$1 gw=() ex=()
        shift
        while (($#)); do
            if [[ $1 == -- ]]; then shift; ex=("$@"); break; fi
            gw+=("$1"); shift
        done
        log "a/$name"
        start_gw "$dir" "$name" "$PY_HTTP" --fail-methods ping,server/discover "${gw[@]}" || return 1
        timeout --foreground -s INT 12 "$BIN" watch --json --url "http://127.0.0.1:$GW/mcp" --transport http \
            --heartbeat-interval 300ms --heartbeat-timeout 100ms --reconnect-max 500ms "${ex[@]}" \
            >"$dir/$name.probes.jsonl" 2>"$dir/$name.probes.stderr"
        stop_gw
    }
    local pin=(-- --protocol 2025-11-25) era
    for era in "" -2025; do
        local extra=()
        [[ -n $era ]] && extra=("${pin[@]}")
        run_probe "probe-429-ra1-every3$era" --fail-status 429 --fail-every 3 --retry-after 1 "${extra[@]}"
        run_probe "probe-503-every3$era" --fail-status 503 --fail-every 3 "${extra[@]}"
        run_probe "probe-503-every2-seed1$era" --fail-status 503 --fail-every 2 --seed 1 "${extra[@]}"
    done
    stop_pid "$srv"
    return 0
}

# ---------------------------------------------------------------------------------------------
# b. Permanent rejections with the one-shot CLI.
exp_b() {
    local dir="$OUT/b"
    rm -rf "$dir"; mkdir -p "$dir"
    start_py "$dir/server.log" "$PY_HTTP" || return 1
    local srv=$SRV_PID
    start_py "$dir/server-sse.log" "$PY_SSE" --transport sse || return 1
    local ssesrv=$SRV_PID
    start_py "$dir/server401.log" "$PY_401" --reject 401 || return 1
    local s401=$SRV_PID
    start_py "$dir/server403.log" "$PY_403" --reject 403 || return 1
    local s403=$SRV_PID
    if up "$DEAD"; then log "port $DEAD is taken; skipping b"; return 1; fi
    run_b() {
        local name=$1
        shift
        log "b/$name: tools $*"
        local t0 t1 rc
        t0=$(now)
        timeout 300 "$BIN" tools "$@" >"$dir/$name.stdout" 2>"$dir/$name.stderr"
        rc=$?
        t1=$(now)
        echo "{\"case\":\"$name\",\"rc\":$rc,\"ms\":$((t1 - t0))}" >"$dir/$name.meta.json"
    }
    run_b control --url "http://127.0.0.1:$PY_HTTP/mcp"
    run_b wrong-path-auto --url "http://127.0.0.1:$PY_HTTP/nope"
    run_b wrong-path-http --url "http://127.0.0.1:$PY_HTTP/nope" --transport http
    run_b wrong-path-sse --url "http://127.0.0.1:$PY_HTTP/nope" --transport sse
    # The right server, the wrong transport.
    run_b sse-endpoint-as-http --url "http://127.0.0.1:$PY_SSE/sse" --transport http
    run_b sse-endpoint-auto --url "http://127.0.0.1:$PY_SSE/sse"
    run_b http-endpoint-as-sse --url "http://127.0.0.1:$PY_HTTP/mcp" --transport sse
    run_b refused-3s --url "http://127.0.0.1:$DEAD/mcp" --connect-timeout 3s
    run_b refused-default --url "http://127.0.0.1:$DEAD/mcp"
    run_b 401-middleware --url "http://127.0.0.1:$PY_401/mcp"
    run_b 403-middleware --url "http://127.0.0.1:$PY_403/mcp"
    for status in 401 403; do
        start_gw "$dir" "gw$status" "$PY_HTTP" --fail-status "$status" --fail-every 1 || return 1
        run_b "$status-gateway" --url "http://127.0.0.1:$GW/mcp"
        stop_gw
    done
    stop_pid "$srv"; stop_pid "$ssesrv"; stop_pid "$s401"; stop_pid "$s403"
    return 0
}

# ---------------------------------------------------------------------------------------------
# c. Busy: a tool blocks the server's event loop for 3 s while the heartbeat is fast.
exp_c() {
    local dir="$OUT/c"
    rm -rf "$dir"; mkdir -p "$dir"
    start_py "$dir/server.log" "$PY_HTTP" || return 1
    local srv=$SRV_PID
    local url="http://127.0.0.1:$PY_HTTP/mcp"
    local hb=(--heartbeat-interval-ms 500 --heartbeat-timeout-ms 200)
    log "c/block-3s"
    ex 60 --url "$url" --calls 1 --tool block --args '{"ms":3000}' "${hb[@]}" --events \
        >"$dir/block-3s.json" 2>"$dir/block-3s.events.jsonl"
    log "c/block-3s-then-echo: the same handle keeps working"
    ex 60 --url "$url" --calls 3 --spacing-ms 0 --tool block --args '{"ms":3000}' "${hb[@]}" \
        --events >"$dir/block-3s-x3.json" 2>"$dir/block-3s-x3.events.jsonl"
    log "c/block-3s-call-timeout-2s"
    ex 60 --url "$url" --calls 1 --tool block --args '{"ms":3000}' "${hb[@]}" \
        --call-timeout-ms 2000 --linger-ms 4000 --events >"$dir/block-3s-timeout2s.json" 2>"$dir/block-3s-timeout2s.events.jsonl"
    log "c/idle-watcher: a second, idle client watches while the first one blocks the server"
    timeout --foreground -s INT 12 "$BIN" watch --json --url "$url" --transport http \
        --heartbeat-interval 500ms --heartbeat-timeout 200ms --reconnect-max 500ms \
        >"$dir/idle-watcher.jsonl" 2>"$dir/idle-watcher.stderr" &
    local watcher=$!
    sleep 3
    mark "$dir" idle-watcher block-start
    ex 60 --url "$url" --calls 1 --tool block --args '{"ms":3000}' "${hb[@]}" --events \
        >"$dir/block-3s-with-watcher.json" 2>"$dir/block-3s-with-watcher.events.jsonl"
    mark "$dir" idle-watcher block-end
    wait "$watcher"
    stop_pid "$srv"
    return 0
}

# ---------------------------------------------------------------------------------------------
# d. Black hole and heal, behind fault-proxy tcp.
exp_d() {
    local dir="$OUT/d"
    rm -rf "$dir"; mkdir -p "$dir"
    start_py "$dir/server-http.log" "$PY_HTTP" || return 1
    local srv_http=$SRV_PID
    start_py "$dir/server-sse.log" "$PY_SSE" --transport sse || return 1
    local srv_sse=$SRV_PID
    for transport in http sse; do
        local upstream=$PY_HTTP path=/mcp exflag=()
        if [[ $transport == sse ]]; then upstream=$PY_SSE path=/sse exflag=(--sse); fi
        local url="http://127.0.0.1:$TCP$path"

        local name="watch-$transport"
        log "d/$name"
        start_tcp "$dir" "$name" "$upstream" || return 1
        timeout --foreground -s INT 20 "$BIN" watch --json --url "$url" --transport "$transport" \
            --heartbeat-interval 1s --reconnect-max 500ms \
            >"$dir/$name.jsonl" 2>"$dir/$name.stderr" &
        local client=$!
        sleep 4
        tcp_say "$dir" "$name" blackhole
        sleep 3
        tcp_say "$dir" "$name" pass
        wait "$client"
        stop_tcp

        name="calls-$transport"
        log "d/$name"
        start_tcp "$dir" "$name" "$upstream" || return 1
        ex 90 --url "$url" "${exflag[@]}" --calls 150 --spacing-ms 100 \
            --heartbeat-interval-ms 1000 --reconnect-max-ms 500 --call-timeout-ms 2000 --events \
            >"$dir/$name.json" 2>"$dir/$name.events.jsonl" &
        client=$!
        sleep 4
        tcp_say "$dir" "$name" blackhole
        sleep 3
        tcp_say "$dir" "$name" pass
        wait "$client"
        stop_tcp
    done
    stop_pid "$srv_http"; stop_pid "$srv_sse"
    return 0
}

# d_long: the same black hole with the default call timeout (60 s): the call in flight when
# the path goes dark is lost with its connection, even after the heal.
exp_d_long() {
    local dir="$OUT/d_long"
    rm -rf "$dir"; mkdir -p "$dir"
    start_py "$dir/server-http.log" "$PY_HTTP" || return 1
    local srv=$SRV_PID name=calls-http-default-call-timeout
    log "d_long/$name (about 75 s)"
    start_tcp "$dir" "$name" "$PY_HTTP" || return 1
    ex 150 --url "http://127.0.0.1:$TCP/mcp" --calls 40 --spacing-ms 100 \
        --heartbeat-interval-ms 1000 --reconnect-max-ms 500 --events \
        >"$dir/$name.json" 2>"$dir/$name.events.jsonl" &
    local client=$!
    sleep 2
    tcp_say "$dir" "$name" blackhole
    sleep 3
    tcp_say "$dir" "$name" pass
    wait "$client"
    stop_tcp
    stop_pid "$srv"
    return 0
}

# ---------------------------------------------------------------------------------------------
# e. kill -9 the server and start it again on the same port.
exp_e() {
    local dir="$OUT/e"
    rm -rf "$dir"; mkdir -p "$dir"
    # kill_restart DIR NAME PORT [server args]: kill -9 the current server, start a new one.
    kill_restart() {
        local d=$1 name=$2 port=$3
        shift 3
        mark "$d" "$name" killed
        kill -9 "$SRV_PID"
        wait "$SRV_PID" 2>/dev/null
        start_py "$d/server-$name.log" "$port" "$@" || return 1
        mark "$d" "$name" restarted
    }
    # The cases below read TRANSPORT (http or sse) and ERA ("" for `auto`, -2025 for a client
    # pinned to 2025-11-25; the Python server speaks both).
    e_setup() {
        port=$PY_HTTP path=/mcp sargs=() exflag=() watchflag=()
        if [[ $TRANSPORT == sse ]]; then port=$PY_SSE path=/sse sargs=(--transport sse) exflag=(--sse); fi
        if [[ $ERA == -2025 ]]; then exflag+=(--protocol 2025-11-25); watchflag=(--protocol 2025-11-25); fi
        url="http://127.0.0.1:$port$path"
    }
    e_watch_fast() {
        local port path sargs exflag watchflag url client name="watch-fast-$TRANSPORT$ERA"
        e_setup
        log "e/$name"
        start_py "$dir/server-$name.log" "$port" "${sargs[@]}" || return 1
        timeout --foreground -s INT 15 "$BIN" watch --json --url "$url" --transport "$TRANSPORT" "${watchflag[@]}" \
            --heartbeat-interval 1s --reconnect-max 500ms >"$dir/$name.jsonl" 2>"$dir/$name.stderr" &
        client=$!
        sleep 4
        kill_restart "$dir" "$name" "$port" "${sargs[@]}"
        wait "$client"
        stop_pid "$SRV_PID"
        return 0
    }
    e_watch_default() {
        local port path sargs exflag watchflag url client name="watch-default-$TRANSPORT$ERA"
        e_setup
        log "e/$name (default heartbeat 30 s and backoff)"
        start_py "$dir/server-$name.log" "$port" "${sargs[@]}" || return 1
        timeout --foreground -s INT 50 "$BIN" watch --json --url "$url" --transport "$TRANSPORT" "${watchflag[@]}" \
            >"$dir/$name.jsonl" 2>"$dir/$name.stderr" &
        client=$!
        sleep 4
        kill_restart "$dir" "$name" "$port" "${sargs[@]}"
        wait "$client"
        stop_pid "$SRV_PID"
        return 0
    }
    e_sparse_calls() {
        local port path sargs exflag watchflag url client name="sparse-calls-$TRANSPORT$ERA"
        e_setup
        log "e/$name (default heartbeat; a call every 5 s; what does the first call after the restart get?)"
        start_py "$dir/server-$name.log" "$port" "${sargs[@]}" || return 1
        ex 90 --url "$url" "${exflag[@]}" --calls 4 --spacing-ms 5000 --events \
            >"$dir/$name.json" 2>"$dir/$name.events.jsonl" &
        client=$!
        sleep 2
        kill_restart "$dir" "$name" "$port" "${sargs[@]}"
        wait "$client"
        stop_pid "$SRV_PID"
        return 0
    }
    # e_calls [SUFFIX example args]: a call every 100 ms, 1 s heartbeat, 2 s call timeout.
    e_calls() {
        local port path sargs exflag watchflag url client name="calls-$TRANSPORT$ERA${1:-}"
        (($#)) && shift
        e_setup
        log "e/$name"
        start_py "$dir/server-$name.log" "$port" "${sargs[@]}" || return 1
        ex 90 --url "$url" "${exflag[@]}" --calls 150 --spacing-ms 100 \
            --heartbeat-interval-ms 1000 --reconnect-max-ms 500 --call-timeout-ms 2000 "$@" --events \
            >"$dir/$name.json" 2>"$dir/$name.events.jsonl" &
        client=$!
        sleep 4
        kill_restart "$dir" "$name" "$port" "${sargs[@]}"
        wait "$client"
        stop_pid "$SRV_PID"
        return 0
    }
    local TRANSPORT ERA
    for TRANSPORT in http sse; do
        ERA=""
        e_watch_fast || return 1
        e_watch_default || return 1
        e_sparse_calls || return 1
        e_calls || return 1
    done
    # Streamable HTTP with the client pinned to 2025-11-25 (sessions, ping, no listen stream),
    # and the 2026 call case again with callers waiting up to 2 s for the next generation.
    TRANSPORT=http ERA=-2025
    e_watch_fast || return 1
    e_watch_default || return 1
    e_sparse_calls || return 1
    e_calls || return 1
    ERA=""
    e_calls -wait2s --call-wait-ms 2000 || return 1
    return 0
}

# ---------------------------------------------------------------------------------------------
# f. The TypeScript SDK (optional): see ts/ and setup-ts.sh.
exp_f() {
    local dir="$OUT/f" tsdir="$ROOT/target/counterparts-ts"
    rm -rf "$dir"; mkdir -p "$dir"
    [[ -d "$tsdir/node_modules/@modelcontextprotocol/sdk" ]] || {
        log "f: run scripts/counterparts/setup-ts.sh first"; return 1; }
    start_ts() {
        if up "$TS_HTTP"; then log "port $TS_HTTP is taken"; return 1; fi
        (cd "$tsdir" && exec node "$HERE/ts/server.mjs" --port "$TS_HTTP") >>"$1" 2>&1 &
        SRV_PID=$!
        PIDS+=("$SRV_PID")
        wait_port "$TS_HTTP" 30
    }
    start_ts "$dir/server.log" || return 1
    local url="http://127.0.0.1:$TS_HTTP/mcp"
    run_f() {
        local name=$1
        shift
        log "f/$name"
        start_gw "$dir" "$name" "$TS_HTTP" "$@" || return 1
        ex 180 --name ts --url "http://127.0.0.1:$GW/mcp" --calls 200 --spacing-ms 10 \
            --events >"$dir/$name.json" 2>"$dir/$name.events.jsonl"
        stop_gw
    }
    run_f 429-ra1 --fail-status 429 --fail-every 25 --retry-after 1 --fail-methods tools/call,ping
    run_f 503 --fail-status 503 --fail-every 25 --fail-methods tools/call,ping
    local t0 t1
    t0=$(now)
    timeout 120 "$BIN" tools --url "http://127.0.0.1:$TS_HTTP/nope" >"$dir/wrong-path.stdout" 2>"$dir/wrong-path.stderr"
    local rc=$?
    t1=$(now)
    echo "{\"case\":\"wrong-path\",\"rc\":$rc,\"ms\":$((t1 - t0))}" >"$dir/wrong-path.meta.json"
    log "f/block-3s"
    ex 60 --name ts --url "$url" --calls 1 --tool block --args '{"ms":3000}' \
        --heartbeat-interval-ms 500 --heartbeat-timeout-ms 200 --events \
        >"$dir/block-3s.json" 2>"$dir/block-3s.events.jsonl"
    log "f/kill-restart"
    timeout --foreground -s INT 15 "$BIN" watch --json --url "$url" --transport http \
        --heartbeat-interval 1s --reconnect-max 500ms >"$dir/kill.jsonl" 2>"$dir/kill.stderr" &
    local client=$!
    sleep 4
    mark "$dir" kill killed
    kill -9 "$SRV_PID"; wait "$SRV_PID" 2>/dev/null
    start_ts "$dir/server.log" || return 1
    mark "$dir" kill restarted
    wait "$client"
    stop_pid "$SRV_PID"
    return 0
}

# g. The Python SDK's server over stdio, as our child: calls every 10 ms, the child killed with
# SIGKILL once 1.5 s after the first ready (the supervisor starts the next child itself).
exp_g() {
    local dir="$OUT/g"
    mkdir -p "$dir"
    g_calls() {
        local name=$1 tag="g-$1-$$"
        shift
        log "g/$name"
        ex 120 --stdio "$PY $HERE/server.py --transport stdio --tag $tag" \
            --calls 400 --spacing-ms 10 --reconnect-max-ms 500 --events "$@" \
            >"$dir/$name.json" 2>"$dir/$name.events.jsonl" &
        local client=$!
        PIDS+=("$client")
        if wait_line "$dir/$name.events.jsonl" '"ready"' 30; then
            sleep 1.5
            mark "$dir" "$name" killed
            pkill -9 -f -- "^$PY $HERE/server.py --transport stdio --tag $tag"
        else
            log "g/$name: never ready (see $dir/$name.events.jsonl)"
        fi
        wait "$client"
    }
    g_calls calls-stdio
    g_calls calls-stdio-2025 --protocol 2025-11-25
}

# ---------------------------------------------------------------------------------------------
# h. A server that hangs between calls and comes back: the Python SDK's Streamable HTTP server
# stopped with SIGSTOP 1 s after the client is ready and continued 5 s later, both eras. The
# second call starts after a silence longer than the heartbeat interval, so it probes first; the
# probe goes unanswered, which ends the generation, and the call, not sent, goes to the next
# generation once the server answers again (the heartbeat alone would need 50 misses).
exp_h() {
    local dir="$OUT/h"
    rm -rf "$dir"; mkdir -p "$dir"
    h_calls() {
        local name=$1
        shift
        log "h/$name"
        start_py "$dir/$name.server.log" "$PY_HTTP" || return 1
        local srv=$SRV_PID
        ex 120 --url "http://127.0.0.1:$PY_HTTP/mcp" --calls 3 --spacing-ms 3000 \
            --heartbeat-interval-ms 1000 --heartbeat-timeout-ms 800 --heartbeat-failures 50 \
            --reconnect-max-ms 500 --call-timeout-ms 30000 --events "$@" \
            >"$dir/$name.json" 2>"$dir/$name.events.jsonl" &
        local client=$!
        PIDS+=("$client")
        if wait_line "$dir/$name.events.jsonl" '"ready"' 30; then
            sleep 1
            mark "$dir" "$name" stopped
            kill -STOP "$srv"
            sleep 5
            mark "$dir" "$name" continued
            kill -CONT "$srv"
        else
            log "h/$name: never ready (see $dir/$name.events.jsonl)"
            kill -CONT "$srv"
        fi
        wait "$client"
        stop_pid "$srv"
    }
    h_calls hang-http
    h_calls hang-http-2025 --protocol 2025-11-25
    return 0
}

experiments=("$@")
[[ ${#experiments[@]} -eq 0 ]] && experiments=(a b c d e)
"$PY" -c 'import importlib.metadata as m, sys; print("python", sys.version.split()[0]); print("mcp", m.version("mcp"))' \
    >"$OUT/versions.txt"
{
    rustc --version
    "$BIN" --version
    echo "mcp-resilient commit $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" status --porcelain -- src mock-server | grep -q . && echo ' (src or mock-server modified)')"
    echo "node $(node --version 2>/dev/null || echo none)"
    sdk="$ROOT/target/counterparts-ts/node_modules/@modelcontextprotocol/sdk/package.json"
    [[ -f "$sdk" ]] && echo "@modelcontextprotocol/sdk $(node -p "require('$sdk').version")"
} >>"$OUT/versions.txt" 2>&1
for e in "${experiments[@]}"; do
    started=$(date +%s)
    "exp_$e" || log "experiment $e stopped early"
    log "experiment $e took $(($(date +%s) - started)) s"
done
"$PY" "$HERE/summarize.py" "$OUT" >"$OUT/summary.md" && log "summary: $OUT/summary.md"
