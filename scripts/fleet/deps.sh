#!/usr/bin/env bash
# Installs what the fleet tests and scripts/fleet.sh run against, from Debian's packages, when it
# is missing: redis-server, nginx and haproxy (Debian 12's 2.6). Only the binaries are used; the
# system services they come with are neither started nor configured by us (the tests and the
# scripts start their own, on loopback ports, in temp dirs). Idempotent; needs root and Debian's
# package mirror.
set -euo pipefail
if command -v redis-server >/dev/null && command -v nginx >/dev/null \
    && command -v haproxy >/dev/null; then
    exit 0
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    redis-server nginx haproxy
