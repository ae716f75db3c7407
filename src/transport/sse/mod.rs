//! Legacy HTTP+SSE (spec 2024-11-05): `GET` an event stream, `POST` to its `endpoint`.
//!
//! rmcp 3.11 has no legacy SSE client, so this is a plain [`Transport`] on `reqwest` and our
//! own event stream parser (`parse`: linear in bytes, bounded, strict about UTF-8; it replaced
//! eventsource-stream, which copied the rest of its buffer for every line and held bytes that
//! were not UTF-8 forever).
//!
//! # Invariants
//!
//! 1. Nothing is ever sent to an origin other than the SSE URL's: an `endpoint` on another
//!    scheme, host or port is refused before any request goes there (the configured headers,
//!    `Authorization` included, must never leave for another host).
//! 2. One event is at most `limits.max_sse_event_bytes` and one line at most
//!    `limits.max_sse_line_bytes`: the
//!    first byte past either bound ends the stream before it is stored, so memory stays
//!    bounded whatever the server sends, and parsing costs CPU linear in the bytes received.
//! 3. Bytes that break the protocol end the stream at once, with a death that says what and
//!    where: a byte that cannot be UTF-8, a `message` event that is not a JSON-RPC message.
//! 4. The transport never reconnects. A new stream is a new session, which needs a fresh
//!    `initialize`: when the stream ends, `receive` returns `None`, the session ends, and the
//!    supervisor builds the next generation. Why it ended is in the [`DeathSlot`] first.
//! 5. The reader task is owned by the transport: `close()` and `Drop` stop it.

mod parse;
mod stream;
mod utf8;

#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use parse::Parser;
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use stream::resolve_endpoint;

use reqwest::header::{ACCEPT, HeaderMap, HeaderValue};
use rmcp::{
    RoleClient,
    model::ServerJsonRpcMessage,
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};
use tokio::{sync::mpsc, task::JoinHandle};
use tokio_util::sync::CancellationToken;
use url::Url;

use std::sync::Arc;

use super::DeathSlot;
use crate::{
    auth::{Authorizer, Refusal},
    config::{Limits, RemoteConfig},
    state::{Cause, Death},
    text::redact_url,
    verdict::Verdict,
};

/// Server messages buffered between the reader task and `receive`. They travel boxed: tokio
/// allocates channel slots 32 at a time, and 32 unboxed messages cost ~11 KiB per idle session.
const CHANNEL: usize = 64;

/// Why opening the stream failed; `status` is the HTTP answer to the `GET`, if there was one.
#[derive(Debug)]
pub(crate) struct ConnectError {
    pub(crate) status: Option<u16>,
    /// The answer's raw `Retry-After`, if it had one.
    pub(crate) retry_after: Option<String>,
    pub(crate) detail: String,
}

impl ConnectError {
    fn new(detail: impl Into<String>) -> Self {
        ConnectError {
            status: None,
            retry_after: None,
            detail: detail.into(),
        }
    }

    /// What this failure says about the server. A 404/405 (the other protocol, or a wrong URL)
    /// is left to [`super::detect`], which knows whether another protocol remains to be tried.
    pub(crate) fn verdict(&self) -> Verdict {
        match self.status {
            Some(status) => {
                Verdict::of_status(status, self.retry_after.as_deref(), self.detail.clone())
            }
            None => Verdict::transport(self.detail.clone()),
        }
    }
}

