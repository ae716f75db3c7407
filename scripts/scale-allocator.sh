#!/usr/bin/env bash
# Start-up of N supervisors with glibc's malloc and with jemalloc (BENCHMARKS.md, "Scale").
#
#   scripts/scale-allocator.sh [N] [KIND]     # default N=9500 KIND=HTTP-2026
#
# Runs the scale benchmark's idle child twice (its own mock, N supervisors at the default
# heartbeat, no restart): once as built, once with jemalloc preloaded (Debian's libjemalloc2,
# installed if missing). Prints each run's JSON line: ready_s, start_cpu_s, rss_kib, cpu_s.
# The mock, a child of the child, inherits the preload too.
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-9500}"
kind="${2:-HTTP-2026}"

lib=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
if [ ! -e "$lib" ]; then
    echo "jemalloc missing: installing Debian's libjemalloc2" >&2
    apt-get install -y libjemalloc2 >/dev/null
fi

bench=$(scripts/bench-exe.sh)
echo "glibc malloc:"
MCP_SCALE_NO_RESTART=1 "$bench" --scale-child idle "$kind" "$n" 10000 | tail -1
echo "jemalloc (LD_PRELOAD):"
MCP_SCALE_NO_RESTART=1 LD_PRELOAD="$lib" "$bench" --scale-child idle "$kind" "$n" 10000 | tail -1
