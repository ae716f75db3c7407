#!/usr/bin/env bash
# Installs what scripts/serve-fleet/run.py drives, pinned, under target/ (never globally):
# the official Python SDK (venv target/serve-fleet-venv, via scripts/counterparts/setup.sh), the
# official TypeScript SDK (target/counterparts-ts, via scripts/counterparts/setup-ts.sh), and the
# gateways compared with serve (npm: supergateway 4.0, mcp-proxy 6.7, in target/serve-fleet-gw).
# Needs python3, node and npm, and the package registries. Idempotent.
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
