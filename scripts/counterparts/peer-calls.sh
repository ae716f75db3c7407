#!/usr/bin/env bash
# Sequential calls against the reference "everything" server, ours vs the official TypeScript
# SDK client (issue 24's goals table: "sequential calls against server-everything over
# Streamable HTTP, vs the TypeScript SDK client: ≥ 2× calls/s, ≤ 1/10 of its CPU").
#
# What it measures: one client process connects once over Streamable HTTP, then makes CALLS
# sequential `tools/call echo {"message":"hi"}`, one after the other with no pause. Per side:
#   - calls/s: calls over the call loop's elapsed time, timed by each client itself around the
#     loop (connect, tools/list and close excluded);
#   - CPU per call: the client process's user + system time (every thread), taken from the
#     kernel's rusage when the process is reaped (os.wait4 in a small python3 launcher), two
#     ways: "whole process" = CPU of the CALLS run / CALLS (start-up, connect and close spread
#     over the calls), and "marginal" = (CPU of the CALLS run − CPU of a 0-call run of the same
#     side in the same round) / CALLS (the loop alone, start-up and connect cancelled out);
#   - the server's CPU per call while serving that side (from /proc/PID/stat, 10 ms ticks).
# The sides alternate within each of ROUNDS rounds (odd rounds start with the TypeScript client,
# even rounds with ours), so a change of load on the machine falls on both.
#
# Sides: `ts` = @modelcontextprotocol/sdk's `Client` + `StreamableHTTPClientTransport`
# (scripts/counterparts/ts/peer_calls.mjs); `ours` = the counterpart_calls example (one
# `ToolHandle` on a `Supervisor`, `--protocol auto`); `ours-2025` = the same pinned to 2025-11-25
# (SIDES="ts ours ours-2025"). With PY=1 the same sides also run against the official Python
# SDK's server (scripts/counterparts/server.py, `echo {"text":"hi"}`; needs setup.sh first).
#
#   scripts/counterparts/peer-calls.sh                  # 3 rounds × 1,000 calls per side
#   ROUNDS=4 CALLS=250 PY=1 scripts/counterparts/peer-calls.sh
#
# It installs what it needs into target/: the TypeScript SDK via setup-ts.sh (pinned 1.32.2) and
# @modelcontextprotocol/server-everything (pinned EVERYTHING_VERSION) into
# target/counterparts-ts, and builds the example in release into $CARGO_TARGET_DIR (default
# target/). Needs node 18+, npm, python3 and cargo. Results: OUT (default target/peer-calls):
# one JSON file per run, versions.txt, and summary.md (the table of docs/counterparts.md § l).
#
# Everything binds 127.0.0.1 (server-everything through ts/everything_loopback.mjs, as its own
# launcher binds every interface) on PORT_BASE+51 and +52 (PORT_BASE=18700). Every client runs
# under `timeout`; every process this script starts is killed by pid on exit.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
HERE="$ROOT/scripts/counterparts"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
EX="$TARGET/release/examples/counterpart_calls"
TSDIR="$ROOT/target/counterparts-ts"
VENV="${VENV:-$ROOT/target/counterparts-venv}"
OUT="${OUT:-$ROOT/target/peer-calls}"
BASE="${PORT_BASE:-18700}"
EV_PORT=$((BASE + 51))   # server-everything, Streamable HTTP at /mcp
PY_PORT=$((BASE + 52))   # Python SDK server.py, Streamable HTTP at /mcp (PY=1)
CALLS="${CALLS:-1000}"
ROUNDS="${ROUNDS:-3}"
SIDES="${SIDES:-ts ours}"
PY="${PY:-0}"
# The version issue 24's earlier measurement used (the newest on npm on 2026-12-04).
EVERYTHING_VERSION="${EVERYTHING_VERSION:-2026.8.31}"
SDK_VERSION="${SDK_VERSION:-1.32.2}"

PIDS=()
cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# log, up, wait_port
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# npm_version PACKAGE: the version installed in $TSDIR, or nothing.
npm_version() {
    local pj="$TSDIR/node_modules/$1/package.json"
    [[ -f "$pj" ]] && node -p "require('$pj').version" || true
}

# ---------------------------------------------------------------------------------------------
# Install and build.
if [[ $(npm_version @modelcontextprotocol/sdk) != "$SDK_VERSION" ]]; then
    log "installing the TypeScript SDK $SDK_VERSION (setup-ts.sh)"
    SDK_VERSION="$SDK_VERSION" timeout 600 "$HERE/setup-ts.sh" >&2
fi
if [[ $(npm_version @modelcontextprotocol/server-everything) != "$EVERYTHING_VERSION" ]]; then
    log "installing @modelcontextprotocol/server-everything $EVERYTHING_VERSION"
    (cd "$TSDIR" && timeout 600 npm install --silent --no-audit --no-fund \
        "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION") >&2
fi
# server-everything asks for the SDK ^1.30; it must share the pinned one, not bring its own.
if [[ -d "$TSDIR/node_modules/@modelcontextprotocol/server-everything/node_modules/@modelcontextprotocol/sdk" ]]; then
    log "server-everything has an SDK of its own; expected it to use $SDK_VERSION"
    exit 1
