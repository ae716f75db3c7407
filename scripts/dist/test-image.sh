#!/usr/bin/env bash
# Checks the `serve` image of scripts/dist/image.sh (called by scripts/dist/test.sh):
#
#   scripts/dist/test-image.sh DIST WORK
#
# Prints one line per check, `OK|what|detail` or `FAIL|what|detail`.
#
# 1. The OCI archive, read as any runtime reads it: an index of one manifest per architecture,
#    each config's user, entrypoint, port and labels, and the layer's files (the binary and the
#    CA certificates, nothing else).
# 2. The container, run by podman in a network namespace of its own that has only a loopback
#    (`ip netns`): serve's 0.0.0.0:8808 is reachable from nowhere else. An upstream (the x86-64
#    binary's mock server) runs in the same namespace. Without a token, serve refuses to start; with
#    one (and `--allowed-host 127.0.0.1`: on 0.0.0.0, serve accepts only the `Host` names it is
#    told), `/healthz` and `/readyz` answer 200 and `/mcp` wants the token. Where podman cannot run
#    a container here, the layer's binary is run the same way, as the image's user, and the
#    detail says so.
set -uo pipefail
cd "$(dirname "$0")/../.."
dist="$(realpath "$1")"
work="$2"
version="$(python3 -c 'import tomllib; print(tomllib.load(open("Cargo.toml", "rb"))["workspace"]["package"]["version"])')"
archive="$dist/mcp-resilient-$version-image.tar"
ok() { echo "OK|$1|$2"; }
bad() { echo "FAIL|$1|$2"; }

# 1. The archive.
oci="$work/oci"
rm -rf "$oci" && mkdir -p "$oci" && tar -xf "$archive" -C "$oci" || { bad "image: OCI archive" "cannot unpack $archive"; exit 1; }
python3 - "$oci" "$version" <<'PY'
import json, sys, tarfile
from pathlib import Path
oci, version = Path(sys.argv[1]), sys.argv[2]
def blob(digest):
    return oci / "blobs" / digest.replace(":", "/")
def report(ok, what, detail):
    print(f"{'OK' if ok else 'FAIL'}|{what}|{detail}")
index = json.loads((oci / "index.json").read_text())
manifests = index["manifests"]
if len(manifests) == 1 and manifests[0]["mediaType"].endswith("image.index.v1+json"):
    manifests = json.loads(blob(manifests[0]["digest"]).read_text())["manifests"]
arches = sorted(m["platform"]["architecture"] for m in manifests)
report(arches == ["amd64", "arm64"], "image: one manifest per architecture", ", ".join(arches))
for m in manifests:
    arch = m["platform"]["architecture"]
    manifest = json.loads(blob(m["digest"]).read_text())
    config = json.loads(blob(manifest["config"]["digest"]).read_text())
    c = config["config"]
    report(config["architecture"] == arch and config["os"] == "linux", f"image {arch}: platform", f"{config['os']}/{config['architecture']}")
    report(c.get("User") == "65532:65532", f"image {arch}: not root", f"User {c.get('User')}")
    entry = c.get("Entrypoint")
    report(entry == ["/usr/local/bin/mcp-resilient", "serve", "--listen", "0.0.0.0:8808"], f"image {arch}: entrypoint", " ".join(entry or []))
    report(list(c.get("ExposedPorts", {})) == ["8808/tcp"], f"image {arch}: port", ", ".join(c.get("ExposedPorts", {})))
    labels = c.get("Labels", {})
    report(labels.get("org.opencontainers.image.version") == version, f"image {arch}: version label", labels.get("org.opencontainers.image.version"))
    files, size = [], 0
    for layer in manifest["layers"]:
        with tarfile.open(blob(layer["digest"])) as tar:
            for member in tar.getmembers():
                if member.isfile():
                    files.append(member.name.lstrip("./"))
                    size += member.size
                    if member.name.endswith("bin/mcp-resilient") and arch == "amd64":
                        tar.extract(member, oci / "rootfs", filter="fully_trusted")
    expected = ["etc/ssl/certs/ca-certificates.crt", "usr/local/bin/mcp-resilient"]
    report(sorted(files) == expected, f"image {arch}: files", f"{', '.join(sorted(files))} ({size:,} bytes)")
PY

