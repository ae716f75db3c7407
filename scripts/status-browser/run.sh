#!/usr/bin/env bash
# The status page in a real browser: Debian's chromium (headless) opens /status of a running
# `serve` whose upstream is the mock over Streamable HTTP; the mock is killed, then started
# again, and the page must show the death and the recovery within 2 s each, without a reload.
#
#   scripts/status-browser/run.sh
#
# Installs what it needs: Debian's chromium (scripts/need-package.sh) and playwright-core
# (pinned, from npm) under target/status-browser. Writes docs/status-browser-results.md and
# docs/status-page.png. Not in .ci/run: it installs a browser (~300 MB) and needs apt and npm,
# which CI's image does not have; run it when the page or its feed changes.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
DIR="$ROOT/target/status-browser"
PLAYWRIGHT=1.65.2

"$ROOT/scripts/need-package.sh" chromium chromium
mkdir -p "$DIR"
(
    cd "$DIR"
    [[ -f package.json ]] || echo '{"name":"status-browser","private":true,"type":"module"}' >package.json
    npm install --silent --no-audit --no-fund --save-exact "playwright-core@$PLAYWRIGHT"
)
cargo build --quiet --ignore-rust-version -p mcp-resilient-cli
cp "$ROOT/scripts/status-browser/check.mjs" "$DIR/check.mjs"
BIN="$ROOT/target/debug/mcp-resilient" OUT="$ROOT/docs" node "$DIR/check.mjs"