fi
log "building counterpart_calls (release)"
(cd "$ROOT" && timeout 3000 cargo build --release --quiet -p mcp-resilient --example counterpart_calls) >&2
if [[ $PY == 1 && ! -x "$VENV/bin/python" ]]; then
    log "PY=1 needs $VENV: run scripts/counterparts/setup.sh first"
    exit 2
fi

rm -rf "$OUT"
mkdir -p "$OUT"
{
    echo "date $(date -u +%FT%TZ)"
    echo "mcp-resilient commit $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" status --porcelain -- src | grep -q . && echo ' (src modified)' || true)"
    rustc --version
    echo "node $(node --version)"
    echo "@modelcontextprotocol/sdk $(npm_version @modelcontextprotocol/sdk)"
    echo "@modelcontextprotocol/server-everything $(npm_version @modelcontextprotocol/server-everything)"
    echo "express $(npm_version express)"
    if [[ $PY == 1 ]]; then
        "$VENV/bin/python" -c 'import importlib.metadata as m, sys; print("python", sys.version.split()[0]); print("mcp", m.version("mcp")); print("uvicorn", m.version("uvicorn"))'
    fi
    echo "cpus $(nproc)"
    echo "uptime before: $(uptime)"
} >"$OUT/versions.txt"

# ---------------------------------------------------------------------------------------------
# measure OUTFILE CWD CMD...: runs CMD in CWD with stdout to OUTFILE and writes OUTFILE's
# .rusage.json: the child's user and system CPU seconds (rusage at reaping: it and every
# descendant it waited for), its wall time and exit code.
measure() {
    local outfile=$1 cwd=$2
    shift 2
    python3 - "$outfile" "$cwd" "$@" <<'PY'
import json, os, subprocess, sys, time
outfile, cwd, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
with open(outfile, "w") as out, open(outfile + ".stderr", "w") as err:
    t0 = time.monotonic()
    child = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
    _, status, ru = os.wait4(child.pid, 0)
    wall = time.monotonic() - t0
with open(outfile + ".rusage.json", "w") as f:
    json.dump({"user_s": ru.ru_utime, "sys_s": ru.ru_stime, "wall_s": wall,
               "rc": os.waitstatus_to_exitcode(status)}, f)
PY
}

# server_ticks PID: the server's user + system CPU so far, in clock ticks.
server_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# run_side SERVER PORT SIDE ROUND N SRV_PID: one client run, its JSON in $OUT.
run_side() {
    local server=$1 port=$2 side=$3 round=$4 n=$5 srv=$6
    local url="http://127.0.0.1:$port/mcp" file="$OUT/$server.$side.r$round.n$n.json" args
    if [[ $server == everything ]]; then args='{"message":"hi"}'; else args='{"text":"hi"}'; fi
    local t0 t1
    t0=$(server_ticks "$srv")
    case $side in
        ts) measure "$file" "$TSDIR" timeout 300 node "$HERE/ts/peer_calls.mjs" --url "$url" \
                --tool echo --args "$args" --calls "$n" ;;
        ours) measure "$file" "$ROOT" timeout 300 "$EX" --name peer --url "$url" --tool echo \
                --args "$args" --calls "$n" --spacing-ms 0 --protocol auto ;;
        ours-2025) measure "$file" "$ROOT" timeout 300 "$EX" --name peer --url "$url" --tool echo \
                --args "$args" --calls "$n" --spacing-ms 0 --protocol 2025-11-25 ;;
        *) log "unknown side $side"; return 2 ;;
    esac
    t1=$(server_ticks "$srv")
    echo "{\"server_ticks\":$((t1 - t0)),\"clk_tck\":$(getconf CLK_TCK)}" >"$file.server.json"
    local rc
    rc=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rc"])' "$file.rusage.json")
    [[ $rc == 0 ]] || { log "$server/$side round $round n=$n exited $rc (see $file.stderr)"; return 1; }
}

