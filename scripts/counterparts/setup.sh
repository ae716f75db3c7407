#!/usr/bin/env bash
# Creates the Python venv the counterpart experiments use and installs the official MCP
# Python SDK into it, pinned. Idempotent. Needs python3 (3.10+) and PyPI.
#
#   scripts/counterparts/setup.sh            # target/counterparts-venv
#   VENV=/tmp/v scripts/counterparts/setup.sh
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
VENV="${VENV:-$ROOT/target/counterparts-venv}"
# The version the results in docs/counterparts.md were taken with.
MCP_VERSION="${MCP_VERSION:-2.3.0}"

if [[ ! -x "$VENV/bin/python" ]]; then
    python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install --quiet "mcp==$MCP_VERSION"
"$VENV/bin/python" - <<'PY'
import importlib.metadata as md, sys
print("python", sys.version.split()[0])
for name in ("mcp", "uvicorn", "starlette", "anyio", "sse-starlette"):
    print(name, md.version(name))
PY
