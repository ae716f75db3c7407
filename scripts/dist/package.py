#!/usr/bin/env python3
"""Packs built mcp-resilient binaries into the release artefacts.

    scripts/dist/package.py DIST

DIST holds `bin/<rust target>/mcp-resilient[.exe]`, one per target built (scripts/dist/build.sh
puts them there; the release workflow gathers them from its runners). For each binary this
writes, into DIST:

    mcp-resilient-<version>-<target>.tar.gz (.zip on Windows)   the archive (cargo binstall's)
    npm/mcp-resilient-<platform>-<version>.tgz                   its npm package
    mcp_resilient_cli-<version>-py3-none-<tags>.whl              its wheel

then `npm/mcp-resilient-<version>.tgz` (the launcher package) and SHA256SUMS over all of them.
Every artefact carries the very binary it was given: nothing is built again. The version is the
workspace's; the npm and wheel metadata come from npm/mcp-resilient/package.json and
python/pyproject.toml, which must carry the same version (checked here, and by the suite).
"""

import base64
import gzip
import hashlib
import io
import json
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Rust target -> (npm platform package suffix: `${process.platform}-${process.arch}`, wheel
# platform tags). A static musl binary needs no C library of the system: its wheel says both
# manylinux (glibc) and musllinux, as one compressed tag set.
TARGETS = {
    "x86_64-unknown-linux-musl": (
        "linux-x64",
        "manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_2_x86_64",
    ),
    "aarch64-unknown-linux-musl": (
        "linux-arm64",
        "manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_2_aarch64",
    ),
    "x86_64-apple-darwin": ("darwin-x64", "macosx_10_12_x86_64"),
    "aarch64-apple-darwin": ("darwin-arm64", "macosx_11_0_arm64"),
    "x86_64-pc-windows-msvc": ("win32-x64", "win_amd64"),
}

# Archives and wheels are the same bytes for the same inputs: fixed times, owners and order.
EPOCH = 315532800  # 1980-01-01, the earliest time a zip can hold
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def fail(message):
    sys.exit(f"package.py: {message}")


def workspace_version():
    with open(ROOT / "Cargo.toml", "rb") as file:
        return tomllib.load(file)["workspace"]["package"]["version"]


def exe_name(target):
    return "mcp-resilient.exe" if "windows" in target else "mcp-resilient"


def tar_add(tar, name, data, mode):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    info.mtime = EPOCH
    info.uname = info.gname = ""
    tar.addfile(info, io.BytesIO(data))


def zip_add(archive, name, data, mode):
    info = zipfile.ZipInfo(name, ZIP_TIME)
    info.external_attr = (0o100000 | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, data)


def write_archive(dist, version, target, binary):
    """The release archive: the binary, the README and the license, in one folder."""
    folder = f"mcp-resilient-{version}-{target}"
    files = [
        (exe_name(target), binary.read_bytes(), 0o755),
        ("README.md", (ROOT / "README.md").read_bytes(), 0o644),
        ("LICENSE", (ROOT / "LICENSE").read_bytes(), 0o644),
    ]
    if "windows" in target:
        path = dist / f"{folder}.zip"
        with zipfile.ZipFile(path, "w") as archive:
            for name, data, mode in files:
                zip_add(archive, f"{folder}/{name}", data, mode)
    else:
        path = dist / f"{folder}.tar.gz"
        # gzip's own header carries a time and a name: both fixed.
        with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz:
            with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
                for name, data, mode in files:
                    tar_add(tar, f"{folder}/{name}", data, mode)
    return path


def npm_pack(stage, out):
    """`npm pack` of a staged package into OUT; returns the tarball's path."""
    result = subprocess.run(
        ["npm", "pack", "--json", "--pack-destination", str(out)],
        cwd=stage,
        check=True,
        capture_output=True,
        text=True,
    )
    return out / json.loads(result.stdout)[0]["filename"]


def write_npm_platform(dist, launcher, target, binary):
    """The platform package `@mcp-resilient/<platform>`: the binary, for one os and cpu."""
    platform, _ = TARGETS[target]
    name = f"@mcp-resilient/{platform}"
    if name not in launcher["optionalDependencies"]:
        fail(f"{name} is not an optional dependency of npm/mcp-resilient/package.json")
    os_name, cpu = platform.split("-")
    stage = dist / "npm-stage" / platform
    shutil.rmtree(stage, ignore_errors=True)
    (stage / "bin").mkdir(parents=True)
    shutil.copy2(binary, stage / "bin" / exe_name(target))
    (stage / "bin" / exe_name(target)).chmod(0o755)
    shutil.copy2(ROOT / "LICENSE", stage / "LICENSE")
    manifest = {
        "name": name,
        "version": launcher["version"],
        "description": f"The mcp-resilient binary for {os_name} {cpu} (used by the package mcp-resilient)",
        "license": launcher["license"],
        "repository": launcher["repository"],
        "os": [os_name],
        "cpu": [cpu],
        "files": ["bin/"],
        "preferUnplugged": True,
    }
    (stage / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    (stage / "README.md").write_text(
        f"# {name}\n\nThe `mcp-resilient` binary for {os_name} {cpu}. Install the package "
        "`mcp-resilient`, which picks this one where it fits.\n"
    )
    return npm_pack(stage, dist / "npm")


def write_npm_launcher(dist):
    stage = dist / "npm-stage" / "mcp-resilient"
    shutil.rmtree(stage, ignore_errors=True)
    shutil.copytree(ROOT / "npm" / "mcp-resilient", stage)
    shutil.copy2(ROOT / "LICENSE", stage / "LICENSE")
    return npm_pack(stage, dist / "npm")


def record_hash(data):
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def write_wheel(dist, project, target, binary):
    """A wheel (PEP 427) whose one file is the binary, as a script: pip and uv put it on the
    environment's PATH as `mcp-resilient`."""
    _, tags = TARGETS[target]
    name = project["name"].replace("-", "_")
    version = project["version"]
    dist_info = f"{name}-{version}.dist-info"
    readme = (ROOT / "python" / project["readme"]).read_text()
    metadata = [
        "Metadata-Version: 2.4",
        f"Name: {project['name']}",
        f"Version: {version}",
        f"Summary: {project['description']}",
        f"Keywords: {','.join(project['keywords'])}",
        f"License-Expression: {project['license']}",
        *[f"License-File: {f}" for f in project["license-files"]],
        f"Requires-Python: {project['requires-python']}",
        *[f"Project-URL: {k}, {v}" for k, v in project["urls"].items()],
        "Description-Content-Type: text/markdown",
        "",
        readme,
    ]
    wheel = [
        "Wheel-Version: 1.0",
        "Generator: mcp-resilient scripts/dist/package.py",
        "Root-Is-Purelib: false",
        *[f"Tag: py3-none-{tag}" for tag in tags.split(".")],
        "",
    ]
    files = [
        (f"{name}-{version}.data/scripts/{exe_name(target)}", binary.read_bytes(), 0o755),
        *[
            (f"{dist_info}/licenses/{f}", (ROOT / f).read_bytes(), 0o644)
            for f in project["license-files"]
        ],
        (f"{dist_info}/METADATA", "\n".join(metadata).encode(), 0o644),
        (f"{dist_info}/WHEEL", "\n".join(wheel).encode(), 0o644),
    ]
    record = "".join(f"{path},{record_hash(data)},{len(data)}\n" for path, data, _ in files)
    record += f"{dist_info}/RECORD,,\n"
    files.append((f"{dist_info}/RECORD", record.encode(), 0o644))
    path = dist / f"{name}-{version}-py3-none-{tags}.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for file_name, data, mode in files:
            zip_add(archive, file_name, data, mode)
    return path


def main():
    if len(sys.argv) != 2:
        fail("usage: scripts/dist/package.py DIST")
    dist = Path(sys.argv[1]).resolve()
    version = workspace_version()
    launcher = json.loads((ROOT / "npm" / "mcp-resilient" / "package.json").read_text())
    with open(ROOT / "python" / "pyproject.toml", "rb") as file:
        project = tomllib.load(file)["project"]
    for what, found in [("npm/mcp-resilient/package.json", launcher["version"]), ("python/pyproject.toml", project["version"])]:
        if found != version:
            fail(f"{what} says version {found}, the workspace {version}")
    (dist / "npm").mkdir(parents=True, exist_ok=True)

    made = []
    binaries = sorted((dist / "bin").glob("*/mcp-resilient*"))
    if not binaries:
        fail(f"no binary under {dist / 'bin'}")
    for binary in binaries:
        target = binary.parent.name
        if target not in TARGETS:
            fail(f"{binary}: no packaging known for target {target}")
        made.append(write_archive(dist, version, target, binary))
        made.append(write_npm_platform(dist, launcher, target, binary))
        made.append(write_wheel(dist, project, target, binary))
    made.append(write_npm_launcher(dist))

    sums = "".join(
        f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.relative_to(dist)}\n"
        for path in sorted(made)
    )
    (dist / "SHA256SUMS").write_text(sums)
    for path in sorted(made):
        print(f"{path.stat().st_size:>12,}  {path.relative_to(dist)}")


if __name__ == "__main__":
    main()
