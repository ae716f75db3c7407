#!/usr/bin/env bash
# Runs the cargo-fuzz targets in fuzz/ for a while each, one at a time (see FUZZING.md). What
# each target runs and asserts is the crate fuzz/checks/, whose own tests replay the crash inputs
# under `cargo test --workspace` on stable; this script is the only thing that builds fuzz/.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# SECONDS: per target (default 600). TARGET: config, names, stdio, http, sse, front (default: all of
# them).
# Needs the nightly toolchain; installs cargo-fuzz from crates.io when it is missing. Each target
# starts from its seeds in fuzz/corpus/<target>/ and from what earlier runs found in
# fuzz/target/corpus/<target>/ (untracked); a crash input lands in fuzz/artifacts/<target>/.
# Prints each target's last libFuzzer status line (execs, cov, ft, corpus) and exits non-zero
# when any target crashed, leaked, ran out of memory or hung.
#
# Environment: FUZZ_SANITIZER (default `none`: the crate denies `unsafe` (one audited block, not fuzzed), and what we look for
# is panics, overflows, hangs and memory; `address` halves the execs), FUZZ_NICE (default
# 19: the machine is shared).
set -euo pipefail

seconds=${1:-600}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(config names stdio http sse front)
fi
sanitizer=${FUZZ_SANITIZER:-none}
niceness=${FUZZ_NICE:-19}

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root/fuzz"

if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "fuzz.sh: installing cargo-fuzz" >&2
    cargo install cargo-fuzz --locked
fi
# The same dependency versions as the library's own lock, plus libFuzzer's.
[ -f Cargo.lock ] || cp ../Cargo.lock Cargo.lock
mkdir -p logs

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failed=()
for target in "${targets[@]}"; do
    mkdir -p "target/corpus/$target" "artifacts/$target"
    log="logs/$target.log"
    echo "== $target: ${seconds}s"
    # -a: debug assertions and overflow checks, as in `cargo test`. The first corpus directory
    # receives what the run finds; the tracked seeds are only read.
    status=0
    TMPDIR="$scratch" nice -n "$niceness" cargo +nightly fuzz run -a -s "$sanitizer" "$target" \
        "target/corpus/$target" "corpus/$target" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        </dev/null >"$log" 2>&1 || status=$?
    grep -E '^#[0-9]+' "$log" | tail -n 1 || true
    grep -E '^Done [0-9]+ runs' "$log" || true
    echo "corpus: $(find "target/corpus/$target" -type f | wc -l) files found + $(find "corpus/$target" -type f | wc -l) seeds"
    if [ "$status" -ne 0 ]; then
        echo "$target FAILED (exit $status); see fuzz/$log and fuzz/artifacts/$target/"
        grep -E -m 5 'panicked at|ERROR: libFuzzer|SUMMARY' "$log" || true
        failed+=("$target")
    fi
done
if [ ${#failed[@]} -ne 0 ]; then
    echo "crashed: ${failed[*]}"
    exit 1
fi
