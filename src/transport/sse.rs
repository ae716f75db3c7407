//! Legacy HTTP+SSE (spec 2024-11-05): `GET` an event stream, `POST` to its `endpoint`.
//!
//! rmcp 3.11 has no legacy SSE client, so this is a plain [`Transport`] on `reqwest` and
//! `eventsource-stream`.
//!
//! # Invariants
//!
//! 1. Nothing is ever sent to an origin other than the SSE URL's: an `endpoint` on another
//!    scheme, host or port is refused before any request goes there (the configured headers,
//!    `Authorization` included, must never leave for another host).
//! 2. One event is at most `max_event_bytes`: bytes are counted since the last blank line
//!    *before* they reach the parser, which only ever holds complete lines, so memory stays
//!    bounded whatever the server sends.
//! 3. The transport never reconnects. A new stream is a new session, which needs a fresh
//!    `initialize`: when the stream ends, `receive` returns `None`, the session ends, and the
//!    supervisor builds the next generation. Why it ended is in the [`DeathSlot`] first.
//! 4. The reader task is owned by the transport: `close()` and `Drop` stop it.

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures::{StreamExt, stream::BoxStream};
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

use super::DeathSlot;
use crate::{
    config::RemoteConfig,
    state::{Cause, Death},
};

/// Server messages buffered between the reader task and `receive`.
const CHANNEL: usize = 64;

type Events = BoxStream<'static, Result<Event, EventStreamError<ReadError>>>;

/// Why opening the stream failed; `status` is the HTTP answer to the `GET`, if there was one.
#[derive(Debug)]
pub(crate) struct ConnectError {
    pub(crate) status: Option<u16>,
    pub(crate) detail: String,
}

