#!/usr/bin/env bash
# Builds the `serve` image from scratch for each Linux binary in DIST/bin, by buildah, and writes
# them with their index as one OCI archive, DIST/mcp-resilient-<version>-image.tar:
#
#   scripts/dist/image.sh DIST
#
# The image holds the static binary and the CA certificates (for upstreams over https) and
# nothing else: no shell, no package manager. It runs as an unprivileged user (65532), and its
# entrypoint is `serve --listen 0.0.0.0:8808`: the arguments after the image's name are serve's,
# and serve refuses a non-loopback address without tokens, so a container must be given one
# (`--auth-token-env VAR` with the variable set, or `--auth-token-file`). `/healthz` and `/readyz`
# answer without a token, for the orchestrator's probes.
#
# buildah's storage is the project's own (target/dist-tools/containers), not the machine's.
set -euo pipefail
cd "$(dirname "$0")/../.."
dist="$(realpath "$1")"
. scripts/dist/tools.sh
version="$(python3 -c 'import tomllib; print(tomllib.load(open("Cargo.toml", "rb"))["workspace"]["package"]["version"])')"
store="$PWD/target/dist-tools/containers"
buildah() { command buildah --root "$store/root" --runroot "$store/run" --storage-driver vfs "$@"; }
name="localhost/mcp-resilient:$version"
archive="$dist/mcp-resilient-$version-image.tar"
certs=/etc/ssl/certs/ca-certificates.crt
[ -f "$certs" ] || scripts/need-package.sh update-ca-certificates ca-certificates

buildah manifest rm "$name" >/dev/null 2>&1 || true
buildah manifest create "$name" >/dev/null
for binary in "$dist"/bin/*-linux-musl/mcp-resilient; do
    target="$(basename "$(dirname "$binary")")"
    case "$target" in
    x86_64-*) arch=amd64 ;;
    aarch64-*) arch=arm64 ;;
    *) echo "image.sh: no image architecture for $target" >&2; exit 1 ;;
    esac
    ctr="$(buildah from --arch "$arch" scratch)"
    buildah copy --chmod 0755 --chown 0:0 "$ctr" "$binary" /usr/local/bin/mcp-resilient >/dev/null
    buildah copy --chmod 0644 --chown 0:0 "$ctr" "$certs" /etc/ssl/certs/ca-certificates.crt >/dev/null
    buildah config \
        --arch "$arch" --os linux \
        --user 65532:65532 \
        --workingdir / \
        --env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
        --port 8808/tcp \
        --entrypoint '["/usr/local/bin/mcp-resilient", "serve", "--listen", "0.0.0.0:8808"]' \
        --cmd '[]' \
        --label org.opencontainers.image.title=mcp-resilient \
        --label "org.opencontainers.image.version=$version" \
        --label org.opencontainers.image.licenses=Apache-2.0 \
        --label org.opencontainers.image.source=https://github.com/mcp-resilient/mcp-resilient \
        --label "org.opencontainers.image.description=serve: a Streamable HTTP gateway that keeps MCP host sessions alive across upstream failures" \
        "$ctr"
    # A fixed creation time: the same binary makes the same image.
    image="$(buildah commit --quiet --rm --timestamp 0 "$ctr" "localhost/mcp-resilient:$version-$arch")"
    buildah manifest add --arch "$arch" --os linux "$name" "$image" >/dev/null
    echo "image: $name ($arch) $image"
done
rm -f "$archive"
buildah manifest push --quiet --all "$name" "oci-archive:$archive:$name"
ls -l "$archive"
