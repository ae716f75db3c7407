#!/usr/bin/env bash
# Installs the official TypeScript MCP SDK (pinned) into target/counterparts-ts for experiment f.
# Needs node 18+ and npm.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
DIR="$ROOT/target/counterparts-ts"
SDK_VERSION="${SDK_VERSION:-1.32.2}"
mkdir -p "$DIR"
cd "$DIR"
[[ -f package.json ]] || echo '{"name":"counterparts-ts","private":true,"type":"module"}' >package.json
npm install --silent --no-audit --no-fund "@modelcontextprotocol/sdk@$SDK_VERSION" zod express
node -e 'for (const p of ["@modelcontextprotocol/sdk","express","zod"]) console.log(p, require("./node_modules/"+p+"/package.json").version)'
