#!/usr/bin/env bash
# The README's test command on a busy machine: `cargo test --workspace`, ROUNDS times in a row
# (3 unless given), each beside CPU hogs (`stress-ng --cpu HOGS`, 4 unless HOGS is set: on a
# 2-core machine, two cores' worth of load and then some). Stops at the first failing round.
#
#   scripts/busy-tests.sh          # 3 rounds
#   scripts/busy-tests.sh 5        # 5 rounds
#
# Installs stress-ng from Debian's packages when it is missing. The hogs run in their own
# process group and are ended when a round ends, whatever its outcome.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS="${1:-3}"
HOGS="${HOGS:-4}"

if ! command -v stress-ng >/dev/null; then
    echo "[busy-tests] installing stress-ng" >&2
    apt-get update -qq >&2 && apt-get install -y -qq stress-ng >&2
fi

# Built first, so that the rounds time the tests, not the build.
cargo test --workspace --no-run >&2

hogs=""
trap '[ -z "$hogs" ] || kill -- "-$hogs" 2>/dev/null || true' EXIT
for round in $(seq 1 "$ROUNDS"); do
    # A bound that outlives any round: the hogs stop by themselves too.
    setsid stress-ng --cpu "$HOGS" --timeout 1800s --quiet &
    hogs=$!
    begun=$SECONDS
    status=0
    cargo test --workspace >"target/busy-tests-$round.log" 2>&1 || status=$?
    kill -- "-$hogs" 2>/dev/null || true
    wait "$hogs" 2>/dev/null || true
    hogs=""
    passed=$(grep -Eo '^test result: [a-zA-Z]+\. [0-9]+ passed' "target/busy-tests-$round.log" |
        awk '{s += $4} END {print s + 0}')
    failed=$(grep -Eo '[0-9]+ failed' "target/busy-tests-$round.log" | awk '{s += $1} END {print s + 0}')
    echo "round $round: exit $status, $passed passed, $failed failed, $((SECONDS - begun)) s (log: target/busy-tests-$round.log)"
    if [ "$status" -ne 0 ]; then
        grep -E '^test .* FAILED|^---- ' "target/busy-tests-$round.log" | head -20
        exit "$status"
    fi
done
