#!/usr/bin/env bash
# The conformance suite's client command for `scripts/conformance-cli.sh`: does what the scenario
# in MCP_CONFORMANCE_SCENARIO asks with the mcp-resilient CLI ($MCP_RESILIENT), the default
# `--protocol` (auto: server/discover first, then initialize) and the default transport.
# The suite runs it as `command.sh <serverUrl>`.
set -euo pipefail
url=$1
cli=${MCP_RESILIENT:?set MCP_RESILIENT to the mcp-resilient binary}
case "${MCP_CONFORMANCE_SCENARIO:-}" in
    initialize) exec "$cli" tools --url "$url" ;;
    tools_call) exec "$cli" call add_numbers '{"a": 2, "b": 3}' --url "$url" ;;
    sse-retry) exec "$cli" call test_reconnection '{}' --url "$url" ;;
    elicitation-sep1034-client-defaults)
        exec "$cli" call test_client_elicitation_defaults '{}' --url "$url" ;;
    *) echo "command.sh: no command for scenario '${MCP_CONFORMANCE_SCENARIO:-}'" >&2; exit 2 ;;
esac
