//! Streamable HTTP (spec 2025-03-26 and later, both eras), on reqwest: the client session of
//! our own ([`link`], the lean link, the default for both eras) or our [`Transport`] for rmcp's
//! session (with the lean link switched off).
//!
//! The session (ids, answers, cancellation, the handler) is the lean link's or rmcp's; this
//! module owns every byte on the wire, for both alike: a [`core::Core`] hands what the server
//! sends to its sink, the lean link's [`link::Inbound`] or rmcp's `receive`. Why not rmcp's `StreamableHttpClientWorker`: it never reports
//! the end of the session's standalone `GET` stream (it re-opens it quietly), so a killed 2025
//! server was found only by the heartbeat; and it costs what a session costs at scale (its
//! channels of 32 large messages, a task, and three times a bare `POST`'s instructions per
//! probe: BENCHMARKS.md § 13). What it did, this does, with the crate's policies:
//!
//! 1. The session: `Mcp-Session-Id` and the negotiated `MCP-Protocol-Version` from the answer
//!    to `initialize` ([`core`]); a 2026-07-28 request carries the version its `_meta` names.
//!    `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` on every `POST` ([`routing`], [`params`]).
//! 2. An HTTP 404 on a request that carried the session id is `SessionExpired`, never a silent
//!    re-`initialize`: the supervisor builds a new generation (with a fresh tool list). With
//!    `treat_400_as_expired`, so is a 400 ("no valid session") ([`answer::expire_on_400`]).
//! 3. Answers: 202, a JSON body (bounded by `limits.max_message_bytes` before it is parsed), or
//!    an event stream (each event bounded by `limits.max_sse_event_bytes`, each line by
//!    `limits.max_sse_line_bytes`) whose messages are delivered as they come ([`answer`],
//!    [`events`], [`send`]). A response to another request on a `POST`'s stream is dropped:
//!    a stray one must not be taken for the handshake's answer.
//! 4. A `POST`'s stream that ends before its answer is resumed with `GET` and `Last-Event-ID`
//!    (2025 sessions, `sse_max_retries` times, after the server's `retry:` clamped to
//!    `[sse_retry_min, sse_retry_max]`), so an in-flight request cannot wait forever on a dead
//!    server; then the request fails. A 2026-07-28 request's stream is never resumed: the
//!    revision has none, and the server took the closed stream as the request's cancellation.
//!    The request fails at once as lost with its stream ([`errors::StreamLost`]), which the
//!    call path may issue again as a new request.
//! 5. The standalone `GET` stream is a death signal ([`standalone`]): when it ends it is opened
//!    again at once; refused, reset or 404 is the generation's death, a new stream is life.
//! 6. A 2xx without a message answering the handshake's `server/discover` is the server saying
//!    it does not speak 2026-07-28 ([`discover`]): `protocol: auto` falls back at once.
//! 7. The session's `DELETE` at close is bounded ([`delete::SESSION_DELETE_WAIT`]); a session
//!    already gone is no failure.
//! 8. 401 and 403 `insufficient_scope` go through the server's authorizer ([`auth`]): one
//!    renewal, one resend. Every reqwest error has its URL redacted before anyone sees it.
//!
//! # Invariants
//!
//! 1. Nothing here decides what an error means: [`crate::transport::judge`] does, from the
//!    [`HttpError`] each request returns (rmcp's `StreamableHttpError` shapes, so the verdict
//!    rules are those the rmcp path had).
//! 2. The transport's tasks (the standalone stream) are owned by it: `close()` and `Drop` stop
//!    them. A send's future ends with its answer, its cancellation, or the transport's stop.

// Its items that `crate::fuzzing` re-exports are `pub`.
#[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
pub(crate) mod answer;
mod answer_stream;
mod auth;
mod core;
mod delete;
mod delivery;
mod discover;
// Its items that `crate::fuzzing` re-exports are `pub`.
#[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
pub(crate) mod errors;
mod events;
pub(crate) mod link;
mod params;
mod probe;
mod routing;
mod send;
mod settle;
mod standalone;

use std::sync::Arc;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use rmcp::{
    RoleClient,
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};
use tokio::sync::mpsc;

pub(crate) use errors::{
    HttpError, describe, initialize_status, last_phase, never_ran, status_of, stream_lost, verdict,
};
pub(crate) use probe::{ClientMeta, DirectProbe};
pub(crate) use settle::Standalone;

use self::core::{Core, Parts, Rules};
use super::{Activity, DeathSlot};
use crate::{
    auth::Authorizer,
    config::{Limits, RemoteConfig},
};

/// Server messages buffered between the streams and `receive`. They travel boxed: tokio
/// allocates channel slots 32 at a time, and 32 unboxed messages cost ~11 KiB per idle session.
const INBOX: usize = 64;

/// Headers the transport sets itself; configuring them would break the session.
const RESERVED: [&str; 3] = ["accept", "mcp-session-id", "last-event-id"];

