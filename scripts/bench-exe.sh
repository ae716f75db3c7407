#!/usr/bin/env bash
# Prints the path of the benchmark binary (`cli/benches/resilience.rs`), building it first in the
# bench profile. Shared by scripts/scale-heap.sh and scripts/scale-allocator.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench --bench resilience --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "resilience" and m.get("executable"):
        print(m["executable"])'
