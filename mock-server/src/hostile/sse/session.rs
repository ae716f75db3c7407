//! The sessions of a hostile SSE server: their answers, and what each stream carries.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::options::{HostileSseOptions, SseHostility, Trigger};
use crate::random::random_hex;

/// Frames queued for one stream; a `POST` waits for room.
const CHANNEL: usize = 64;

/// What a stream sends next.
enum Out {
    /// One complete event.
    Event(Bytes),
    /// The session's hostile burst.
    Burst,
}

/// Every open session of one server. Only the routes and [`super::HostileSseServer`] touch it.
pub(super) struct Sessions {
    opts: HostileSseOptions,
    stop: CancellationToken,
    map: Mutex<HashMap<String, Session>>,
    burst_started: Mutex<Option<Instant>>,
    hostile_bytes: AtomicU64,
}

struct Session {
    tx: mpsc::Sender<Out>,
    /// Set once the burst is queued: a session turns hostile at most once.
    triggered: bool,
}

impl Sessions {
    pub(super) fn new(opts: HostileSseOptions, stop: CancellationToken) -> Self {
        Sessions {
            opts,
            stop,
            map: Mutex::new(HashMap::new()),
            burst_started: Mutex::new(None),
            hostile_bytes: AtomicU64::new(0),
        }
    }

    fn map(&self) -> MutexGuard<'_, HashMap<String, Session>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn trigger_all(&self) -> usize {
        let mut map = self.map();
        let fresh = map.values_mut().filter(|s| !s.triggered);
        fresh
            .filter(|s| s.tx.try_send(Out::Burst).is_ok())
            .map(|s| s.triggered = true)
            .count()
    }

    pub(super) fn burst_started(&self) -> Option<Instant> {
        *self
            .burst_started
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn hostile_bytes(&self) -> u64 {
        self.hostile_bytes.load(Ordering::SeqCst)
    }

    /// The burst of this server's kind.
    fn burst(&self) -> Burst {
        let fill = |byte: u8| Bytes::from(vec![byte; self.opts.chunk.max(1)]);
        let single = |event: &'static [u8]| Burst {
            head: Some(Bytes::from_static(event)),
            fill: Bytes::new(),
            left: 0,
            ends_stream: false,
        };
        match self.opts.kind {
            SseHostility::InvalidUtf8 => single(
                b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\
                  \"params\":{\"level\":\"info\",\"data\":\"bad \xff byte\"}}\n\n",
            ),
            SseHostility::MalformedJson => {
                single(b"event: message\ndata: {\"jsonrpc\":\"2.0\",\n\n")
            }
            SseHostility::NewlineFlood => Burst {
                head: None,
                fill: fill(b'\n'),
                left: self.opts.bytes,
                ends_stream: true,
            },
            SseHostility::EventFlood => {
                let event = b"event: noise\ndata: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n\n";
                let events = (self.opts.chunk / event.len()).max(1);
                Burst {
                    head: None,
                    fill: Bytes::from(event.repeat(events)),
                    left: self.opts.bytes,
                    ends_stream: true,
                }
            }
            SseHostility::EndlessLine => Burst {
                head: Some(Bytes::from_static(b"data: ")),
                fill: fill(b'x'),
                left: self.opts.bytes,
                ends_stream: true,
            },
        }
    }
}

/// One hostile burst, chunk by chunk (invariant 2).
struct Burst {
    head: Option<Bytes>,
    fill: Bytes,
    left: usize,
    /// Whether the stream ends after the burst.
    ends_stream: bool,
}

impl Burst {
    fn next(&mut self) -> Option<Bytes> {
        if let Some(head) = self.head.take() {
            return Some(head);
        }
        let n = self.left.min(self.fill.len());
        self.left -= n;
        (n > 0).then(|| self.fill.slice(..n))
    }
}

/// One stream's state; dropping it (client gone, stream ended) forgets the session.
struct Stream {
    sessions: Arc<Sessions>,
    id: String,
    rx: mpsc::Receiver<Out>,
    burst: Option<Burst>,
    /// Whether the current burst has sent a chunk yet.
    burst_sent: bool,
}

impl Drop for Stream {
    fn drop(&mut self) {
        self.sessions.map().remove(&self.id);
    }
}

