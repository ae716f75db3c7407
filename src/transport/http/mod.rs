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
//! 6. The session's `DELETE` at close gets [`SESSION_DELETE_WAIT`] (rmcp's own bound is 5 s): a
//!    healthy server answers it at once, and a hung one must not hold the close (a host
//!    restarting the proxy, a reconnect) for longer. Left unanswered, the session is the
//!    server's to expire. A `DELETE` that finds no session (the server killed or restarted) is
//!    no failure either (`errors::session_gone`).

use std::{collections::HashMap, sync::Arc, time::Duration};

use futures::StreamExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use rmcp::{
    model::{ClientJsonRpcMessage, ClientRequest, RequestId, ServerJsonRpcMessage},
    transport::{
        StreamableHttpClientTransport,
        common::client_side_sse::{BoxedSseResponse, ExponentialBackoff},
        streamable_http_client::{
            StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
            StreamableHttpPostResponse, StreamableHttpResponseLimits,
        },
    },
};

use crate::{
    auth::Authorizer,
    config::{Limits, RemoteConfig},
    text::redact_url,
};

mod auth;
mod discover;
mod errors;
mod own_answer;
mod routing;
mod standalone;

pub(crate) use errors::{
    HttpError, describe, initialize_status, last_phase, never_ran, status_of, verdict,
};
pub(crate) use standalone::Standalone;

/// How long the `DELETE` that ends a session may take (see the module docs).
pub(crate) const SESSION_DELETE_WAIT: Duration = Duration::from_secs(1);

/// Headers rmcp sets itself; configuring them would make every request fail.
const RESERVED: [&str; 3] = ["accept", "mcp-session-id", "last-event-id"];

