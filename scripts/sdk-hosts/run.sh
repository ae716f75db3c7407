#!/usr/bin/env bash
# Hosts on the official MCP SDKs (Python `mcp` 2.3, TypeScript `@modelcontextprotocol/client` 2.3
# and `@modelcontextprotocol/sdk` 1.x) in front of servers nobody here wrote
# (`@modelcontextprotocol/server-everything`, a server on the Python SDK), directly and through
# `mcp-resilient serve` and `mcp-resilient proxy`: connect, list, call, get, read; writes
# scripts/sdk-hosts/results.md and prints "N passed, M failed" (steps).
#
#   scripts/sdk-hosts/run.sh                 # results.md
#   scripts/sdk-hosts/run.sh OUT.md          # elsewhere
#
# Installs the SDKs pinned (setup.sh) under target/sdk-hosts (SDK_HOSTS_DIR); builds the CLI (debug;
# MCP_RESILIENT_BIN to use another binary). Needs python3, node 20+, npm, PyPI and the npm
# registry. Everything listens on 127.0.0.1. Logs: target/sdk-hosts/logs/. Not part of `cargo test`.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
export SDK_HOSTS_DIR="${SDK_HOSTS_DIR:-$ROOT/target/sdk-hosts}"
OUT="${1:-$HERE/results.md}"
"$HERE/setup.sh" >&2
BIN="${MCP_RESILIENT_BIN:-}"
NOTE="binary: $BIN"
if [[ -z "$BIN" ]]; then
    (cd "$ROOT" && cargo build -p mcp-resilient-cli >&2)
    BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/mcp-resilient"
    NOTE="debug build"
fi
[[ -x "$BIN" ]] || { echo "no binary at $BIN" >&2; exit 1; }
rm -rf "$SDK_HOSTS_DIR/logs"
exec python3 "$HERE/run.py" "$BIN" "$SDK_HOSTS_DIR" "$OUT" "$NOTE"