/// The stream's next frame, or `None` when it ends.
async fn next(mut s: Stream) -> Option<(Result<Bytes, Infallible>, Stream)> {
    loop {
        if let Some(burst) = &mut s.burst {
            match burst.next() {
                Some(chunk) => {
                    let pace = s.sessions.opts.pace;
                    if !pace.is_zero() {
                        tokio::time::sleep(pace).await;
                    }
                    if !std::mem::replace(&mut s.burst_sent, true) {
                        let started = &s.sessions.burst_started;
                        *started.lock().unwrap_or_else(PoisonError::into_inner) =
                            Some(Instant::now());
                    }
                    let len = chunk.len() as u64;
                    s.sessions.hostile_bytes.fetch_add(len, Ordering::SeqCst);
                    return Some((Ok(chunk), s));
                }
                None if burst.ends_stream => return None,
                None => s.burst = None,
            }
        }
        match s.rx.recv().await? {
            Out::Event(event) => return Some((Ok(event), s)),
            Out::Burst => {
                s.burst = Some(s.sessions.burst());
                s.burst_sent = false;
            }
        }
    }
}

/// `GET /sse`.
pub(super) async fn open_stream(State(sessions): State<Arc<Sessions>>) -> Response {
    let id = random_hex(16);
    let (tx, rx) = mpsc::channel(CHANNEL);
    let session = Session {
        tx,
        triggered: false,
    };
    sessions.map().insert(id.clone(), session);
    let endpoint = format!("event: endpoint\ndata: /message?sessionId={id}\n\n");
    let stop = sessions.stop.clone();
    let stream = Stream {
        sessions,
        id,
        rx,
        burst: None,
        burst_sent: false,
    };
    let head = futures::stream::once(async move { Ok(Bytes::from(endpoint)) });
    let body = head
        .chain(futures::stream::unfold(stream, next))
        .take_until(stop.cancelled_owned());
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(body),
    )
        .into_response()
}

/// `POST /message?sessionId=<id>`: 202, and the answer (if any) on the stream.
pub(super) async fn post_message(
    State(sessions): State<Arc<Sessions>>,
    Query(query): Query<HashMap<String, String>>,
    body: Bytes,
) -> StatusCode {
    let Some(id) = query.get("sessionId") else {
        return StatusCode::BAD_REQUEST;
    };
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        return StatusCode::BAD_REQUEST;
    };
    let method = message["method"].as_str().unwrap_or_default();
    let triggers = match method {
        "tools/list" => sessions.opts.trigger == Trigger::AfterList,
        "tools/call" => message["params"]["name"] == "trigger",
        _ => false,
    };
    let (tx, burst) = {
        let mut map = sessions.map();
        let Some(session) = map.get_mut(id) else {
            return StatusCode::NOT_FOUND;
        };
        let burst = triggers && !std::mem::replace(&mut session.triggered, true);
        (session.tx.clone(), burst)
    };
    if let Some(answer) = answer(&message) {
        let event = format!("event: message\ndata: {answer}\n\n");
        if tx.send(Out::Event(Bytes::from(event))).await.is_err() {
            return StatusCode::GONE;
        }
    }
    if burst && tx.send(Out::Burst).await.is_err() {
        return StatusCode::GONE;
    }
    StatusCode::ACCEPTED
}

/// The answer to a request (`None` for notifications and responses).
fn answer(request: &Value) -> Option<Value> {
    let id = request.get("id")?.clone();
    let params = &request["params"];
    let result = match request.get("method")?.as_str()? {
        "initialize" => json!({
            "protocolVersion": params["protocolVersion"].as_str().unwrap_or("2024-11-05"),
            "capabilities": { "tools": {} },
            "serverInfo": { "name": "hostile-sse", "version": env!("CARGO_PKG_VERSION") },
        }),
        "ping" => json!({}),
        "tools/list" => json!({ "tools": [
            { "name": "echo", "description": "Replies with `text`.",
              "inputSchema": { "type": "object", "properties": { "text": { "type": "string" } } } },
            { "name": "trigger", "description": "Turns this session hostile after the reply.",
              "inputSchema": { "type": "object" } },
        ]}),
        "tools/call" => {
            let text = match params["name"].as_str() {
                Some("trigger") => "triggered",
                _ => params["arguments"]["text"].as_str().unwrap_or_default(),
            };
            json!({ "content": [{ "type": "text", "text": text }] })
        }
        _ => {
            let error = json!({ "code": -32601, "message": "method not found" });
            return Some(json!({ "jsonrpc": "2.0", "id": id, "error": error }));
        }
    };
    Some(json!({ "jsonrpc": "2.0", "id": id, "result": result }))
}
