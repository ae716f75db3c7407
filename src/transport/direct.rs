//! The heartbeat's way around rmcp's session: a probe the remote transport sends on a `POST` of
//! its own and whose answer it takes before rmcp decodes anything ([`DirectProbe`]).
//!
//! Through rmcp a probe pays for the session loop (a task spawned per request, the message moved
//! through its channels, a responder and its wake-ups) and for decoding the answer as any server
//! message (BENCHMARKS.md § 13, § 16). Each transport has its own: Streamable HTTP reads the
//! answer on the probe's own `POST` ([`http::DirectProbe`]); legacy SSE's arrives on the
//! session's event stream and is picked off it by its id ([`sse::SseProbe`]).
//!
//! # Invariants
//!
//! 1. A probe's id is a string, `mcp-resilient-probe-N` ([`MARK`](super::probe_wire::MARK)),
//!    never one of rmcp's numbers: an answer that strays to rmcp's session cannot complete another request (it is
//!    dropped as a stray response).
//! 2. Same outcome as through rmcp: a result or a JSON-RPC error is the server's answer; a
//!    transport failure is judged by the transport's own rules.

use rmcp::model::ProtocolVersion;

use super::{http, probe_wire::Answered, sse};
use crate::verdict::Verdict;

/// One generation's direct probes, per transport.
#[derive(Debug)]
pub(crate) enum DirectProbe {
    /// Streamable HTTP (boxed: ~660 bytes where legacy SSE's is ~170, in every session's
    /// `Activity`).
    Http(Box<http::DirectProbe>),
    /// Legacy SSE.
    Sse(sse::SseProbe),
}

impl DirectProbe {
    /// Sends one probe (`server/discover` when `discover`, else `ping`) and waits for its
    /// answer; a failure comes back as what it says about the server.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: dropping the future abandons the probe (its `POST`, and on legacy SSE the
    /// wait for its answer).
    pub(crate) async fn send(
        &self,
        discover: bool,
        protocol: &ProtocolVersion,
    ) -> Result<Answered, Verdict> {
        match self {
            DirectProbe::Http(probe) => match probe.send(discover, protocol).await {
                Ok(answered) => Ok(answered),
                Err(rmcp::transport::streamable_http_client::StreamableHttpError::TransportChannelClosed) => {
                    Err(Verdict::transport("transport closed"))
                }
                Err(e) => Err(super::judge::judge_http(&e, crate::verdict::Phase::Session)),
            },
            DirectProbe::Sse(probe) => probe.send(discover).await,
        }
    }
}
