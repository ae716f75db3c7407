//! `mcp-conformance-client`: the client that the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`) drives, written with mcp-resilient's public API only
//! ([`Supervisor`], [`ToolRegistry`], [`ToolHandle`](mcp_resilient::ToolHandle)), so the suite
//! measures the library and not a hand-rolled MCP client. `scripts/conformance.sh` runs it;
//! `CONFORMANCE.md` holds the results.
//!
//! # The suite's contract
//!
//! For each scenario the suite starts its own server on localhost and runs
//! `mcp-conformance-client <server-url>` (the URL is always the last argument) with:
//!
//! - `MCP_CONFORMANCE_SCENARIO`: the scenario's name;
//! - `MCP_CONFORMANCE_PROTOCOL_VERSION`: the wire the scenario runs at (`2025-11-25` or
//!   `2026-07-28`; suites before 0.2 do not set it);
//! - `MCP_CONFORMANCE_CONTEXT`: optional JSON, `{"name": <scenario>, …}`, e.g. `toolCalls`.
//!
//! The checks are what the scenario's server observed; the exit code counts too. This binary
//! exits 0 when it connected and every step of the scenario succeeded, otherwise 1 (2 for a
//! bad invocation) with one line on stderr saying why.
//!
//! # Layout
//!
//! - [`invocation`]: arguments and environment;
//! - [`auth`]: the OAuth settings of the `auth/*` scenarios;
//! - [`connect`]: how we connect (the one place that builds the [`ServerConfig`](mcp_resilient::ServerConfig));
//! - [`scenario`]: what each scenario wants done, in one `match`, and the steps that do it.
#![forbid(unsafe_code)]

mod auth;
mod connect;
mod invocation;
mod scenario;

use std::{process::ExitCode, time::Duration};

use mcp_resilient::{Supervisor, ToolRegistry};
use tokio::time::Instant;

use invocation::Invocation;

/// Everything (connect, steps) must fit in this; the suite kills the client after 30 s by
/// default, and a clean shutdown (up to the close timeout) comes after it.
const BUDGET: Duration = Duration::from_secs(20);

#[tokio::main]
async fn main() -> ExitCode {
    let invocation = match Invocation::from_env() {
        Ok(invocation) => invocation,
        Err(reason) => {
            eprintln!("mcp-conformance-client: {reason}");
            return ExitCode::from(2);
        }
    };
    if let Some(code) = auth::reexec_with_secret(&invocation) {
        return code;
    }
    match run(&invocation).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(reason) => {
            eprintln!("mcp-conformance-client: {}: {reason}", invocation.scenario);
            ExitCode::FAILURE
        }
    }
}

/// Connects, performs the scenario's steps and shuts down, whatever happened in between.
async fn run(invocation: &Invocation) -> Result<(), String> {
    let deadline = Instant::now() + BUDGET;
    let steps = scenario::plan(invocation)?;
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(connect::config(invocation)?, &registry)
        .map_err(|e| format!("cannot start: {e}"))?;
    let outcome = async {
        connect::wait_ready(&server, invocation, deadline).await?;
        scenario::perform(&registry, &steps, deadline).await
    }
    .await;
    server.shutdown().await;
    outcome
}
