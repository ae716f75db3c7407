#!/usr/bin/env bash
# Installs what the release artefacts are built and tested with, into target/dist-tools (nothing
# global but rustup's targets and Debian's packages):
#
#   - the musl targets of the Rust standard library (rustup);
#   - Zig, from PyPI's `ziglang`, as the cross C compiler and linker (aws-lc, ring), driven by
#     cargo-zigbuild (crates.io);
#   - uv (PyPI), for the `uvx` install test;
#   - Debian's qemu-user-static (the arm64 binary is run, not only built), buildah (the image)
#     and podman (to run it).
#
# Sourced by the other scripts in scripts/dist/ (`. scripts/dist/tools.sh`): it exports PATH.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tools="$root/target/dist-tools"
mkdir -p "$tools"

rustup target add x86_64-unknown-linux-musl aarch64-unknown-linux-musl >/dev/null 2>&1 ||
    rustup target add x86_64-unknown-linux-musl aarch64-unknown-linux-musl

# Pinned, so that the artefacts of one checkout are built the same way every time.
zigbuild_version=0.24.1
ziglang_version=0.14.1
uv_version=0.13.9

if ! "$tools/bin/cargo-zigbuild" --version 2>/dev/null | grep -q " $zigbuild_version"; then
    cargo install --quiet --locked --root "$tools" cargo-zigbuild --version "$zigbuild_version"
fi
if [ ! -x "$tools/venv/bin/python" ]; then
    python3 -m venv "$tools/venv"
fi
if ! "$tools/venv/bin/python" -m pip show ziglang 2>/dev/null | grep -q "^Version: $ziglang_version"; then
    "$tools/venv/bin/pip" install --quiet --disable-pip-version-check "ziglang==$ziglang_version"
fi
if ! "$tools/venv/bin/uv" --version 2>/dev/null | grep -q " $uv_version"; then
    "$tools/venv/bin/pip" install --quiet --disable-pip-version-check "uv==$uv_version"
fi

for pair in qemu-aarch64-static:qemu-user-static buildah:buildah podman:podman; do
    "$root/scripts/need-package.sh" "${pair%%:*}" "${pair##*:}"
done

# cargo-zigbuild finds Zig through `python3 -m ziglang` when `zig` is not on the PATH: the venv's
# python comes first.
export PATH="$tools/bin:$tools/venv/bin:$PATH"