# bench SERVER PORT SRV_PID: ROUNDS rounds, sides alternating; each side also runs 0 calls.
bench() {
    local server=$1 port=$2 srv=$3 round side sides
    read -ra sides <<<"$SIDES"
    for side in "${sides[@]}"; do   # warm-up: page cache, the server's JIT
        run_side "$server" "$port" "$side" 0 100 "$srv"
    done
    for ((round = 1; round <= ROUNDS; round++)); do
        local order=("${sides[@]}")
        if ((round % 2 == 0)); then
            local rev=() i
            for ((i = ${#sides[@]} - 1; i >= 0; i--)); do rev+=("${sides[i]}"); done
            order=("${rev[@]}")
        fi
        for side in "${order[@]}"; do
            log "$server round $round: $side, $CALLS calls"
            run_side "$server" "$port" "$side" "$round" "$CALLS" "$srv"
            run_side "$server" "$port" "$side" "$round" 0 "$srv"
        done
    done
}

# ---------------------------------------------------------------------------------------------
if up "$EV_PORT"; then log "port $EV_PORT is taken"; exit 1; fi
(cd "$TSDIR" && PORT=$EV_PORT exec node "$HERE/ts/everything_loopback.mjs" streamableHttp) \
    >"$OUT/everything.log" 2>&1 &
EV_PID=$!
PIDS+=("$EV_PID")
wait_port "$EV_PORT" 30 || { log "server-everything did not start (see $OUT/everything.log)"; exit 1; }
bench everything "$EV_PORT" "$EV_PID"
kill "$EV_PID"; wait "$EV_PID" 2>/dev/null || true

if [[ $PY == 1 ]]; then
    if up "$PY_PORT"; then log "port $PY_PORT is taken"; exit 1; fi
    "$VENV/bin/python" "$HERE/server.py" --port "$PY_PORT" >"$OUT/python.log" 2>&1 &
    PY_PID=$!
    PIDS+=("$PY_PID")
    wait_port "$PY_PORT" 30 || { log "server.py did not start (see $OUT/python.log)"; exit 1; }
    bench python "$PY_PORT" "$PY_PID"
    kill "$PY_PID"; wait "$PY_PID" 2>/dev/null || true
fi
echo "uptime after: $(uptime)" >>"$OUT/versions.txt"

# ---------------------------------------------------------------------------------------------
# Summary: per server and side, over the rounds (warm-up round 0 left out).
python3 - "$OUT" "$CALLS" <<'PY' | tee "$OUT/summary.md"
import glob, json, os, re, statistics, sys
out, calls = sys.argv[1], int(sys.argv[2])
runs = {}
for path in glob.glob(os.path.join(out, "*.json")):
    m = re.fullmatch(r"(\w+)\.([\w-]+)\.r(\d+)\.n(\d+)\.json", os.path.basename(path))
    if not m or m.group(3) == "0":
        continue
    server, side, rnd, n = m.group(1), m.group(2), int(m.group(3)), int(m.group(4))
    lines = [l for l in open(path) if l.strip().startswith("{")]
    res = json.loads(lines[-1])
    ru = json.load(open(path + ".rusage.json"))
    srv = json.load(open(path + ".server.json"))
    runs.setdefault((server, side), {}).setdefault(rnd, {})[n] = {
        "res": res, "cpu": ru["user_s"] + ru["sys_s"],
        "srv": srv["server_ticks"] / srv["clk_tck"]}

rows = {}
for (server, side), rounds in sorted(runs.items()):
    rate, whole, marginal, srv_cpu, loop_cpu = [], [], [], [], []
    total = ok = 0
    protos = set()
    for rnd, by_n in sorted(rounds.items()):
        full, zero = by_n[calls], by_n.get(0)
        res = full["res"]
        total += res["calls"]
        ok += res["ok"]
        protos.add(res.get("protocol"))
        rate.append(res["calls"] / (res["elapsed_ms"] / 1000))
        whole.append(full["cpu"] / res["calls"] * 1000)
        if zero:
            marginal.append((full["cpu"] - zero["cpu"]) / res["calls"] * 1000)
        srv_cpu.append(full["srv"] / res["calls"] * 1000)
        if "loop_cpu_ms" in res:
            loop_cpu.append(res["loop_cpu_ms"] / res["calls"])
    rows[(server, side)] = {
        "protocol": "/".join(sorted(p or "?" for p in protos)), "calls": total, "ok": ok,
        "rate": statistics.median(rate), "rate_range": (min(rate), max(rate)),
        "whole": statistics.median(whole), "marginal": statistics.median(marginal) if marginal else None,
        "loop": statistics.median(loop_cpu) if loop_cpu else None,
        "srv": statistics.median(srv_cpu), "rounds": len(rate)}

def f(x, d=3):
    return "–" if x is None else f"{x:,.{d}f}"

print(f"Medians over the rounds ({calls:,} sequential calls per run); ranges are min–max.\n")
print("| server | side | protocol | calls (ok) | calls/s | range | client CPU ms/call, whole process | marginal | in-loop (node) | server CPU ms/call |")
print("|---|---|---|---|---|---|---|---|---|---|")
for (server, side), r in rows.items():
    lo, hi = r["rate_range"]
    print(f"| {server} | {side} | {r['protocol']} | {r['calls']:,} ({r['ok']:,}) | {r['rate']:,.0f} | {lo:,.0f}–{hi:,.0f} "
          f"| {f(r['whole'])} | {f(r['marginal'])} | {f(r['loop'])} | {f(r['srv'])} |")
print()
print("| server | ours / ts | calls/s | client CPU per call, whole process | marginal | server CPU per call |")
print("|---|---|---|---|---|---|")
for (server, side), r in rows.items():
    ts = rows.get((server, "ts"))
    if side == "ts" or not ts:
        continue
    ratio = lambda a, b: "–" if a is None or b in (None, 0) else f"{a / b:.2f}"
    print(f"| {server} | {side} | {ratio(r['rate'], ts['rate'])}× | {ratio(r['whole'], ts['whole'])} "
          f"| {ratio(r['marginal'], ts['marginal'])} | {ratio(r['srv'], ts['srv'])} |")
PY
cat "$OUT/versions.txt"
