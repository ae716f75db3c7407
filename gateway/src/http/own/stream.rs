//! A host's `GET`: the session's standalone stream, which the session's outbox drains to while
//! it is open (one task, ended with the stream), with a keep-alive comment when it has nothing
//! to say. A `Last-Event-ID` naming a request of rmcp's front (a fleet that changed fronts, or a
//! process that died with the request) is answered as lost, as rmcp's front answers it.

use std::{convert::Infallible, sync::Arc, sync::atomic::Ordering};

use axum::{
    body::Body,
    extract::Request,
    http::{HeaderValue, StatusCode, header},
    response::Response,
};
use bytes::Bytes;
use futures::future::BoxFuture;
use rmcp::model::{ServerJsonRpcMessage, ServerNotification};
use tokio::{
    sync::{OwnedMutexGuard, mpsc},
    task::JoinHandle,
};

use super::{
    Own,
    table::{Busy, Session, lock},
};
use crate::{
    http::{lost::Tag, refusal::refuse},
    outbox::sink::{self, Sink},
};

/// Events written ahead of the host's reading.
const AHEAD: usize = 8;

pub(super) fn sse(body: Body) -> Response {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// One SSE event carrying `message`.
pub(super) fn event(message: &ServerJsonRpcMessage) -> Option<Bytes> {
    let json = serde_json::to_string(message).ok()?;
    Some(Bytes::from(format!("event: message\ndata: {json}\n\n")))
}

pub(super) async fn get(own: &Arc<Own>, request: Request, id: &str) -> Response {
    let accepts_sse = (request.headers().get_all(header::ACCEPT).iter())
        .filter_map(|value| value.to_str().ok())
        .any(|value| value.to_ascii_lowercase().contains("text/event-stream"));
    if !accepts_sse {
        return refuse(
            StatusCode::NOT_ACCEPTABLE,
            "the host must accept text/event-stream",
        );
    }
    let (parts, _) = request.into_parts();
    let last = (parts.headers.get("last-event-id")).and_then(|v| v.to_str().ok());
    if let Some((_, Some(tag))) = last.map(Tag::split) {
        tracing::info!(
            "a request's stream is asked for again; this front has none: answered as lost"
        );
        let lost = tag.answer();
        let answer = lost.message.as_deref().and_then(event).unwrap_or_default();
        return sse(Body::from(answer));
    }
    let session = match own.session(id, &parts).await {
        Ok(session) => session,
        Err(refused) => return refused,
    };
    if session.streaming.swap(true, Ordering::AcqRel) {
        return refuse(
            StatusCode::CONFLICT,
            "this session's stream is open already",
        );
    }
    let standalone = Standalone(session.clone());
    let busy = session.busy(&own.table, None);
    let ended = session.ended.clone();
    // A call that asked for progress may be draining the outbox to its own response: the
    // stream takes over when it ends.
    let drainer = tokio::select! {
        drainer = session.drainer.clone().lock_owned() => drainer,
        () = ended.cancelled() => return refuse(StatusCode::NOT_FOUND, "no such session"),
    };
    // The questions that ride no request of the host's come here (`asks.rs`).
    let (questions, asked) = mpsc::channel(AHEAD);
    lock(&session.asks).standalone = Some(questions);
    let (rx, open) = drain(&session, busy, drainer, Some(standalone));
    let state = (rx, asked, open, own.keep_alive, ended);
    let body = futures::stream::unfold(state, |state| async move {
        let (mut rx, mut asked, open, every, ended) = state;
        let chunk = tokio::select! {
            chunk = rx.recv() => chunk?,
            Some(question) = asked.recv() => question,
            () = tokio::time::sleep(every) => Bytes::from_static(b": keep-alive\n\n"),
            () = ended.cancelled() => return None,
        };
        Some((Ok::<_, Infallible>(chunk), (rx, asked, open, every, ended)))
    });
    let opened = futures::stream::once(async { Ok(Bytes::from_static(b": open\n\n")) });
    sse(Body::from_stream(futures::StreamExt::chain(opened, body)))
}

/// The session's outbox drained to the receiver while the guard lives (with `busy`, the
/// session's `drainer`, and the standalone stream's mark if it is that stream).
pub(super) fn drain(
    session: &Arc<Session>,
    busy: Busy,
    drainer: OwnedMutexGuard<()>,
    standalone: Option<Standalone>,
) -> (mpsc::Receiver<Bytes>, Open) {
    let (events, rx) = mpsc::channel(AHEAD);
    let outbox = session.handler.shared.link.outbox.clone();
    let events = Events {
        events,
        session: session.clone(),
    };
    let writer = tokio::spawn(sink::run(outbox, events));
    let open = Open {
        writer,
        _held: (busy, drainer, standalone),
    };
    (rx, open)
}

/// The standalone stream is open while it lives.
pub(super) struct Standalone(Arc<Session>);

impl Drop for Standalone {
    fn drop(&mut self) {
        lock(&self.0.asks).standalone = None;
        self.0.streaming.store(false, Ordering::Release);
    }
}

/// The outbox is drained while it lives: then the writer ends, and another drain may begin.
pub(super) struct Open {
    writer: JoinHandle<()>,
    _held: (Busy, OwnedMutexGuard<()>, Option<Standalone>),
}

impl Drop for Open {
    fn drop(&mut self) {
        self.writer.abort();
    }
}

/// The stream's events; a request's progress goes to that request's response if it waits
/// for it (`progress.rs`).
struct Events {
    events: mpsc::Sender<Bytes>,
    session: Arc<Session>,
}

impl Sink for Events {
    fn send(&self, notification: ServerNotification) -> BoxFuture<'_, Result<(), ()>> {
        Box::pin(async move {
            let route = match &notification {
                ServerNotification::ProgressNotification(progress) => {
                    self.session.routed(&progress.params.progress_token)
                }
                _ => None,
            };
            let message = ServerJsonRpcMessage::notification(notification);
            let Some(event) = event(&message) else {
                return Ok(());
            };
            if let Some(route) = route {
                // The request's response may have ended meanwhile: then the progress is moot.
                let _ = route.send(event).await;
                return Ok(());
            }
            if self.events.send(event).await.is_err() {
                // The stream is gone and its writer is being ended: what is left stays queued.
                std::future::pending::<()>().await;
            }
            Ok(())
        })
    }
}