impl ConnectError {
    fn new(detail: impl Into<String>) -> Self {
        ConnectError {
            status: None,
            detail: detail.into(),
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
    #[error("POST to the endpoint answered HTTP {0}")]
    Status(u16),
    /// The request failed; fatal when the connection could not be made.
    #[error("POST to the endpoint failed")]
    Request(#[source] reqwest::Error),
    /// The message could not be encoded.
    #[error("could not encode the message")]
    Encode(#[source] serde_json::Error),
}

impl SendError {
    /// Whether this failure means the session is gone (vs. a failure of one message).
    pub(crate) fn cause(&self) -> Option<Cause> {
        match self {
            SendError::SessionExpired(_) => Some(Cause::SessionExpired),
            SendError::Request(e) if e.is_connect() => Some(Cause::TransportError),
            _ => None,
        }
    }
}

/// Why the byte stream stopped being read.
#[derive(Debug, thiserror::Error)]
enum ReadError {
    #[error("{0}")]
    Http(reqwest::Error),
    #[error("an SSE event exceeded max_event_bytes ({0} bytes)")]
    TooLarge(usize),
}

/// One legacy SSE session.
pub(crate) struct SseTransport {
    http: reqwest::Client,
    endpoint: Url,
    headers: HeaderMap,
    slot: DeathSlot,
    rx: mpsc::Receiver<ServerJsonRpcMessage>,
    /// Stops the reader; cancelled by `close`, `Drop` and a fatal send failure.
    stop: CancellationToken,
    reader: Option<JoinHandle<()>>,
}

/// Opens the stream, waits for its `endpoint` (at most `endpoint_timeout`) and starts reading.
pub(crate) async fn connect(
    http: &reqwest::Client,
    config: &RemoteConfig,
    slot: DeathSlot,
) -> Result<SseTransport, ConnectError> {
    let headers = super::http::header_map(config).map_err(ConnectError::new)?;
    let response = http
        .get(config.url.clone())
        .headers(headers.clone())
        .header(ACCEPT, HeaderValue::from_static("text/event-stream"))
        .send()
        .await
        .map_err(|e| ConnectError::new(format!("GET {} failed: {e}", config.url)))?;
    let status = response.status();
    if !status.is_success() {
        let detail = format!("GET {} answered HTTP {status}", config.url);
        return Err(ConnectError {
            status: Some(status.as_u16()),
            detail,
        });
    }
    let mut events = events(response, config.max_event_bytes);
    let endpoint =
        tokio::time::timeout(config.endpoint_timeout, endpoint(&mut events, &config.url))
            .await
            .map_err(|_| {
                ConnectError::new(format!(
                    "no `endpoint` event within {:?}",
                    config.endpoint_timeout
                ))
            })??;
    let (tx, rx) = mpsc::channel(CHANNEL);
    let stop = CancellationToken::new();
    let reader = tokio::spawn(read(events, tx, slot.clone(), stop.clone()));
    let http = http.clone();
    Ok(SseTransport {
        http,
        endpoint,
        headers,
        slot,
        rx,
        stop,
        reader: Some(reader),
    })
}

/// The events of `response`, bounded to `max` bytes each (invariant 2).
fn events(response: reqwest::Response, max: usize) -> Events {
    let mut framer = Framer::new(max);
    response
        .bytes_stream()
        .map(move |chunk| framer.push(&chunk.map_err(ReadError::Http)?))
        .eventsource()
        .boxed()
}

/// Reads until the `endpoint` event and resolves it against `base` (invariant 1).
async fn endpoint(events: &mut Events, base: &Url) -> Result<Url, ConnectError> {
    loop {
        let event = match events.next().await {
            Some(Ok(event)) => event,
            Some(Err(e)) => {
                return Err(ConnectError::new(format!(
                    "SSE stream failed before `endpoint`: {e}"
                )));
            }
            None => return Err(ConnectError::new("SSE stream ended before `endpoint`")),
        };
        if event.event != "endpoint" {
            tracing::warn!(event = %event.event, "legacy SSE: event before `endpoint` ignored");
            continue;
        }
        let endpoint = base
            .join(event.data.trim())
            .map_err(|e| ConnectError::new(format!("invalid endpoint `{}`: {e}", event.data)))?;
        if endpoint.origin() != base.origin() {
            return Err(ConnectError::new(format!(
                "refused endpoint `{endpoint}`: not on the SSE URL's origin {}",
                base.origin().ascii_serialization()
            )));
        }
        return Ok(endpoint);
    }
}

/// The reader task: forwards `message` events until the stream ends, fails, or `stop`.
async fn read(
    mut events: Events,
    tx: mpsc::Sender<ServerJsonRpcMessage>,
    slot: DeathSlot,
    stop: CancellationToken,
) {
    let death = loop {
        let event = tokio::select! {
            event = events.next() => event,
            () = stop.cancelled() => return,
        };
        let event = match event {
            Some(Ok(event)) => event,
            Some(Err(EventStreamError::Transport(ReadError::TooLarge(max)))) => {
                let detail = format!(
                    "legacy SSE stream closed: an event exceeded max_event_bytes ({max} bytes)"
                );
                break Death::new(Cause::TransportError, detail);
            }
            Some(Err(e)) => {
                break Death::new(
                    Cause::StreamClosed,
                    format!("legacy SSE stream failed: {e}"),
                );
            }
            None => break Death::new(Cause::StreamClosed, "legacy SSE stream ended"),
        };
        if !matches!(event.event.as_str(), "" | "message") {
            continue;
        }
        match serde_json::from_str::<ServerJsonRpcMessage>(&event.data) {
            Ok(message) => {
                // Fails only once the transport is gone; then nobody is listening.
                if tx.send(message).await.is_err() {
                    return;
                }
            }
            Err(e) => tracing::warn!("legacy SSE: unparsable message skipped: {e}"),
        }
    };
    let _ = slot.set(death);
}

impl Transport<RoleClient> for SseTransport {
    type Error = SendError;

    /// POSTs one message; the answer arrives on the stream. A fatal failure (404/410, or no
    /// connection) fills the slot and stops the reader, which ends the session.
    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), SendError>> + Send + 'static {
        let request = serde_json::to_vec(&item).map(|body| {
            self.http
                .post(self.endpoint.clone())
                .headers(self.headers.clone())
                .header(
                    reqwest::header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                )
                .body(body)
        });
        let (slot, stop) = (self.slot.clone(), self.stop.clone());
        async move {
            let result = match request.map_err(SendError::Encode)?.send().await {
                Ok(r) if r.status().is_success() => return Ok(()),
                Ok(r) if matches!(r.status().as_u16(), 404 | 410) => {
                    SendError::SessionExpired(r.status().as_u16())
                }
                Ok(r) => SendError::Status(r.status().as_u16()),
                Err(e) => SendError::Request(e),
            };
            if let Some(cause) = result.cause() {
                let _ = slot.set(Death::new(cause, result.to_string()));
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
        self.rx.recv().await
    }

    async fn close(&mut self) -> Result<(), SendError> {
        self.stop.cancel();
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

/// Cuts the byte stream after its last line end (the parser then never rescans a partial
/// line) and counts the bytes of the current event.
struct Framer {
    max: usize,
    /// Bytes since the last blank line (line ends excluded).
    event: usize,
    line: usize,
    after_cr: bool,
    /// The incomplete last line (at most `max` bytes).
    tail: Vec<u8>,
}

impl Framer {
    fn new(max: usize) -> Self {
        Framer {
            max,
            event: 0,
            line: 0,
            after_cr: false,
            tail: Vec::new(),
        }
    }

    /// The complete lines now available.
    fn push(&mut self, chunk: &[u8]) -> Result<Vec<u8>, ReadError> {
        for &byte in chunk {
            let crlf = self.after_cr && byte == b'\n';
            self.after_cr = byte == b'\r';
            if crlf {
                continue;
            }
            if matches!(byte, b'\n' | b'\r') {
                if self.line == 0 {
                    self.event = 0;
                }
                self.line = 0;
            } else {
                self.line += 1;
                self.event += 1;
                if self.event > self.max {
                    return Err(ReadError::TooLarge(self.max));
                }
            }
        }
        self.tail.extend_from_slice(chunk);
        match self.tail.iter().rposition(|b| matches!(b, b'\n' | b'\r')) {
            Some(end) => {
                let rest = self.tail.split_off(end + 1);
                Ok(std::mem::replace(&mut self.tail, rest))
            }
            None => Ok(Vec::new()),
        }
    }
}
