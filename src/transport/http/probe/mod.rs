//! Streamable HTTP's direct probe (see [`crate::transport::direct`]): `ping` (or
//! `server/discover`) on a `POST` of its own, beside rmcp's session.
//!
//! The body is serialized once per generation and method, each probe splicing in its own id;
//! the headers are built once; the answer is read as every answer is (the transport's bounds,
//! its parser, its activity stamps), but for its result, which is checked to be JSON and never
//! typed: the probe needs to know only that it is a result ([`crate::transport::decode::probe_answer`]).
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
    sync::{Arc, Weak},
};

use reqwest::header::HeaderMap;
use rmcp::{
    model::{ClientCapabilities, GetMeta, Implementation, ProtocolVersion, RequestId},
    transport::streamable_http_client::StreamableHttpError,
};

use super::{HttpError, core::Core, routing};
use crate::transport::probe_wire::{self, Answered, Body, Templates};

mod read;

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
    templates: Templates<Template>,
}

impl std::fmt::Debug for DirectProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirectProbe")
            .field("templates", &self.templates)
            .finish_non_exhaustive()
    }
}

/// One method's probe, built once: the body around its id, and the headers.
pub(super) struct Template {
    method: &'static str,
    body: Body,
    headers: HeaderMap,
}

impl DirectProbe {
    pub(super) fn new(core: &Arc<Core>, meta: ClientMeta) -> Self {
        DirectProbe {
            core: Arc::downgrade(core),
            meta,
            templates: Templates::new(),
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
        let (template, _, text) = self
            .templates
            .next(discover, || self.template(&core, discover, protocol));
        let body = template.body.with_id(&text);
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
        let mut request = probe_wire::request(discover);
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
        let message = probe_wire::marked(request);
        let mut headers = core.base_headers(modern.then_some(protocol));
        routing::add_standard_headers(&message, modern, &core.tool_headers, &mut headers);
        // Our own types always encode.
        let body = Body::around_mark(&serde_json::to_vec(&message).unwrap_or_default());
        Template {
            method,
            body,
            headers,
        }
    }
}
