//! The probe sent by the transport itself: `ping` (or `server/discover`) on a `POST` of its own,
//! beside rmcp's session.
//!
//! Through rmcp a probe pays for the session loop (a task spawned per request, the message
//! moved through its channels, a responder and its wake-ups): 1.7–2.2 times a bare `POST` of
//! the same bytes in instructions (BENCHMARKS.md § 16). Here the body is serialized once per
//! generation and method, each probe splicing in its own id; the headers are built once; the
//! answer is read as every answer is (the transport's bounds, its parser, its activity
//! stamps), but for its result, which is checked to be JSON and never typed: the probe needs
//! to know only that it is a result ([`super::decode::probe_answer`]). The probe's id is a string (`mcp-resilient-probe-N`), never one of rmcp's numbers,
//! so an answer that strays to rmcp's session cannot complete another request.
//!
//! # Invariants
//!
//! 1. Same outcome as through rmcp: an answer of any kind (a result, a JSON-RPC error) is the
//!    server's; an HTTP failure is the same [`HttpError`] value, judged by the same rules. The
//!    token comes from the server's authorizer, renewed once on a challenge, as for any request.
//! 2. What else the server sends on the probe's stream is handed to rmcp's session, as on any
//!    request's stream: nothing is lost because the probe went around the session.
//! 3. A probe never keeps the transport alive: it holds the core weakly, and a stopped
//!    transport ends it.

use std::{
    pin::Pin,
    sync::{
        Arc, OnceLock, Weak,
        atomic::{AtomicU64, Ordering},
    },
};

use bytes::{BufMut, Bytes, BytesMut};
use reqwest::header::HeaderMap;
use rmcp::{
    model::{
        ClientCapabilities, ClientJsonRpcMessage, ClientRequest, DiscoverRequest,
        DiscoverRequestParams, ErrorData, GetMeta, Implementation, JsonRpcRequest,
        JsonRpcVersion2_0, PingRequest, ProtocolVersion, RequestId,
    },
    transport::streamable_http_client::StreamableHttpError,
};

use super::{HttpError, core::Core, routing};

mod read;

/// The id the templates are serialized with; each probe's replaces it.
const MARK: &str = "mcp-resilient-probe";

/// What the server answered a probe with.
#[derive(Debug)]
pub(crate) enum Answered {
    /// A result, or an answer that was no JSON-RPC response (202, a stray message): the server
    /// is there.
    Result,
    /// A JSON-RPC error.
    Error(ErrorData),
}

/// Who the client is, as a 2026-07-28 request's `_meta` says on every request.
#[derive(Debug, Clone)]
pub(crate) struct ClientMeta {
    pub(crate) info: Implementation,
    pub(crate) capabilities: ClientCapabilities,
}

/// One generation's direct probes (see the module docs).
pub(crate) struct DirectProbe {
    core: Weak<Core>,
    meta: ClientMeta,
    /// Probes sent, for their ids.
    sent: AtomicU64,
    ping: OnceLock<Template>,
    discover: OnceLock<Template>,
}

impl std::fmt::Debug for DirectProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirectProbe")
            .field("sent", &self.sent)
            .finish_non_exhaustive()
    }
}

/// One method's probe, built once: the body around its id, and the headers.
pub(super) struct Template {
    method: &'static str,
    before: Bytes,
    after: Bytes,
    headers: HeaderMap,
}

impl DirectProbe {
    pub(super) fn new(core: &Arc<Core>, meta: ClientMeta) -> Self {
        DirectProbe {
            core: Arc::downgrade(core),
            meta,
            sent: AtomicU64::new(0),
            ping: OnceLock::new(),
            discover: OnceLock::new(),
        }
    }

