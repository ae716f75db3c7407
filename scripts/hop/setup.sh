#!/usr/bin/env bash
# Installs what scripts/hop/run.py and scripts/hop/profile.sh drive, pinned, under target/ where it
# can be (never a global cargo install):
#
#   - wrk, Debian's package (bookworm: 4.1.0-3+b2), through scripts/need-package.sh: the load
#     generator. A different version is reported, not refused.
#   - mcp-proxy 0.6.0 from crates.io (tower-mcp 0.23), the Rust MCP gateway that serve is compared
#     with: `cargo install --locked --root target/hop-tools`, its default features (what
#     `cargo install mcp-proxy` gives its users). About 10 minutes on 2 cores.
#   - valgrind and perf (Debian's valgrind, linux-perf) for scripts/hop/profile.sh, with --profile.
#
#   scripts/hop/setup.sh [--profile]
#
# Idempotent: what is there at the pinned version is left alone. Needs root (or sudo) and Debian's
# mirror for the packages, and crates.io for mcp-proxy.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
MCP_PROXY_VERSION=0.6.0
WRK_VERSION=4.1.0-3+b2
TOOLS="$ROOT/target/hop-tools"

"$ROOT/scripts/need-package.sh" wrk wrk
have="$(dpkg-query -W -f '${Version}' wrk 2>/dev/null || echo unknown)"
[[ "$have" == "$WRK_VERSION" ]] || echo "wrk $have installed; the figures in BENCHMARKS.md used $WRK_VERSION" >&2

# mcp-proxy has no --version: cargo's own record of what it installed under $TOOLS says.
if ! cargo install --list --root "$TOOLS" 2>/dev/null | grep -qx "mcp-proxy v$MCP_PROXY_VERSION:"; then
    cargo install --locked --root "$TOOLS" mcp-proxy --version "$MCP_PROXY_VERSION"
fi
cargo install --list --root "$TOOLS" | grep '^mcp-proxy'

if [[ "${1:-}" == "--profile" ]]; then
    "$ROOT/scripts/need-package.sh" valgrind valgrind
    "$ROOT/scripts/need-package.sh" perf linux-perf
fi
echo "wrk $have"
