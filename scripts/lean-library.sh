#!/usr/bin/env bash
# The client library, as a user depends on it (default features, normal dependencies only),
# builds no server code: no axum, no redis-rs, no rmcp server feature, no hyper server. Prints
# what it found and exits 1 when one is there. `.ci/run` runs it.
set -euo pipefail
cd "$(dirname "$0")/.."

tree="$(cargo tree -p mcp-resilient -e normal -f '{p} [{f}]' --prefix none)"
bad=""
if grep -Eq '^(axum|redis|axum-core) ' <<<"$tree"; then
    bad+="$(grep -E '^(axum|redis|axum-core) ' <<<"$tree" | sort -u)"$'\n'
fi
if grep -E '^(rmcp|hyper) ' <<<"$tree" | grep -Eq '[[,](server|transport-streamable-http-server|transport-io)[],]'; then
    bad+="$(grep -E '^(rmcp|hyper) ' <<<"$tree" | sort -u)"$'\n'
fi
if [ -n "$bad" ]; then
    printf 'the library with its default features pulls server code:\n%s' "$bad" >&2
    exit 1
fi
printf 'the library with its default features: %d packages, no axum, no redis, no server feature of rmcp or hyper\n' \
    "$(sed 's/ .*//' <<<"$tree" | sort -u | wc -l)"
