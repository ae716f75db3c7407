//! [`Core`]: what one generation's Streamable HTTP transport shares between its sends, its
//! streams and its close — the client, the URL (parsed once), the headers, the session, and
//! the inbox that `receive` reads.
//!
//! # Invariants
//!
//! 1. The session id and the negotiated version are set once, from the answer to `initialize`,
//!    and never change: a new session is a new generation.
//! 2. Every message is delivered through [`Core::deliver`], which stops waiting as soon as the
//!    transport is stopped: a full inbox never keeps a close waiting.
//! 3. Only requests that may still be answered are in [`Core::requests`]; each send removes its
//!    own entry when it ends, whatever way it ends.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, OnceLock, PoisonError},
    time::Duration,
};

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use rmcp::model::{ProtocolVersion, RequestId, ServerJsonRpcMessage};
use tokio::{sync::mpsc, task::JoinHandle};
use tokio_util::sync::CancellationToken;
use url::Url;

use rmcp::transport::streamable_http_client::StreamableHttpError;

use super::{HttpError, answer::SESSION_ID, discover, params::ToolHeaders, settle::Standalone};
use crate::{
    auth::Authorizer,
    state::Death,
    transport::{
        Activity, DeathSlot,
        http2::{OriginSet, SendError},
    },
};

pub(super) const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
pub(super) const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");
const BOTH: HeaderValue = HeaderValue::from_static("application/json, text/event-stream");
const EVENTS: HeaderValue = HeaderValue::from_static("text/event-stream");
const JSON: HeaderValue = HeaderValue::from_static("application/json");

/// The bounds and timings a generation's transport follows (from its server's configuration).
#[derive(Debug, Clone, Copy)]
pub(super) struct Rules {
    /// A 400 on a request that carried a session id means the session expired.
    pub(super) treat_400_as_expired: bool,
    /// The clamp on a server's `retry:` hint, and the first delay of a resumption.
    pub(super) retry_min: Duration,
    pub(super) retry_max: Duration,
    /// How many times one response stream may be resumed.
    pub(super) max_retries: u32,
    /// One JSON body.
    pub(super) max_message: usize,
    /// One SSE event, one SSE line.
    pub(super) max_event: usize,
    pub(super) max_line: usize,
}

impl Rules {
    /// A server's `retry:` hint (milliseconds), clamped to the configured bounds.
    pub(super) fn clamp_retry(&self, ms: u64) -> Duration {
        Duration::from_millis(ms).clamp(self.retry_min, self.retry_max.max(self.retry_min))
    }

    /// The `n`th (0-based) delay of a resumption: doubling from `retry_min`, at most `retry_max`.
    pub(super) fn backoff(&self, n: u32) -> Duration {
        let factor = 1u32.checked_shl(n.min(16)).unwrap_or(u32::MAX);
        self.retry_min
            .saturating_mul(factor)
            .min(self.retry_max.max(self.retry_min))
    }
}

/// The session, as the answer to `initialize` set it (invariant 1).
#[derive(Debug, Default)]
pub(super) struct Session {
    /// `Mcp-Session-Id`, if the server gave one.
    pub(super) id: OnceLock<HeaderValue>,
    /// The version `initialize` negotiated; unset on a 2026-07-28 (sessionless) generation.
    pub(super) version: OnceLock<ProtocolVersion>,
}

/// Shared by the transport, its send futures and its stream readers.
pub(super) struct Core {
    pub(super) http: reqwest::Client,
    /// The origin's shared HTTP/2 connections, when the server is configured for them.
    pub(super) http2: Option<Arc<OriginSet>>,
    pub(super) url: Url,
    /// The configured headers (already checked).
    pub(super) headers: HeaderMap,
    pub(super) rules: Rules,
    /// The server's authorization, if configured: it supplies every request's token.
    pub(super) auth: Option<Arc<Authorizer>>,
    /// Stamped as bytes and answers arrive.
    pub(super) activity: Arc<Activity>,
    /// Why the transport ended, when it ended itself.
    pub(super) slot: DeathSlot,
    /// Cancelled by `close`, `Drop` and a death the transport observed: ends `receive`.
    pub(super) stop: CancellationToken,
    /// Where the server's messages go: rmcp's session, or the lean link.
    sink: Sink,
    pub(super) session: Session,
    /// Whether the handshake is over (see [`discover`]).
    pub(super) opening: discover::Opening,
    /// Told when `initialize` got a session id and when the standalone `GET` was answered.
    pub(super) standalone: Standalone,
    /// The requests in flight (invariant 3), each with the token that stops reading its answer.
    requests: Mutex<HashMap<RequestId, CancellationToken>>,
    /// `Mcp-Param-*` headers: the annotated tools of a 2026-07-28 server.
    pub(super) tool_headers: ToolHeaders,
    /// The standalone `GET` stream's task, once started.
    pub(super) standalone_task: Mutex<Option<JoinHandle<()>>>,
}

/// What the transport is built from (see [`super::transport`]).
pub(super) struct Parts {
    pub(super) http: reqwest::Client,
    pub(super) http2: Option<Arc<OriginSet>>,
    pub(super) url: Url,
    pub(super) headers: HeaderMap,
    pub(super) rules: Rules,
    pub(super) auth: Option<Arc<Authorizer>>,
    pub(super) activity: Arc<Activity>,
    pub(super) slot: DeathSlot,
    pub(super) standalone: Standalone,
}

