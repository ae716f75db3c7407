#!/usr/bin/env bash
# Tests the artefacts scripts/dist/build.sh made, as their users get them, with no network:
#
#   scripts/dist/test.sh [DIST] [RESULTS]   # target/dist; scripts/dist/results.md
#
# 1. Both static binaries: `--version`; the arm64 one under qemu-user (binfmt_misc registered
#    from Debian's qemu-user-static when missing, so that the demo's own child, the mock server,
#    runs under it too), and the demo on each.
# 2. npm: the launcher and the x64 platform package, installed from their `npm pack` tarballs
#    into an empty project with npm offline and its registry pointed at a closed port;
#    `npx mcp-resilient --version`.
# 3. PyPI: the x86-64 wheel, `pip install --no-index` into a new venv; `uvx --offline --from`.
# 4. A host run through each: the official Python SDK's stdio client launches the proxy as a
#    host's configuration would (`npx -y mcp-resilient proxy --url …`, `uvx --from WHEEL
#    mcp-resilient proxy --url …`), with a server on the Python SDK upstream, killed and restarted
#    twice (scripts/counterparts/proxy_host.py): the session survives.
# 5. The image: its configuration (user, entrypoint, port, files) read from the OCI archive, and
#    the container run by podman where podman runs here, else its extracted binary: `serve` in it
#    refuses to start without a token, and answers `/healthz` and `/readyz` with one.
#
# Only step 4's Python SDK comes from the network (scripts/counterparts/setup.sh, once).
# Writes RESULTS (Markdown) and exits non-zero when a step failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"
dist="$(realpath "${1:-target/dist}")"
results="${2:-scripts/dist/results.md}"
. scripts/dist/tools.sh || exit 1
# tools.sh sets -e for itself: here a failed check is recorded, and the next one runs.
set +e
version="$(python3 -c 'import tomllib; print(tomllib.load(open("Cargo.toml", "rb"))["workspace"]["package"]["version"])')"
work="$(mktemp -d)"
children=()
cleanup() {
    for pid in "${children[@]}"; do kill "$pid" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT

passed=0
failed=0
lines=()
record() { # record OK|FAIL "what" "detail"
    if [ "$1" = OK ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
    lines+=("| $2 | $1 | $3 |")
    printf '%-4s %s: %s\n' "$1" "$2" "$3" >&2
}
# check "what" command...: OK when the command succeeds; the detail is its last line of output.
check() {
    local what="$1" out status
    shift
    out="$("$@" 2>&1)"
    status=$?
    local last
    last="$(printf '%s\n' "$out" | tail -n 1 | tr '|' '/' | cut -c1-160)"
    if [ "$status" -eq 0 ]; then record OK "$what" "$last"; else
        printf '%s\n' "$out" | tail -n 20 >&2
        record FAIL "$what" "exit $status: $last"
    fi
}
expect_version() { # expect_version command...: its --version (standard output) is this version
    local out
    out="$("$@" --version 2>"$work/stderr")" || { cat "$work/stderr"; echo "$out"; return 1; }
    [ "$out" = "mcp-resilient $version" ] || { cat "$work/stderr"; echo "said '$out'"; return 1; }
    echo "$out"
}
# A deadline for everything that could hang.
bounded() { timeout --kill-after=5 "$@"; }

x64="$dist/bin/x86_64-unknown-linux-musl/mcp-resilient"
arm64="$dist/bin/aarch64-unknown-linux-musl/mcp-resilient"

# 1. The binaries.
check "x86-64 musl: static" bash -c "file -b '$x64' | grep -o 'static[a-z-]* linked'"
check "x86-64 musl: --version" expect_version "$x64"
check "x86-64 musl: demo" bounded 120 "$x64" demo
check "arm64 musl: static, arm64" bash -c "file -b '$arm64' | grep -o 'ARM aarch64.*static[a-z-]* linked' | cut -c1-60"
check "arm64 musl under qemu-aarch64-static: --version" expect_version qemu-aarch64-static "$arm64"
binfmt() {
    [ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || return 1
    [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] ||
        sed -n '/^:qemu-aarch64:/p' /usr/lib/binfmt.d/qemu-aarch64.conf >/proc/sys/fs/binfmt_misc/register || return 1
    grep -q enabled /proc/sys/fs/binfmt_misc/qemu-aarch64 && echo "qemu-aarch64 registered"
}
check "arm64: binfmt_misc for qemu-aarch64" binfmt
check "arm64 musl under qemu: demo (its mock server child too)" bounded 300 "$arm64" demo

# 2. npm, offline.
offline_npm=(env npm_config_offline=true npm_config_registry=http://127.0.0.1:9/ npm_config_cache="$work/npm-cache"
    npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false)
mkdir -p "$work/npm-project"
npm_install() {
    cd "$work/npm-project" &&
        echo '{"name":"host","private":true}' >package.json &&
        bounded 120 "${offline_npm[@]}" npm install \
            "$dist/npm/mcp-resilient-$version.tgz" "$dist/npm/mcp-resilient-linux-x64-$version.tgz" &&
        ls node_modules/@mcp-resilient
}
check "npm: install both tarballs offline" npm_install
check "npm: npx mcp-resilient --version" expect_version env -C "$work/npm-project" "${offline_npm[@]}" npx mcp-resilient
mkdir -p "$work/no-platform/node_modules"
cp -r "$work/npm-project/node_modules/mcp-resilient" "$work/no-platform/node_modules/"
check "npm: without the platform package, a clear error" bash -c \
    "out=\$(node '$work/no-platform/node_modules/mcp-resilient/bin/mcp-resilient.js' --version 2>&1); [ \$? -ne 0 ] && echo \"\$out\" | grep 'is not installed'"

# 3. PyPI, offline.
wheel="$(ls "$dist"/mcp_resilient_cli-"$version"-py3-none-*x86_64*.whl)"
check "wheel: pip install --no-index into a new venv" bash -c \
    "python3 -m venv '$work/venv' && '$work/venv/bin/pip' install --quiet --no-index --disable-pip-version-check '$wheel' && ls '$work/venv/bin/mcp-resilient'"
check "wheel: mcp-resilient --version from the venv" expect_version "$work/venv/bin/mcp-resilient"
offline_uv=(env UV_OFFLINE=1 UV_NO_CONFIG=1 UV_PYTHON_DOWNLOADS=never UV_CACHE_DIR="$work/uv-cache" UV_TOOL_DIR="$work/uv-tools")
check "uvx --offline --from WHEEL mcp-resilient --version" expect_version "${offline_uv[@]}" uvx --from "$wheel" mcp-resilient

# 4. Host runs through npx and uvx.
counterparts="$root/target/counterparts-venv"
scripts/counterparts/setup.sh >/dev/null 2>&1 || record FAIL "host runs: the Python SDK (scripts/counterparts/setup.sh)" "could not install"
host_run() { # host_run LAUNCH ENV_JSON CWD
    local port
    port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    PROXY_ENV="$2" PROXY_CWD="$3" bounded 240 "$counterparts/bin/python" scripts/counterparts/proxy_host.py \
        "$1" scripts/counterparts/server.py "$port" >"$work/host.json" || { cat "$work/host.json"; return 1; }
    python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); print("session kept over 2 upstream kills: before={} during={!r} after={} new_process={} back={}, host left in {} s".format(o["before"], o["during"]["text"][:20], o["after"], o["new_process"], o["back"], o["leave_s"]))' "$work/host.json"
}
npm_env="$(python3 -c 'import json,sys; print(json.dumps({"npm_config_offline": "true", "npm_config_registry": "http://127.0.0.1:9/", "npm_config_cache": sys.argv[1], "npm_config_update_notifier": "false"}))' "$work/npm-cache")"
check "host run: Python SDK stdio client -> npx -y mcp-resilient proxy -> Python SDK server, killed and restarted" \
    host_run "npx -y mcp-resilient" "$npm_env" "$work/npm-project"
uv_env="$(python3 -c 'import json,sys; print(json.dumps({"UV_OFFLINE": "1", "UV_NO_CONFIG": "1", "UV_PYTHON_DOWNLOADS": "never", "UV_CACHE_DIR": sys.argv[1], "UV_TOOL_DIR": sys.argv[2]}))' "$work/uv-cache" "$work/uv-tools")"
check "host run: Python SDK stdio client -> uvx --from WHEEL mcp-resilient proxy -> Python SDK server, killed and restarted" \
    host_run "uvx --from $wheel mcp-resilient" "$uv_env" "$work"

# 5. The image.
scripts/dist/test-image.sh "$dist" "$work" >"$work/image.log" 2>&1
image_status=$?
while IFS='|' read -r status what detail; do
    record "$status" "$what" "$detail"
done < <(grep -E '^(OK|FAIL)\|' "$work/image.log")
[ "$image_status" -eq 0 ] || { tail -n 30 "$work/image.log" >&2; record FAIL "image: test-image.sh" "exit $image_status"; }

{
    echo "# Install tests"
    echo
    echo "\`scripts/dist/test.sh\` on the artefacts of \`scripts/dist/build.sh\`, version $version, at"
    echo "$(git log -1 --format='%h (%cs)'), $(date -u '+%Y-%m-%d'); no network but step 4's one-time SDK install."
    echo
    echo "| check | result | detail |"
    echo "|---|---|---|"
    printf '%s\n' "${lines[@]}"
    echo
    echo "**$passed passed, $failed failed.** Artefacts (bytes):"
    echo
    echo '```'
    (cd "$dist" && find . -maxdepth 2 -type f \( -name '*.tar.gz' -o -name '*.tgz' -o -name '*.whl' -o -name '*.tar' -o -name 'mcp-resilient' \) -printf '%12s  %P\n' | sort -k2)
    (cd "$dist" && find bin -type f -printf '%12s  %P\n' | sort -k2)
    echo '```'
} >"$results"
echo "$passed passed, $failed failed: $results" >&2
[ "$failed" -eq 0 ]
