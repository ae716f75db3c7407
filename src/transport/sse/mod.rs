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
//!    supervisor builds the next generation. Why it ended is in the
//!    [`DeathSlot`](super::DeathSlot) first.
//! 5. The reader task is owned by the transport: `close()` and `Drop` stop it.
//! 6. The answer to a direct probe ([`SseProbe`]) is taken off the stream by the reader before
//!    anything is decoded for rmcp, and only while that probe waits for it; anything else, an
//!    answer to a probe that gave up included, goes to rmcp's session as before.

mod connect;
mod errors;
mod parse;
mod post;
mod probe;
mod stream;
mod utf8;

pub(crate) use connect::connect;
pub(crate) use errors::SendError;
pub(crate) use parse::{Event, SseError};
pub(crate) use probe::SseProbe;
// For `crate::fuzzing` alone.
#[cfg(feature = "fuzzing")]
pub use parse::Parser;
#[cfg(not(feature = "fuzzing"))]
pub(in crate::transport) use parse::Parser;
#[cfg(feature = "fuzzing")]
pub use stream::resolve_endpoint;

use std::sync::Arc;

use rmcp::{
    RoleClient,
    model::ServerJsonRpcMessage,
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};
use tokio::{sync::mpsc, task::JoinHandle};

use post::Poster;

/// Server messages buffered between the reader task and `receive`. They travel boxed: tokio
/// allocates channel slots 32 at a time, and 32 unboxed messages cost ~11 KiB per idle session.
const CHANNEL: usize = 64;

/// One legacy SSE session.
pub(crate) struct SseTransport {
    poster: Arc<Poster>,
    rx: mpsc::Receiver<Box<ServerJsonRpcMessage>>,
    reader: Option<JoinHandle<()>>,
    /// Where each POST's delivery is recorded (see [`crate::transport::ledger`]).
    activity: Arc<super::Activity>,
    /// The session's direct probes, taken once by the attempt (see [`SseTransport::probe`]).
    probe: Option<SseProbe>,
}

impl SseTransport {
    /// The heartbeat's direct probe of this session; `None` after the first call.
    pub(crate) fn probe(&mut self) -> Option<SseProbe> {
        self.probe.take()
    }
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
        let poster = self.poster.clone();
        let id = match &item {
            rmcp::model::JsonRpcMessage::Request(request) => Some(request.id.clone()),
            _ => None,
        };
        let activity = self.activity.clone();
        // The POST runs on its own: rmcp drops the sends of a session loop that ends, and a POST
        // cut short would leave its caller not knowing whether it left. Its outcome is recorded
        // whatever becomes of this future.
        let posted = tokio::spawn(async move {
            let result = match body {
                Ok(body) => poster.post(body).await,
                Err(e) => Err(SendError::Encode(e)),
            };
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
        self.poster.stop.cancel();
        self.rx.close();
        if let Some(reader) = self.reader.take() {
            let _ = reader.await;
        }
        Ok(())
    }
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.poster.stop.cancel();
    }
}
