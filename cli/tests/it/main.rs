//! The integration tests: the library, the CLI and the proxy against the mock server, with real
//! sockets on 127.0.0.1 and real child processes. One test binary links once; the chaos soak,
//! which counts the process's own descriptors, is a binary of its own (`tests/soak/`).
//!
//! They live in the CLI's package because they run the CLI's binary (`CARGO_BIN_EXE_…` names
//! only a binary of the package under test): as the mock server (`mcp-resilient mock-server`),
//! as the proxy and the gateway, and as the command line itself. The library's tests that need
//! no child process are its own (`tests/it/` at the repository's root, default features); the
//! helpers both use are `tests/support/`.

// Modules share helpers through `common`; what they export to each other is `pub`.
#![allow(unreachable_pub)]

mod common;

mod blip;
mod broken_stream;

mod cli;
mod cli_auth;
mod cli_harden;
mod cli_signals;
mod cli_wait;
mod era_2026;
mod era_fallback;
mod era_late;
#[cfg(feature = "fleet-tests")]
mod fleet;
mod host_cancel;
mod hostile_limits;
mod hostile_replies;
mod hostile_sse;
mod http2_tls;
mod http_stream;
mod layers;
mod lean_2026;
mod list_flood;
mod origin_budget;
mod origin_wakes;
mod progress;
mod proxy;
mod proxy_hostile;
mod remote_faults;
mod remote_recovery;
mod revisions;
#[cfg(feature = "rig")]
mod rig;
mod serve;
mod shape;
mod stdio_faults;
mod stdio_supervision;
mod verdicts;
mod versions;