/// Where a generation's transport hands the server's messages.
pub(super) enum Sink {
    /// rmcp's session reads them through `receive`.
    Inbox(mpsc::Sender<Box<ServerJsonRpcMessage>>),
    /// The lean link takes each one as it comes ([`super::link`]).
    Link(Arc<super::link::inbound::Inbound>),
}

impl Core {
    pub(super) fn new(parts: Parts, sink: Sink) -> Core {
        Core {
            http: parts.http,
            http2: parts.http2,
            url: parts.url,
            headers: parts.headers,
            rules: parts.rules,
            auth: parts.auth,
            activity: parts.activity,
            slot: parts.slot,
            stop: CancellationToken::new(),
            sink,
            session: Session::default(),
            opening: discover::Opening::default(),
            standalone: parts.standalone,
            requests: Mutex::default(),
            tool_headers: ToolHeaders::default(),
            standalone_task: Mutex::default(),
        }
    }

    /// Hands `message` to `receive`; false once the transport is stopped (invariant 2).
    pub(super) async fn deliver(&self, message: ServerJsonRpcMessage) -> bool {
        match &self.sink {
            Sink::Inbox(inbox) => tokio::select! {
                sent = inbox.send(Box::new(message)) => sent.is_ok(),
                () = self.stop.cancelled() => false,
            },
            Sink::Link(inbound) => {
                if self.stop.is_cancelled() {
                    return false;
                }
                tokio::select! {
                    () = inbound.receive(message) => true,
                    () = self.stop.cancelled() => false,
                }
            }
        }
    }

    /// Ends the transport because of `death` (the first death observed wins): `receive` returns
    /// `None`, the session ends, and its monitor reports what is in the slot.
    pub(super) fn die(&self, death: Death) {
        let _ = self.slot.set(death);
        self.stop.cancel();
    }

    /// True on a 2026-07-28 generation: no `initialize` negotiated a version.
    pub(super) fn modern(&self) -> bool {
        self.session.version.get().is_none()
    }

    /// Registers request `id` as in flight; its token is cancelled by a `notifications/cancelled`
    /// for it, or by the transport's stop.
    pub(super) fn begin(&self, id: &RequestId) -> CancellationToken {
        let token = self.stop.child_token();
        self.requests().insert(id.clone(), token.clone());
        token
    }

    /// Request `id` is over (invariant 3).
    pub(super) fn end(&self, id: &RequestId) {
        self.requests().remove(id);
    }

    /// Stops reading the answer to request `id`, if it is still being read.
    pub(super) fn cancel(&self, id: &RequestId) {
        if let Some(token) = self.requests().remove(id) {
            token.cancel();
        }
    }

    fn requests(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, CancellationToken>> {
        self.requests.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The headers every request of this session carries: the configured ones, the session id
    /// and the negotiated version (or `version`, the one a 2026-07-28 request names).
    pub(super) fn base_headers(&self, version: Option<&ProtocolVersion>) -> HeaderMap {
        let mut headers = self.headers.clone();
        if let Some(id) = self.session.id.get() {
            headers.insert(SESSION_ID, id.clone());
        }
        let version = version.or(self.session.version.get());
        if let Some(value) = version.and_then(|v| HeaderValue::from_str(v.as_str()).ok()) {
            headers.insert(PROTOCOL_VERSION, value);
        }
        headers
    }

    /// Sends the request `make` builds: on the origin's HTTP/2 connections when the server is
    /// configured for them (`make` is then called again for a request the server refused
    /// unprocessed), through the HTTP/1.1 client otherwise, or when the origin speaks only that.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the request (an HTTP/2 stream is reset).
    pub(super) async fn execute(
        &self,
        make: impl Fn() -> reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, HttpError> {
        if let Some(set) = &self.http2 {
            match set.send(&make).await {
                Ok(Some(response)) => return Ok(response),
                Ok(None) => {}
                Err(SendError::Build(error)) => return Err(StreamableHttpError::Client(error)),
                Err(SendError::Http2(error)) => {
                    return Err(StreamableHttpError::Io(std::io::Error::other(error)));
                }
            }
        }
        make().send().await.map_err(StreamableHttpError::Client)
    }

    /// A `POST` of `body` with `headers` and the bearer `token`.
    pub(super) fn post(
        &self,
        mut headers: HeaderMap,
        body: reqwest::Body,
        token: Option<&str>,
    ) -> reqwest::RequestBuilder {
        headers.insert(ACCEPT, BOTH);
        headers.insert(CONTENT_TYPE, JSON);
        let request = self.http.post(self.url.clone()).headers(headers).body(body);
        with_token(request, token)
    }

    /// A `GET` of the session's event stream (resuming after `last_event_id`, if given).
    pub(super) fn get(
        &self,
        last_event_id: Option<&str>,
        token: Option<&str>,
    ) -> reqwest::RequestBuilder {
        let mut headers = self.base_headers(None);
        headers.insert(ACCEPT, EVENTS);
        if let Some(value) = last_event_id.and_then(|id| HeaderValue::from_str(id).ok()) {
            headers.insert(LAST_EVENT_ID, value);
        }
        with_token(self.http.get(self.url.clone()).headers(headers), token)
    }

    /// The `DELETE` that ends the session.
    pub(super) fn delete(&self, token: Option<&str>) -> reqwest::RequestBuilder {
        with_token(
            self.http
                .delete(self.url.clone())
                .headers(self.base_headers(None)),
            token,
        )
    }
}

fn with_token(request: reqwest::RequestBuilder, token: Option<&str>) -> reqwest::RequestBuilder {
    match token {
        Some(token) => request.bearer_auth(token),
        None => request,
    }
}
