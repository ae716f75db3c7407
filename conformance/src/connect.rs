//! How the conformance client connects: the one place that turns the suite's invocation into a
//! [`ServerConfig`], and the wait for the first ready generation.
//!
//! # Waiting on the library
//!
//! - The protocol revision. The suite says which wire a scenario runs at
//!   (`MCP_CONFORMANCE_PROTOCOL_VERSION`); the library will take it as a `protocol` setting on
//!   `ServerConfig` (auto | 2025-11-25 | 2026-07-28). Until then it speaks 2025-11-25 whatever
//!   was asked, and [`config`] ignores `invocation.protocol`. When it lands, one line here:
//!   `.protocol(requested.parse()?)`.
//! - Elicitation. The library will take host-side handlers for elicitation (and sampling,
//!   roots); the policy this client registers is [`crate::elicitation`]. Until then the library
//!   declares no elicitation capability and a server's `elicitation/create` is refused.
//!
//! Everything the protocol itself requires (headers, `_meta`, retries after `input_required`)
//! is the library's job and deliberately absent here.

use std::time::Duration;

use mcp_resilient::{ConnectionState, ServerConfig, Supervisor, config::Reconnect};
use tokio::time::Instant;

use crate::invocation::Invocation;

/// Our name for the scenario's server; tools are registered as `mcp__conformance__<tool>`.
pub(crate) const SERVER: &str = "conformance";

/// The scenario server over Streamable HTTP (the only transport the suite serves).
///
/// Reconnects are short and few: a scenario server that refuses us should turn into a clear
/// `failed` within seconds, inside the suite's 30 s, rather than a long backoff.
pub(crate) fn config(invocation: &Invocation) -> ServerConfig {
    ServerConfig::http(SERVER, &invocation.url)
        .reconnect(Reconnect {
            initial_delay: Duration::from_millis(250),
            max_delay: Duration::from_secs(2),
            max_attempts: 4,
            ..Reconnect::default()
        })
        .connect_timeout(Duration::from_secs(10))
        .call_timeout(Duration::from_secs(10))
}

/// Waits until the server is ready (connected, tools listed and registered), or says why not
/// (naming the wire the suite asked for, since the library cannot be told it yet).
pub(crate) async fn wait_ready(
    server: &Supervisor,
    invocation: &Invocation,
    deadline: Instant,
) -> Result<(), String> {
    let started = Instant::now();
    let wire = invocation.protocol.as_deref().unwrap_or("unspecified");
    match server
        .wait_ready(deadline.saturating_duration_since(started))
        .await
    {
        Ok(_generation) => Ok(()),
        Err(state) => Err(format!(
            "not ready after {:.1}s (suite wire {wire}): {}",
            started.elapsed().as_secs_f64(),
            describe(&state)
        )),
    }
}

/// A state with its last death, e.g. `failed (rejected: initialize answered HTTP 400 …)`.
fn describe(state: &ConnectionState) -> String {
    match state {
        ConnectionState::Reconnecting { death, .. } | ConnectionState::Failed { death, .. } => {
            format!("{state} ({}: {})", death.cause, death.detail)
        }
        other => other.to_string(),
    }
}
