//! Streamable HTTP (spec 2025-03-26 and later), through rmcp's `StreamableHttpClientTransport`.
//!
//! rmcp's transport is used as it is, with four changes of policy:
//!
//! 1. `reinit_on_expired_session(false)`: an HTTP 404 on a live session surfaces as
//!    `StreamableHttpError::SessionExpired` instead of a silent re-`initialize`, so the
//!    supervisor sees the session end and builds a new generation (with a fresh tool list).
//! 2. [`HttpClient`] wraps the shared `reqwest::Client`: with `treat_400_as_expired`, a 400 to a
//!    request that carried a session id (some servers' "no valid session") becomes
//!    `SessionExpired` too, and every server `retry:` hint is clamped to
//!    `[sse_retry_min, sse_retry_max]`.
//! 3. A 2xx without a JSON-RPC message answering the handshake's `server/discover` is the
//!    server saying it does not speak 2026-07-28 (see [`discover`]), so `protocol: auto` falls
//!    back at once.
//! 4. SSE resumption is bounded: at most `sse_max_retries` attempts, delays doubling from
//!    `sse_retry_min` up to `sse_retry_max` (rmcp waits the longer of this and the clamped hint),
//!    so an in-flight request cannot wait forever on a dead server.
//! 5. A POST's response stream keeps only that request's own answer: a response to another id
//!    on it is dropped ([`own_answer`]), so a stray one cannot be taken for the handshake's.
//! 6. The session's `DELETE` at close gets `delete::SESSION_DELETE_WAIT` (rmcp's own bound is 5 s): a
//!    healthy server answers it at once, and a hung one must not hold the close (a host
//!    restarting the proxy, a reconnect) for longer. Left unanswered, the session is the
//!    server's to expire. A `DELETE` that finds no session (the server killed or restarted) is
//!    no failure either (`errors::session_gone`).

use std::{collections::HashMap, sync::Arc};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use rmcp::transport::{
    StreamableHttpClientTransport, common::client_side_sse::ExponentialBackoff,
    streamable_http_client::StreamableHttpClientTransportConfig,
};

use crate::{
    auth::Authorizer,
    config::{Limits, RemoteConfig},
};

mod auth;
pub(crate) mod client;
mod delete;
mod delivery;
mod discover;
// Its items that `crate::fuzzing` re-exports are `pub`.
#[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
pub(crate) mod errors;
mod own_answer;
mod routing;
mod standalone;

pub(crate) use client::HttpClient;
pub(crate) use errors::{
    HttpError, describe, initialize_status, last_phase, never_ran, status_of, verdict,
};
pub(crate) use standalone::Standalone;

/// Headers rmcp sets itself; configuring them would make every request fail.
const RESERVED: [&str; 3] = ["accept", "mcp-session-id", "last-event-id"];

/// Builds the transport of one generation. Nothing is sent until rmcp sends `initialize`.
/// `standalone` learns when the session's standalone `GET` stream is open (see
/// [`Standalone`]); `activity` is stamped as answers and stream events arrive. rmcp bounds each JSON body by `limits.max_message_bytes` and each SSE event
/// by `limits.max_sse_event_bytes`, before it parses them.
pub(crate) fn transport(
    http: &reqwest::Client,
    config: &RemoteConfig,
    limits: &Limits,
    auth: Option<Arc<Authorizer>>,
    standalone: Standalone,
    activity: Arc<super::Activity>,
) -> Result<StreamableHttpClientTransport<HttpClient>, String> {
    let mut custom_headers = HashMap::new();
    for (name, value) in header_map(config)? {
        let Some(name) = name else { continue };
        if RESERVED.contains(&name.as_str()) {
            return Err(format!(
                "header `{name}` is set by the transport and cannot be configured"
            ));
        }
        custom_headers.insert(name, value);
    }
    let mut retry = ExponentialBackoff::default();
    retry.max_times = Some(config.sse_max_retries as usize);
    retry.base_duration = config.sse_retry_min;
    retry.max_delay = Some(config.sse_retry_max);
    let mut transport_config = StreamableHttpClientTransportConfig::with_uri(config.url.as_str())
        .custom_headers(custom_headers)
        .max_sse_event_size(limits.max_sse_event_bytes)
        .max_json_response_size(limits.max_message_bytes)
        .reinit_on_expired_session(false);
    transport_config.retry_config = Arc::new(retry);
    let client = HttpClient::new(http.clone(), config, auth, standalone, activity);
    Ok(StreamableHttpClientTransport::with_client(
        client,
        transport_config,
    ))
}

/// The configured headers as a `HeaderMap` (shared with the legacy SSE transport).
pub(crate) fn header_map(config: &RemoteConfig) -> Result<HeaderMap, String> {
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
