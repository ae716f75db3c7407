#!/usr/bin/env bash
# Installs what scripts/serve-fleet/run.py drives, pinned, under target/ (never globally):
# the official Python SDK (venv target/serve-fleet-venv, via scripts/counterparts/setup.sh), the
# official TypeScript SDK (target/counterparts-ts, via scripts/counterparts/setup-ts.sh), and the
# gateways compared with serve (npm: supergateway 4.0, mcp-proxy 6.7, in target/serve-fleet-gw;
# PyPI: IBM ContextForge, mcp-contextforge-gateway, in its own venv target/serve-fleet-cf, since
# it pins its own MCP SDK). Needs python3 (3.10+; 3.12 or 3.13 too
# for ContextForge), node and npm, and the package registries.
# Idempotent.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
VENV="$ROOT/target/serve-fleet-venv" "$ROOT/scripts/counterparts/setup.sh"
"$ROOT/scripts/counterparts/setup-ts.sh"
GW="$ROOT/target/serve-fleet-gw"
mkdir -p "$GW"
cd "$GW"
[[ -f package.json ]] || echo '{"name":"serve-fleet-gw","private":true}' >package.json
npm install --silent --no-audit --no-fund "supergateway@4.0" "mcp-proxy@6.7"
node -e 'for (const p of ["supergateway","mcp-proxy"]) console.log(p, require("./node_modules/"+p+"/package.json").version)'
CF="$ROOT/target/serve-fleet-cf"
CF_VERSION="${CF_VERSION:-1.1.0}"
# ContextForge 1.1 needs Python 3.12 or 3.13: CF_PYTHON, or the first of those that runs (on the
# PATH, or one of pyenv's versions).
if [[ ! -x "$CF/bin/python" ]]; then
    py="${CF_PYTHON:-}"
    for candidate in python3.12 python3.13 "$HOME"/.pyenv/versions/3.12*/bin/python3.12 \
                     "$HOME"/.pyenv/versions/3.13*/bin/python3.13; do
        [[ -n "$py" ]] && break
        "$candidate" -c 'import sys; assert (3, 12) <= sys.version_info < (3, 14)' 2>/dev/null && py="$candidate"
    done
    [[ -n "$py" ]] || { echo "ContextForge needs Python 3.12 or 3.13 (set CF_PYTHON)" >&2; exit 1; }
    "$py" -m venv "$CF"
fi
"$CF/bin/pip" install --quiet "mcp-contextforge-gateway==$CF_VERSION"
"$CF/bin/python" -c 'import importlib.metadata as md; [print(p, md.version(p)) for p in ("mcp-contextforge-gateway", "mcp")]'