/// A failed `POST` to the endpoint, as `classify` downcasts it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum SendError {
    /// 404 or 410: the server no longer knows the session (fatal).
    #[error("legacy SSE session expired (HTTP {0} on POST)")]
    SessionExpired(u16),
    /// Any other non-2xx answer.
    #[error("POST to the endpoint answered HTTP {status}")]
    Status {
        /// The status.
        status: u16,
        /// The raw `Retry-After`, if the answer had one.
        retry_after: Option<String>,
    },
    /// The request failed; fatal when the connection could not be made or the POST timed out.
    #[error("POST to the endpoint failed")]
    Request(#[source] reqwest::Error),
    /// The message could not be encoded.
    #[error("could not encode the message")]
    Encode(#[source] serde_json::Error),
    /// No token could be had because the authorization server did not answer; the POST was
    /// not sent.
    #[error("{0}")]
    AuthUnavailable(String),
}

impl SendError {
    /// What this failure says about the server (see [`crate::verdict`]).
    pub(crate) fn verdict(&self, detail: String) -> Verdict {
        match self {
            SendError::SessionExpired(_) => {
                Verdict::Death(Death::new(Cause::SessionExpired, detail))
            }
            SendError::Status {
                status,
                retry_after,
            } => Verdict::of_status(*status, retry_after.as_deref(), detail),
            // The endpoint answers a POST with 202 at once; no answer in time, or no connection,
            // is a dead or black-holed server.
            SendError::Request(e) if e.is_connect() || e.is_request() || e.is_timeout() => {
                Verdict::transport(detail)
            }
            SendError::AuthUnavailable(why) => Verdict::AuthUnavailable {
                detail: why.clone(),
            },
            SendError::Request(_) | SendError::Encode(_) => Verdict::Suspect {
                status: None,
                detail,
            },
        }
    }

    /// True when the server provably did not run the message: the POST could not open its
    /// connection, or it was refused for an unknown session (404/410).
    pub(crate) fn never_ran(&self) -> bool {
        match self {
            SendError::Request(e) => e.is_connect(),
            SendError::SessionExpired(_) | SendError::AuthUnavailable(_) => true,
            _ => false,
        }
    }
}

/// One legacy SSE session.
pub(crate) struct SseTransport {
    http: reqwest::Client,
    endpoint: Url,
    headers: HeaderMap,
    /// The server's authorization, if configured: every POST carries its current token.
    auth: Option<Arc<Authorizer>>,
    /// Bound on one POST: the shared client has no overall timeout (its streams are long-lived),
    /// and a hung server must not pile up pending POSTs.
    post_timeout: std::time::Duration,
    slot: DeathSlot,
    rx: mpsc::Receiver<Box<ServerJsonRpcMessage>>,
    /// Stops the reader; cancelled by `close`, `Drop` and a fatal send failure.
    stop: CancellationToken,
    reader: Option<JoinHandle<()>>,
}

/// Opens the stream, waits for its `endpoint` (at most `endpoint_timeout`) and starts reading.
/// `progress` is stamped when the stream's headers and its `endpoint` arrive. With `auth`, the
/// `GET` carries the server's token, renewed once if the server refuses it. One event is bounded
/// by `limits.max_sse_event_bytes`.
pub(crate) async fn connect(
    http: &reqwest::Client,
    config: &RemoteConfig,
    limits: &Limits,
    auth: Option<Arc<Authorizer>>,
    slot: DeathSlot,
    progress: &super::Activity,
) -> Result<SseTransport, ConnectError> {
    let headers = super::http::header_map(config).map_err(ConnectError::new)?;
    let get = |token: Option<String>| {
        let mut request = http
            .get(config.url.clone())
            .headers(headers.clone())
            .header(ACCEPT, HeaderValue::from_static("text/event-stream"));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        async move {
            request.send().await.map_err(|e| {
                // reqwest's text would name the URL again, query and all: ours is redacted.
                let why = super::innermost(&e.without_url());
                ConnectError::new(format!("GET {} failed: {why}", redact_url(&config.url)))
            })
        }
    };
    let response = match &auth {
        None => get(None).await?,
        Some(auth) => auth
            .send(get, refusal)
            .await
            .map_err(|denied| ConnectError {
                // The authorization server did not answer: a failed connect, retried with
                // backoff (no status), not a 401.
                status: (!denied.transient).then_some(401),
                retry_after: None,
                detail: denied.detail,
            })??,
    };
    progress.touch();
    let status = response.status();
    if !status.is_success() {
        let detail = format!("GET {} answered HTTP {status}", redact_url(&config.url));
        return Err(ConnectError {
            status: Some(status.as_u16()),
            retry_after: retry_after(response.headers()),
            detail,
        });
    }
    if !is_event_stream(response.headers()) {
        // A Streamable HTTP server may answer a session-less GET with a JSON error or an empty
        // 200; either way this is not a legacy SSE endpoint.
        return Err(ConnectError {
            status: Some(406),
            retry_after: None,
            detail: format!(
                "GET {} did not answer with an event stream",
                redact_url(&config.url)
            ),
        });
    }
    let (max_event, max_line) = (limits.max_sse_event_bytes, limits.max_sse_line_bytes);
    let mut events = stream::events(response, max_event, max_line);
    let endpoint = stream::endpoint(&mut events, &config.url);
    let endpoint = tokio::time::timeout(config.endpoint_timeout, endpoint)
        .await
        .map_err(|_| {
            let limit = config.endpoint_timeout;
            ConnectError::new(format!("no `endpoint` event within {limit:?}"))
        })?
        .map_err(ConnectError::new)?;
    progress.touch();
    let (tx, rx) = mpsc::channel(CHANNEL);
    let stop = CancellationToken::new();
    let reader = tokio::spawn(stream::read(events, tx, slot.clone(), stop.clone()));
    let http = http.clone();
    Ok(SseTransport {
        http,
        endpoint,
        headers,
        auth,
        post_timeout: config.endpoint_timeout,
        slot,
        rx,
        stop,
        reader: Some(reader),
    })
}

/// The first `Retry-After` value, if it is text.
fn retry_after(headers: &HeaderMap) -> Option<String> {
    headers
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

fn is_event_stream(headers: &HeaderMap) -> bool {
    headers
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| {
            ct.split(';')
                .next()
                .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("text/event-stream"))
        })
}