# 2. Run it.
x64="$dist/bin/x86_64-unknown-linux-musl/mcp-resilient"
ns="mcpr-image-$$"
store="$PWD/target/dist-tools/containers"
podman() { command podman --root "$store/root" --runroot "$store/run" --storage-driver vfs --cgroup-manager cgroupfs --events-backend file "$@"; }
pids=()
cleanup() {
    podman rm -f -t 0 "$ns" >/dev/null 2>&1
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
    # Whatever still runs in the namespace (the upstream and serve are grandchildren of the
    # subshells `pids` holds): ended before the namespace goes, so nothing is left running.
    ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null
    for _ in $(seq 50); do [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && break; sleep 0.1; done
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
    ip netns delete "$ns" 2>/dev/null
}
trap cleanup EXIT
ip netns add "$ns" && ip netns exec "$ns" ip link set lo up || { bad "image: network namespace" "ip netns add failed"; exit 1; }
in_ns() { ip netns exec "$ns" "$@"; }

# The upstream, in the namespace.
in_ns "$x64" mock-server --transport http --port 7000 >"$work/upstream.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q LISTENING "$work/upstream.log" && break; sleep 0.1; done
grep -q LISTENING "$work/upstream.log" || { bad "image: upstream" "the mock server did not listen"; exit 1; }

token="image-test-$RANDOM$RANDOM"
image="localhost/mcp-resilient:$version"
how=""
if podman load -q -i "$archive" >"$work/podman-load.log" 2>&1 &&
    podman run --rm --network "ns:/run/netns/$ns" "$image" --url http://127.0.0.1:7000/mcp >"$work/no-token.log" 2>&1; then
    : # exits 0 without a token: that is a failure, reported below
fi
no_token_status=$?
if grep -q . "$work/no-token.log" && ! grep -qi 'error.*\(runtime\|cgroup\|OCI\)\|crun\|runc' "$work/no-token.log"; then
    how="podman $(command podman --version | cut -d' ' -f3)"
    run_serve() { podman run -d --name "$ns" --network "ns:/run/netns/$ns" -e MCP_TOKEN="$token" "$image" \
        --auth-token-env MCP_TOKEN --allowed-host 127.0.0.1 --url http://127.0.0.1:7000/mcp >/dev/null; }
    serve_log() { podman logs "$ns" 2>&1; }
else
    echo "podman could not run the image here:" >&2
    cat "$work/podman-load.log" "$work/no-token.log" >&2
    how="the image's binary as user 65532 (podman: $(tail -n 1 "$work/no-token.log" | cut -c1-100))"
    rootfs="$work/oci/rootfs"
    in_ns setpriv --reuid 65532 --regid 65532 --clear-groups "$rootfs/usr/local/bin/mcp-resilient" serve --listen 0.0.0.0:8808 \
        --url http://127.0.0.1:7000/mcp >"$work/no-token.log" 2>&1
    no_token_status=$?
    run_serve() {
        in_ns env MCP_TOKEN="$token" setpriv --reuid 65532 --regid 65532 --clear-groups "$rootfs/usr/local/bin/mcp-resilient" \
            serve --listen 0.0.0.0:8808 --auth-token-env MCP_TOKEN --allowed-host 127.0.0.1 --url http://127.0.0.1:7000/mcp >"$work/serve.log" 2>&1 &
        pids+=($!)
    }
    serve_log() { cat "$work/serve.log"; }
fi
if [ "$no_token_status" -ne 0 ] && grep -qi 'token' "$work/no-token.log"; then
    ok "image: serve refuses 0.0.0.0 without a token ($how)" "$(grep -i token "$work/no-token.log" | head -n 1 | tr '|' '/' | cut -c1-140)"
else
    bad "image: serve refuses 0.0.0.0 without a token ($how)" "exit $no_token_status: $(tail -n 1 "$work/no-token.log" | cut -c1-140)"
fi

run_serve
code() { in_ns curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$@"; }
ready=""
for _ in $(seq 150); do
    ready="$(code http://127.0.0.1:8808/readyz)"
    [ "$ready" = 200 ] && break
    sleep 0.1
done
if [ "$ready" = 200 ]; then ok "image: /readyz ($how)" "200: $(in_ns curl -s --max-time 2 http://127.0.0.1:8808/readyz | head -c 100)"; else
    serve_log | tail -n 20 >&2
    bad "image: /readyz ($how)" "answered '$ready' within 15 s"
fi
healthz="$(code http://127.0.0.1:8808/healthz)"
[ "$healthz" = 200 ] && ok "image: /healthz" 200 || bad "image: /healthz" "$healthz"
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"image-test","version":"1"}}}'
mcp() { code -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -d "$init" "$@" http://127.0.0.1:8808/mcp; }
without="$(mcp)"
with="$(mcp -H "Authorization: Bearer $token")"
[ "$without" = 401 ] && [ "$with" = 200 ] && ok "image: /mcp wants the token" "initialize: $without without it, $with with it" ||
    bad "image: /mcp wants the token" "initialize: $without without it, $with with it"
