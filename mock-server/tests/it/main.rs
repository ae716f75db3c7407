//! The mock server's integration tests, in one binary (one link where there were seventeen):
//! each module was once a test binary of its own, and the helpers are shared.
//!
//! - `binary_faults`, `binary_remote`, `stdio`: the `mcp-mock-server` binary as a process;
//! - `confirm`, `eras`, `features`, `listen`, `resources`: what the mock serves, by era;
//! - `http`, `sse`, `remote_faults`, `status_faults`, `stdio_faults`: transports and faults;
//! - `oauth`: the authorization server and its faults;
//! - `proxy_cli`, `proxy_http`, `proxy_tcp`: the fault proxy;
//! - `wire`: h2c beside HTTP/1.1, and the faults of HTTP/2 connections.
//!
//! `proxy_cli` runs this binary again as a child (`--exact proxy_cli::child`): a test that is
//! renamed or moved must keep that name in step.

mod common;
mod modern;
mod notes;
mod oauth_flow;
mod raw;

mod binary_faults;
mod binary_remote;
mod confirm;
mod eras;
mod features;
mod http;
mod listen;
mod oauth;
mod proxy_cli;
mod proxy_http;
mod proxy_tcp;
mod remote_faults;
mod resources;
mod sse;
mod status_faults;
mod stdio;
mod stdio_faults;
mod wire;