impl Transport<RoleClient> for SseTransport {
    type Error = SendError;

    /// POSTs one message; the answer arrives on the stream. A fatal failure (404/410, or no
    /// connection) fills the slot and stops the reader, which ends the session.
    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), SendError>> + Send + 'static {
        let body = serde_json::to_vec(&item).map(bytes::Bytes::from);
        let (http, endpoint, headers) = (
            self.http.clone(),
            self.endpoint.clone(),
            self.headers.clone(),
        );
        let (timeout, auth) = (self.post_timeout, self.auth.clone());
        let (slot, stop) = (self.slot.clone(), self.stop.clone());
        async move {
            let body = body.map_err(SendError::Encode)?;
            let post = |token: Option<String>| {
                let mut request = http
                    .post(endpoint.clone())
                    .headers(headers.clone())
                    .timeout(timeout)
                    .header(
                        reqwest::header::CONTENT_TYPE,
                        HeaderValue::from_static("application/json"),
                    )
                    .body(body.clone());
                if let Some(token) = token {
                    request = request.bearer_auth(token);
                }
                async move { request.send().await.map_err(SendError::Request) }
            };
            let answer = match &auth {
                None => post(None).await,
                Some(auth) => auth.send(post, refusal).await.unwrap_or_else(|denied| {
                    Err(match denied.transient {
                        true => SendError::AuthUnavailable(denied.detail),
                        false => SendError::Status {
                            status: 401,
                            retry_after: None,
                        },
                    })
                }),
            };
            let result = match answer {
                Ok(r) if r.status().is_success() => return Ok(()),
                Ok(r) if matches!(r.status().as_u16(), 404 | 410) => {
                    SendError::SessionExpired(r.status().as_u16())
                }
                Ok(r) => SendError::Status {
                    status: r.status().as_u16(),
                    retry_after: retry_after(r.headers()),
                },
                Err(e) => e,
            };
            if let Verdict::Death(death) = result.verdict(result.to_string()) {
                let _ = slot.set(death);
                stop.cancel();
            }
            Err(result)
        }
    }

    /// # Cancel safety
    ///
    /// Cancel-safe: it only awaits a channel receive (`mpsc::Receiver::recv`); a message is
    /// either returned or stays queued. Returns `None` as soon as the reader task has ended.
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        self.rx.recv().await.map(|message| *message)
    }

    async fn close(&mut self) -> Result<(), SendError> {
        self.stop.cancel();
        self.rx.close();
        if let Some(reader) = self.reader.take() {
            let _ = reader.await;
        }
        Ok(())
    }
}

/// What a legacy SSE answer says about its token: a 401, or a 403 `insufficient_scope`, is a
/// refusal for [`Authorizer::send`] to renew and resend.
fn refusal<E>(answer: &Result<reqwest::Response, E>) -> Option<Refusal> {
    let response = answer.as_ref().ok()?;
    let challenge = response
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    match response.status().as_u16() {
        401 => Some(Refusal::Unauthorized(challenge)),
        403 if challenge.contains("insufficient_scope") => {
            Some(Refusal::InsufficientScope(challenge))
        }
        _ => None,
    }
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn send_failures_are_judged_by_type() {
        let expired = SendError::SessionExpired(410).verdict("gone".into());
        assert!(matches!(expired, Verdict::Death(d) if d.cause == Cause::SessionExpired));
        let status = |status, retry_after: Option<&str>| SendError::Status {
            status,
            retry_after: retry_after.map(str::to_owned),
        };
        assert!(matches!(
            status(500, None).verdict("x".into()),
            Verdict::Suspect {
                status: Some(500),
                ..
            }
        ));
        assert_eq!(
            status(429, Some("2")).verdict("x".into()),
            Verdict::Overload {
                status: 429,
                retry_after: Some(std::time::Duration::from_secs(2))
            }
        );
        assert!(matches!(
            status(401, None).verdict("x".into()),
            Verdict::Unauthorized { .. }
        ));
    }
}
