#!/usr/bin/env bash
# Installs, pinned, what scripts/sdk-hosts/run.sh drives: a Python venv with the official Python
# SDK (`mcp` on PyPI: host Client and FastMCP-style server) and a Node folder with the TypeScript
# SDK v2 client, the v1 SDK and server-everything. Idempotent. Needs python3 (3.10+), npm, PyPI
# and the npm registry. Everything goes under $SDK_HOSTS_DIR (default target/sdk-hosts).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
DIR="${SDK_HOSTS_DIR:-$ROOT/target/sdk-hosts}"
PY_MCP=2.3.0
TS_CLIENT=2.3.1
TS_SDK=1.32.2
EVERYTHING=2026.8.31

mkdir -p "$DIR/node"
if [[ ! -x "$DIR/venv/bin/python" ]]; then python3 -m venv "$DIR/venv"; fi
"$DIR/venv/bin/pip" install --quiet --disable-pip-version-check "mcp==$PY_MCP"
cd "$DIR/node"
[[ -f package.json ]] || echo '{"name":"sdk-hosts","private":true,"type":"module"}' >package.json
npm install --silent --no-audit --no-fund --save-exact \
    "@modelcontextprotocol/client@$TS_CLIENT" "@modelcontextprotocol/sdk@$TS_SDK" \
    "@modelcontextprotocol/server-everything@$EVERYTHING"
{
    "$DIR/venv/bin/python" -c 'import importlib.metadata as m, sys; print("python", sys.version.split()[0]); print("mcp (PyPI)", m.version("mcp"))'
    node -e 'for (const p of ["@modelcontextprotocol/client","@modelcontextprotocol/core","@modelcontextprotocol/sdk","@modelcontextprotocol/server-everything"]) console.log(p, require("./node_modules/"+p+"/package.json").version)'
    echo "node $(node --version)"
} | tee "$DIR/versions.txt"