/// Builds the transport of one generation. Nothing is sent until rmcp sends `initialize`.
/// `standalone` learns when the session's standalone `GET` stream is open (see
/// [`Standalone`]). rmcp bounds each JSON body by `limits.max_message_bytes` and each SSE event
/// by `limits.max_sse_event_bytes`, before it parses them.
pub(crate) fn transport(
    http: &reqwest::Client,
    config: &RemoteConfig,
    limits: &Limits,
    auth: Option<Arc<Authorizer>>,
    standalone: Standalone,
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
    let client = HttpClient {
        inner: http.clone(),
        treat_400_as_expired: config.treat_400_as_expired,
        retry_min: config.sse_retry_min,
        retry_max: config.sse_retry_max,
        auth,
        standalone,
        opening: discover::Opening::default(),
    };
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

/// rmcp's reqwest backend, with session-expiry and `retry:` policy applied (see module docs).
#[derive(Debug, Clone)]
pub(crate) struct HttpClient {
    inner: reqwest::Client,
    treat_400_as_expired: bool,
    retry_min: Duration,
    retry_max: Duration,
    /// The server's authorization, if configured: it supplies every request's token.
    auth: Option<Arc<Authorizer>>,
    /// Told when `initialize` got a session id and when the standalone `GET` was answered.
    standalone: Standalone,
    /// Whether the handshake is over (see [`discover`]).
    opening: discover::Opening,
}

type SseStream = BoxedSseResponse;

impl HttpClient {
    /// Clamps every `retry:` hint of `stream` to the configured bounds.
    fn clamp_retry(&self, stream: SseStream) -> SseStream {
        let (min, max) = (
            self.retry_min.as_millis() as u64,
            self.retry_max.as_millis() as u64,
        );
        stream
            .map(move |event| {
                event.map(|mut sse| {
                    sse.retry = sse.retry.map(|ms| ms.clamp(min, max.max(min)));
                    sse
                })
            })
            .boxed()
    }

    /// Maps a 400 on a request that carried a session id to `SessionExpired`, as well as a
    /// JSON-RPC error that answers some other id (servers that say "no valid session" answer
    /// 400 with an error whose id is `null` or `"server-error"`: rmcp could not route it and
    /// the request would wait for its timeout).
    pub(crate) fn expire_on_400(
        request_id: Option<RequestId>,
        result: Result<StreamableHttpPostResponse, HttpError>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        match result {
            Err(e) if status_of(&e) == Some(400) => Err(StreamableHttpError::SessionExpired),
            Ok(StreamableHttpPostResponse::Json(ServerJsonRpcMessage::Error(error), _))
                if request_id.is_some() && request_id != error.id =>
            {
                Err(StreamableHttpError::SessionExpired)
            }
            other => other,
        }
    }
}

impl StreamableHttpClient for HttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let limits = StreamableHttpResponseLimits::default();
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let expires = session_id.is_some() && self.treat_400_as_expired;
        let request_id = match &message {
            ClientJsonRpcMessage::Request(request) => Some(request.id.clone()),
            _ => None,
        };
        let initialize = matches!(&message, ClientJsonRpcMessage::Request(r)
            if matches!(r.request, ClientRequest::InitializeRequest(_)));
        let mut custom_headers = custom_headers;
        routing::add_standard_headers(&message, &mut custom_headers);
        let result = self
            .authorized(|token| {
                self.inner.post_message_with_response_limits(
                    uri.clone(),
                    message.clone(),
                    session_id.clone(),
                    token.or_else(|| auth_header.clone()),
                    custom_headers.clone(),
                    limits,
                )
            })
            .await;
        let result = redacted(result);
        let result = match expires {
            true => Self::expire_on_400(request_id.clone(), result),
            false => result,
        };
        let result = self.opening.read(&message, session_id.is_some(), result);
        if initialize
            && matches!(
                &result,
                Ok(StreamableHttpPostResponse::Json(_, Some(_))
                    | StreamableHttpPostResponse::Sse(_, Some(_)))
            )
        {
            self.standalone.expect();
        }
        match result {
            Ok(StreamableHttpPostResponse::Sse(stream, id)) => {
                let stream = match request_id {
                    Some(request) => own_answer::only_own_answers(stream, request),
                    None => stream,
                };
                Ok(StreamableHttpPostResponse::Sse(
                    self.clamp_retry(stream),
                    id,
                ))
            }
            other => other,
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        let delete = self.authorized(|token| {
            self.inner.delete_session(
                uri.clone(),
                session_id.clone(),
                token.or_else(|| auth_header.clone()),
                custom_headers.clone(),
            )
        });
        match tokio::time::timeout(SESSION_DELETE_WAIT, delete).await {
            // Ok, not an error: rmcp would log a session already gone (a killed or restarted
            // server) as a failure, at error level, after every such death.
            Ok(Err(error)) if errors::session_gone(&error) => {
                tracing::debug!(
                    "no session left to delete: {}",
                    describe(&redact_error(error))
                );
                Ok(())
            }
            Ok(deleted) => redacted(deleted),
            Err(_) => {
                // Ok, not an error: rmcp would log it as a failure, and nothing failed on our
                // side; the server did not answer, and its session expires there.
                tracing::info!(
                    "the session DELETE got no answer within {SESSION_DELETE_WAIT:?}; the server \
                     is left to expire the session"
                );
                Ok(())
            }
        }
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<SseStream, HttpError> {
        let stream = self
            .authorized(|token| {
                self.inner.get_stream(
                    uri.clone(),
                    session_id.clone(),
                    last_event_id.clone(),
                    token.or_else(|| auth_header.clone()),
                    custom_headers.clone(),
                )
            })
            .await;
        if last_event_id.is_none() {
            self.standalone.answered();
        }
        Ok(self.clamp_retry(redacted(stream)?))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<SseStream, HttpError> {
        let stream = self
            .authorized(|token| {
                self.inner.get_stream_with_max_sse_event_size(
                    uri.clone(),
                    session_id.clone(),
                    last_event_id.clone(),
                    token.or_else(|| auth_header.clone()),
                    custom_headers.clone(),
                    max_sse_event_size,
                )
            })
            .await;
        if last_event_id.is_none() {
            self.standalone.answered();
        }
        Ok(self.clamp_retry(redacted(stream)?))
    }
}

/// `result` with the URL in a reqwest error redacted ([`redact_url`]): rmcp logs these errors and
/// we put their text in causes, and reqwest names the request's URL, query and all.
fn redacted<T>(result: Result<T, HttpError>) -> Result<T, HttpError> {
    result.map_err(redact_error)
}

fn redact_error(error: HttpError) -> HttpError {
    match error {
        StreamableHttpError::Client(mut e) => {
            if let Some(url) = e.url_mut() {
                *url = redact_url(url);
            }
            StreamableHttpError::Client(e)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_400_or_an_unroutable_error_on_a_session_means_expiry() {
        let id = Some(RequestId::Number(7));
        let bad = Err(StreamableHttpError::UnexpectedServerResponse(
            "HTTP 400 Bad Request: x".into(),
        ));
        assert!(matches!(
            HttpClient::expire_on_400(id.clone(), bad),
            Err(StreamableHttpError::SessionExpired)
        ));
        let stray = ServerJsonRpcMessage::error(
            rmcp::model::ErrorData::invalid_request("no session", None),
            None,
        );
        let stray = Ok(StreamableHttpPostResponse::Json(stray, None));
        assert!(matches!(
            HttpClient::expire_on_400(id.clone(), stray),
            Err(StreamableHttpError::SessionExpired)
        ));
        let answer = ServerJsonRpcMessage::error(
            rmcp::model::ErrorData::invalid_request("no", None),
            id.clone(),
        );
        let answer = Ok(StreamableHttpPostResponse::Json(answer, None));
        assert!(HttpClient::expire_on_400(id, answer).is_ok());
    }
}
