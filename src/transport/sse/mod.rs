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

mod connect;
mod errors;
mod parse;
mod stream;
mod utf8;

pub(crate) use connect::connect;
pub(crate) use errors::SendError;
pub(crate) use parse::{Event, SseError};
// For `crate::fuzzing` alone.
#[cfg(feature = "fuzzing")]
pub use parse::Parser;
#[cfg(not(feature = "fuzzing"))]
pub(crate) use parse::Parser;
#[cfg(feature = "fuzzing")]
pub use stream::resolve_endpoint;

use std::sync::Arc;

use reqwest::header::{HeaderMap, HeaderValue};
use rmcp::{
    RoleClient,
    model::ServerJsonRpcMessage,
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};
use tokio::{sync::mpsc, task::JoinHandle};
use tokio_util::sync::CancellationToken;
use url::Url;

use super::DeathSlot;
use crate::{auth::Authorizer, verdict::Verdict};
use errors::{refusal, retry_after};

/// Server messages buffered between the reader task and `receive`. They travel boxed: tokio
/// allocates channel slots 32 at a time, and 32 unboxed messages cost ~11 KiB per idle session.
const CHANNEL: usize = 64;

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
    /// Where each POST's delivery is recorded (see [`crate::transport::ledger`]).
    activity: Arc<super::Activity>,
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
        let id = match &item {
            rmcp::model::JsonRpcMessage::Request(request) => Some(request.id.clone()),
            _ => None,
        };
        let activity = self.activity.clone();
        let post = async move {
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
        };
        // The POST runs on its own: rmcp drops the sends of a session loop that ends, and a POST
        // cut short would leave its caller not knowing whether it left. Its outcome is recorded
        // whatever becomes of this future.
        let posted = tokio::spawn(async move {
            let result = post.await;
            if let Some(id) = &id {
                activity.ledger.sent(id, SendError::delivery(&result));
            }
            result
        });
        async move {
            match posted.await {
                Ok(result) => result,
                Err(join) if join.is_panic() => std::panic::resume_unwind(join.into_panic()),
                Err(_) => Err(SendError::Abandoned),
            }
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

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}
