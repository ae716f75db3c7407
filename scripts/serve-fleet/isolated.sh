#!/usr/bin/env bash
# Runs scripts/serve-fleet/run.py inside a network namespace of its own whose only interface is
# loopback (`unshare -n`, needs root or user namespaces), with every argument passed on. There a
# gateway that can only bind every interface (supergateway 4.0's Streamable HTTP listener, and
# anything else that binds 0.0.0.0) reaches nothing but 127.0.0.1: no other address exists. The
# hosts still target 127.0.0.1 only. The namespace ends with the run.
#
#   scripts/serve-fleet/isolated.sh --only direct,serve-stdio,supergateway
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
exec unshare --net -- sh -c 'ip link set lo up && exec python3 "$0" "$@"' "$HERE/run.py" "$@"
