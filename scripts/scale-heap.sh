#!/usr/bin/env bash
# The heap of N idle supervised connections, by owner (BENCHMARKS.md, "Scale").
#
#   scripts/scale-heap.sh [N]     # default N=1000; each kind: HTTP 2025, HTTP 2026, legacy SSE
#
# Runs the scale benchmark's idle child (N supervisors of one mock at the default heartbeat, no
# restart) under heaptrack. The child exits without shutting anything down, so what heaptrack
# finds still allocated at exit is the idle connections' heap; scripts/heap-owners.py sorts it
# by owner. Installs heaptrack from Debian's packages if it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-1000}"

scripts/need-package.sh heaptrack heaptrack

bench=$(scripts/bench-exe.sh)
out="target/bench/heap"
mkdir -p "$out"
for kind in HTTP-2025 HTTP-2026 legacy-SSE; do
    rm -f "$out/$kind".*
    MCP_SCALE_NO_RESTART=1 heaptrack -o "$out/$kind" "$bench" --scale-child idle "$kind" "$n" 1000 >/dev/null
    data=$(ls "$out/$kind".*)
    heaptrack_print -f "$data" --flamegraph-cost-type leaked -F "$out/$kind.stacks" >/dev/null
    echo "## $kind"
    python3 scripts/heap-owners.py "$out/$kind.stacks" "$n"
    echo
done