    /// Sends one probe (`server/discover` when `discover`, else `ping`) and reads its answer.
    /// `protocol` is the generation's negotiated version: a 2026-07-28 request names it (and
    /// the client) in its `_meta`, as rmcp's session does.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: dropping the future abandons the `POST` (its connection is closed).
    pub(crate) async fn send(
        &self,
        discover: bool,
        protocol: &ProtocolVersion,
    ) -> Result<Answered, HttpError> {
        let Some(core) = self.core.upgrade().filter(|core| !core.stop.is_cancelled()) else {
            return Err(StreamableHttpError::TransportChannelClosed);
        };
        let slot = if discover { &self.discover } else { &self.ping };
        let template = slot.get_or_init(|| self.template(&core, discover, protocol));
        let n = self.sent.fetch_add(1, Ordering::Relaxed);
        let text = format!("{MARK}-{n}");
        let body = template.body(&text);
        let id = RequestId::String(text.into());
        // Boxed as a `dyn` future: the answer's reading (the authorizer's renewal within) is a
        // deep type, and the heartbeat's future, inside the proxy's, would otherwise pass the
        // compiler's recursion limit for proving itself `Send`.
        let answer: Pin<Box<dyn Future<Output = Result<Answered, HttpError>> + Send + '_>> =
            Box::pin(core.probe(template, body, &id));
        tokio::select! {
            answered = answer => answered,
            () = core.stop.cancelled() => Err(StreamableHttpError::TransportChannelClosed),
        }
    }

    fn template(&self, core: &Core, discover: bool, protocol: &ProtocolVersion) -> Template {
        let mut request = match discover {
            true => ClientRequest::DiscoverRequest(DiscoverRequest::new(
                DiscoverRequestParams::default(),
            )),
            false => ClientRequest::PingRequest(PingRequest::default()),
        };
        let modern = !protocol.has_initialize();
        if modern {
            let meta = request.get_meta_mut();
            meta.set_protocol_version(protocol.clone());
            meta.set_client_info(self.meta.info.clone());
            meta.set_client_capabilities(self.meta.capabilities.clone());
        }
        let method = match discover {
            true => "server/discover",
            false => "ping",
        };
        let message = ClientJsonRpcMessage::Request(JsonRpcRequest {
            jsonrpc: JsonRpcVersion2_0,
            id: RequestId::String(MARK.into()),
            request,
        });
        let mut headers = core.base_headers(modern.then_some(protocol));
        routing::add_standard_headers(&message, modern, &core.tool_headers, &mut headers);
        // Our own types always encode.
        let body = serde_json::to_vec(&message).unwrap_or_default();
        let (before, after) = split(&body);
        Template {
            method,
            before,
            after,
            headers,
        }
    }
}

/// `body` around its id, the quoted mark (which no other field of a probe holds).
fn split(body: &[u8]) -> (Bytes, Bytes) {
    let quoted = format!("\"{MARK}\"");
    let at = body
        .windows(quoted.len())
        .position(|w| w == quoted.as_bytes())
        .unwrap_or(body.len());
    let after = body.get(at + quoted.len()..).unwrap_or_default();
    (
        Bytes::copy_from_slice(&body[..at]),
        Bytes::copy_from_slice(after),
    )
}

impl Template {
    /// The body with `id` (letters, digits and dashes: nothing to escape).
    fn body(&self, id: &str) -> Bytes {
        let mut body = BytesMut::with_capacity(self.before.len() + id.len() + 2 + self.after.len());
        body.put_slice(&self.before);
        body.put_u8(b'"');
        body.put_slice(id.as_bytes());
        body.put_u8(b'"');
        body.put_slice(&self.after);
        body.freeze()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_probe_body_is_the_template_with_its_own_id() {
        let mut request =
            ClientRequest::DiscoverRequest(DiscoverRequest::new(DiscoverRequestParams::default()));
        request
            .get_meta_mut()
            .set_protocol_version(ProtocolVersion::V_2026_07_28);
        let message = ClientJsonRpcMessage::Request(JsonRpcRequest {
            jsonrpc: JsonRpcVersion2_0,
            id: RequestId::String(MARK.into()),
            request,
        });
        let (before, after) = split(&serde_json::to_vec(&message).unwrap());
        let template = Template {
            method: "server/discover",
            before,
            after,
            headers: HeaderMap::new(),
        };
        let body: serde_json::Value =
            serde_json::from_slice(&template.body("mcp-resilient-probe-41")).unwrap();
        let mut expected = serde_json::to_value(&message).unwrap();
        expected["id"] = "mcp-resilient-probe-41".into();
        assert_eq!(body, expected);
    }
}
