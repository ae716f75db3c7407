//! What both direct probes ([`DirectProbe`](super::direct::DirectProbe)) put on the wire and
//! read back: the probe's request, its id ([`MARK`]), its body serialized once per generation
//! with each probe's id spliced in, and what the server answered.

use std::sync::{
    OnceLock,
    atomic::{AtomicU64, Ordering},
};

use bytes::{BufMut, Bytes, BytesMut};
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, DiscoverRequest, DiscoverRequestParams, ErrorData,
    JsonRpcRequest, JsonRpcVersion2_0, PingRequest, RequestId,
};

/// The id probe templates are serialized with; each probe's own id replaces it.
pub(in crate::transport) const MARK: &str = "mcp-resilient-probe";

/// What the server answered a probe with.
#[derive(Debug)]
pub(crate) enum Answered {
    /// A result, or an answer that was no JSON-RPC response (202, a stray message): the server
    /// is there.
    Result,
    /// A JSON-RPC error.
    Error(ErrorData),
}

/// A probe's request: `server/discover` when `discover`, else `ping` (also what a probe through
/// rmcp's session sends).
pub(crate) fn request(discover: bool) -> ClientRequest {
    match discover {
        true => {
            ClientRequest::DiscoverRequest(DiscoverRequest::new(DiscoverRequestParams::default()))
        }
        false => ClientRequest::PingRequest(PingRequest::default()),
    }
}

/// `request` as a message with the id [`MARK`], for [`Body::around_mark`].
pub(in crate::transport) fn marked(request: ClientRequest) -> ClientJsonRpcMessage {
    ClientJsonRpcMessage::Request(JsonRpcRequest {
        jsonrpc: JsonRpcVersion2_0,
        id: RequestId::String(MARK.into()),
        request,
    })
}

/// One generation's probe templates, one per method and built on first use, and the count of
/// probes sent, which numbers their ids (`mcp-resilient-probe-N`).
pub(in crate::transport) struct Templates<T> {
    sent: AtomicU64,
    ping: OnceLock<T>,
    discover: OnceLock<T>,
}

impl<T> Templates<T> {
    pub(crate) const fn new() -> Self {
        Templates {
            sent: AtomicU64::new(0),
            ping: OnceLock::new(),
            discover: OnceLock::new(),
        }
    }

    /// The next probe: the template of `server/discover` when `discover`, else of `ping`
    /// (`build` makes it the first time), the probe's number and its id.
    pub(in crate::transport) fn next(
        &self,
        discover: bool,
        build: impl FnOnce() -> T,
    ) -> (&T, u64, String) {
        let slot = if discover { &self.discover } else { &self.ping };
        let template = slot.get_or_init(build);
        let n = self.sent.fetch_add(1, Ordering::Relaxed);
        (template, n, format!("{MARK}-{n}"))
    }
}

impl<T> std::fmt::Debug for Templates<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Templates")
            .field("sent", &self.sent)
            .finish_non_exhaustive()
    }
}

/// The number of the probe whose id is `id` ([`Templates::next`]), if it is a probe's.
pub(in crate::transport) fn probe_number(id: &str) -> Option<u64> {
    id.strip_prefix(MARK)?.strip_prefix('-')?.parse().ok()
}

/// A probe's body around its id: serialized once per generation and method, each probe
/// splicing in its own id.
#[derive(Debug)]
pub(in crate::transport) struct Body {
    before: Bytes,
    after: Bytes,
}

impl Body {
    /// `message`, serialized with the id [`MARK`], split around that id (the quoted mark, which
    /// no other field of a probe holds).
    pub(in crate::transport) fn around_mark(message: &[u8]) -> Self {
        let quoted = format!("\"{MARK}\"");
        let at = message
            .windows(quoted.len())
            .position(|w| w == quoted.as_bytes())
            .unwrap_or(message.len());
        let after = message.get(at + quoted.len()..).unwrap_or_default();
        Body {
            before: Bytes::copy_from_slice(&message[..at]),
            after: Bytes::copy_from_slice(after),
        }
    }

    /// The body with `id` (letters, digits and dashes: nothing to escape).
    pub(in crate::transport) fn with_id(&self, id: &str) -> Bytes {
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
    use rmcp::model::{GetMeta, ProtocolVersion};

    use super::*;

    #[test]
    fn each_probe_body_is_the_template_with_its_own_id() {
        let mut request = request(true);
        request
            .get_meta_mut()
            .set_protocol_version(ProtocolVersion::V_2026_07_28);
        let message = marked(request);
        let body = Body::around_mark(&serde_json::to_vec(&message).unwrap());
        let sent: serde_json::Value =
            serde_json::from_slice(&body.with_id("mcp-resilient-probe-41")).unwrap();
        let mut expected = serde_json::to_value(&message).unwrap();
        expected["id"] = "mcp-resilient-probe-41".into();
        assert_eq!(sent, expected);
    }
}
