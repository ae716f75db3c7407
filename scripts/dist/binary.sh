#!/usr/bin/env bash
# Builds the mcp-resilient binary for one target with the `dist` profile, into OUT:
#
#   scripts/dist/binary.sh TARGET OUT      # e.g. x86_64-unknown-linux-musl target/dist/bin/x86_64-unknown-linux-musl
#
# Linux targets are musl, linked statically by Zig (cargo-zigbuild), TLS (aws-lc) included: one
# file that runs on any Linux of its architecture, glibc or not. Other targets (macOS, Windows) are
# built by cargo on a runner of their own (.github/workflows/release.yml).
set -euo pipefail
target="$1"
out="$2"
cd "$(dirname "$0")/../.."
case "$target" in
*-linux-musl)
    . scripts/dist/tools.sh
    cargo zigbuild --locked --profile dist --target "$target" -p mcp-resilient-cli
    ;;
*)
    rustup target add "$target"
    cargo build --locked --profile dist --target "$target" -p mcp-resilient-cli
    ;;
esac
exe=mcp-resilient
case "$target" in *windows*) exe=mcp-resilient.exe ;; esac
mkdir -p "$out"
cp "target/$target/dist/$exe" "$out/$exe"
case "$target" in
*-linux-musl)
    # Static, or it is not what it says: no interpreter, no shared library.
    if readelf -l "$out/$exe" | grep -q 'INTERP' || readelf -d "$out/$exe" | grep -q 'NEEDED'; then
        echo "$out/$exe is not a static binary" >&2
        exit 1
    fi
    ;;
esac
ls -l "$out/$exe"
