#!/usr/bin/env node
// Runs the mcp-resilient binary of this platform's package (one of the optionalDependencies,
// which npm installs only where its `os` and `cpu` match), with this process's arguments,
// standard streams and exit status.
//
// The binary is a child, not an exec (Node has none): the signals a host sends this process are
// passed on to it, and this process ends as the child ended. A host that closes the proxy's
// standard input ends the child by itself.
"use strict";

const { spawn } = require("node:child_process");

const platforms = {
  "linux-x64": "@mcp-resilient/linux-x64",
  "linux-arm64": "@mcp-resilient/linux-arm64",
  "darwin-x64": "@mcp-resilient/darwin-x64",
  "darwin-arm64": "@mcp-resilient/darwin-arm64",
  "win32-x64": "@mcp-resilient/win32-x64",
};

function fail(message) {
  process.stderr.write(`mcp-resilient: ${message}\n`);
  process.exit(1);
}

const platform = `${process.platform}-${process.arch}`;
const pkg = platforms[platform];
if (pkg === undefined) {
  fail(
    `no prebuilt binary for ${platform} (there are: ${Object.keys(platforms).join(", ")}).\n` +
      "Build it with Rust instead: cargo install mcp-resilient-cli",
  );
}
const exe = process.platform === "win32" ? "mcp-resilient.exe" : "mcp-resilient";
let binary;
try {
  binary = require.resolve(`${pkg}/bin/${exe}`);
} catch {
  fail(
    `the package ${pkg}, which holds this platform's binary, is not installed.\n` +
      "It is an optional dependency of mcp-resilient: install without --omit=optional " +
      "(or --no-optional), or add it yourself: npm install " + pkg,
  );
}

const child = spawn(binary, process.argv.slice(2), { stdio: "inherit", windowsHide: true });
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP"];
for (const signal of forwarded) {
  process.on(signal, () => {
    try {
      child.kill(signal);
    } catch {
      // The child has already ended: its exit ends this process.
    }
  });
}
child.on("error", (error) => fail(`cannot run ${binary}: ${error.message}`));
child.on("exit", (code, signal) => {
  if (signal !== null) {
    // End as the child ended, so that a host sees the same status as from the binary itself.
    for (const s of forwarded) process.removeAllListeners(s);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
