#!/usr/bin/env bash
# Builds every release artefact this machine can make, from the checkout:
#
#   scripts/dist/build.sh [DIST]       # DIST: target/dist by default; emptied first
#
# - the static binaries for Linux x86-64 and arm64 (musl; DIST/bin/<target>/mcp-resilient),
# - their archives, npm packages and wheels, the npm launcher package and SHA256SUMS
#   (scripts/dist/package.py),
# - the `serve` image for both architectures, as an OCI archive (scripts/dist/image.sh).
#
# The macOS and Windows binaries need their own runners: the release workflow builds them with
# scripts/dist/binary.sh and packs everything with the same package.py.
# DIST_TARGETS overrides the targets (e.g. only x86_64-unknown-linux-musl).
set -euo pipefail
cd "$(dirname "$0")/../.."
dist="$(realpath -m "${1:-target/dist}")"
targets="${DIST_TARGETS:-x86_64-unknown-linux-musl aarch64-unknown-linux-musl}"
begun=$SECONDS
. scripts/dist/tools.sh
rm -rf "$dist"
mkdir -p "$dist/bin"
for target in $targets; do
    scripts/dist/binary.sh "$target" "$dist/bin/$target"
done
python3 scripts/dist/package.py "$dist"
scripts/dist/image.sh "$dist"
echo "dist: every artefact in $dist, $((SECONDS - begun)) s"