/// One generation's Streamable HTTP transport (see the module docs).
// `pub` for `crate::fuzzing` alone, which names its type.
#[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
pub struct HttpTransport {
    core: Arc<Core>,
    inbox: mpsc::Receiver<Box<rmcp::model::ServerJsonRpcMessage>>,
}

/// What one generation's transport is built from, besides where its messages go.
#[derive(Clone)]
pub(crate) struct Build<'a> {
    pub(crate) http: &'a reqwest::Client,
    pub(crate) config: &'a RemoteConfig,
    /// The keep-alive of its HTTP/2 connections, if it has any.
    pub(crate) ping: Option<crate::transport::http2::Ping>,
    pub(crate) limits: &'a Limits,
    pub(crate) auth: Option<Arc<Authorizer>>,
    /// Learns when the session's standalone `GET` stream is answered.
    pub(crate) standalone: Standalone,
    /// Stamped as bytes and answers arrive.
    pub(crate) activity: Arc<Activity>,
    /// Where a death the transport sees goes.
    pub(crate) slot: DeathSlot,
}

/// Builds the transport of one generation for rmcp's session. Nothing is sent until rmcp
/// sends its first request.
pub(crate) fn transport(build: Build<'_>) -> Result<HttpTransport, String> {
    let parts = parts(build)?;
    let (tx, inbox) = mpsc::channel(INBOX);
    Ok(HttpTransport {
        core: Arc::new(Core::new(parts, core::Sink::Inbox(tx))),
        inbox,
    })
}

/// Builds the transport of one generation under the lean link ([`link`]), whose server
/// messages go to `dispatch`. Nothing is sent until the link's handshake.
pub(crate) fn lean(
    build: Build<'_>,
    dispatch: Arc<dyn link::Dispatch>,
) -> Result<link::Link, String> {
    let parts = parts(build)?;
    Ok(link::Link::new(parts, dispatch))
}

fn parts(build: Build<'_>) -> Result<Parts, String> {
    let Build {
        http,
        config,
        ping,
        limits,
        auth,
        standalone,
        activity,
        slot,
    } = build;
    let headers = header_map(config)?;
    if let Some(name) = headers.keys().find(|n| RESERVED.contains(&n.as_str())) {
        return Err(format!(
            "header `{name}` is set by the transport and cannot be configured"
        ));
    }
    let rules = Rules {
        treat_400_as_expired: config.treat_400_as_expired,
        retry_min: config.sse_retry_min,
        retry_max: config.sse_retry_max,
        max_retries: config.sse_max_retries,
        max_message: limits.max_message_bytes,
        max_event: limits.max_sse_event_bytes,
        max_line: limits.max_sse_line_bytes,
    };
    Ok(Parts {
        http: http.clone(),
        http2: crate::transport::http2::origin_set(&config.url, config.http2, ping),
        url: config.url.clone(),
        headers,
        rules,
        auth,
        activity,
        slot,
        standalone,
    })
}

impl HttpTransport {
    /// The generation's probe that goes around rmcp's session ([`probe`]); `meta` is who the
    /// client says it is on a 2026-07-28 request.
    pub(crate) fn direct_probe(&self, meta: ClientMeta) -> DirectProbe {
        DirectProbe::new(&self.core, meta)
    }
}

impl Transport<RoleClient> for HttpTransport {
    type Error = HttpError;

    fn name() -> std::borrow::Cow<'static, str> {
        "StreamableHttp".into()
    }

    /// Sends one message; a request's future lasts until its answer was delivered (see
    /// [`send`]). It does not borrow the transport.
    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), HttpError>> + Send + 'static {
        self.core.clone().send(item)
    }

    /// # Cancel safety
    ///
    /// Cancel-safe: it awaits a channel receive (`mpsc::Receiver::recv`, a message is either
    /// returned or stays queued) and the stop token. Returns `None` once the transport stopped
    /// (closed, or a death it observed), after the messages already queued.
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        tokio::select! {
            biased;
            message = self.inbox.recv() => message.map(|m| *m),
            () = self.core.stop.cancelled() => None,
        }
    }

    async fn close(&mut self) -> Result<(), HttpError> {
        self.inbox.close();
        self.core.close().await;
        Ok(())
    }
}

impl Drop for HttpTransport {
    fn drop(&mut self) {
        self.core.stop.cancel();
    }
}

/// The configured headers as a `HeaderMap` (shared with the legacy SSE transport).
pub(in crate::transport) fn header_map(config: &RemoteConfig) -> Result<HeaderMap, String> {
    let mut headers = HeaderMap::new();
    for (name, value) in &config.headers {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| format!("invalid header name `{name}`: {e}"))?;
        let value = HeaderValue::from_str(value)
            .map_err(|e| format!("invalid value for header `{name}`: {e}"))?;
        headers.append(name, value);
    }
    Ok(headers)
}
