//! How the conformance client connects: the one place that turns the suite's invocation into a
//! [`ServerConfig`], and the wait for the first ready generation.
//!
//! # What the client chooses
//!
//! - The wire. The suite says which revision a scenario runs at
//!   (`MCP_CONFORMANCE_PROTOCOL_VERSION`). Asked for 2026-07-28, we let the library negotiate
//!   (`protocol = auto`: `server/discover` first, `initialize` only for an older server); asked
//!   for 2025-11-25, or not told (suites before 0.2), we pin 2025-11-25 so the scenario sees the
//!   handshake it expects.
//! - Elicitation: accept, with every field the requested schema gives a default for set to
//!   that default (SEP-1034), the library's [`HostHandlers::accept_elicitation_defaults`]. The
//!   same answer serves a 2025-11-25 `elicitation/create` request and a 2026-07-28
//!   `input_required` round.
//!
//! - Authorization, in the `auth/*` scenarios only: the library's OAuth, set up in
//!   [`crate::auth`].
//!
//! Everything the protocol itself requires (headers, `_meta`, retries after `input_required`)
//! is the library's job and deliberately absent here.

use std::time::Duration;

use mcp_resilient::{
    ServerConfig, Supervisor,
    config::{ProtocolChoice, Reconnect},
    host::HostHandlers,
};
use tokio::time::Instant;

use crate::{auth, invocation::Invocation};

/// Our name for the scenario's server; tools are registered as `mcp__conformance__<tool>`.
pub(crate) const SERVER: &str = "conformance";

/// The scenario server over Streamable HTTP (the only transport the suite serves).
///
/// Reconnects are short and few: a scenario server that refuses us should turn into a clear
/// `failed` within seconds, inside the suite's 30 s, rather than a long backoff.
pub(crate) fn config(invocation: &Invocation) -> Result<ServerConfig, String> {
    let protocol = match invocation.protocol.as_deref() {
        None | Some("2025-11-25") => ProtocolChoice::V2025_11_25,
        Some("2026-07-28") => ProtocolChoice::Auto,
        Some(other) => {
            return Err(format!(
                "unknown MCP_CONFORMANCE_PROTOCOL_VERSION {other:?}"
            ));
        }
    };
    let mut config = ServerConfig::http(SERVER, &invocation.url);
    if auth::wanted(invocation) {
        config = config.auth(auth::config(invocation));
    }
    Ok(config
        .protocol(protocol)
        .handlers(HostHandlers::new().accept_elicitation_defaults())
        .reconnect(
            Reconnect::default()
                .initial_delay(Duration::from_millis(250))
                .max_delay(Duration::from_secs(2))
                .max_attempts(4),
        )
        .connect_timeout(Duration::from_secs(10))
        .call_timeout(Duration::from_secs(10)))
}

/// Waits until the server is ready (connected, tools listed and registered), or says why not,
/// naming the wire the suite asked for. On success the negotiated revision goes to stderr,
/// which the script keeps beside the suite's checks.
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
        Ok(_generation) => {
            let status = server.status();
            let negotiated = status.protocol().unwrap_or("unknown");
            eprintln!("mcp-conformance-client: ready at {negotiated} (suite wire {wire})");
            Ok(())
        }
        // The error names the state with its last death, e.g. `failed (rejected: …)`.
        Err(not_ready) => Err(format!(
            "after {:.1}s (suite wire {wire}): {not_ready}",
            started.elapsed().as_secs_f64(),
        )),
    }
}
