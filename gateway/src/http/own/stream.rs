//! A host's `GET`: the session's standalone stream, which the session's outbox drains to while
//! it is open (one task, ended with the stream), with a keep-alive comment when it has nothing
//! to say. Its events go through the session's standalone log (`replay.rs`), so a `GET` with the
//! `Last-Event-ID` of one of them gets what came after it; a `Last-Event-ID` of a request's
//! stream is answered from that stream's log (`resumable.rs`).

use std::{convert::Infallible, sync::Arc, sync::atomic::Ordering};

use axum::{
    body::Body,
    extract::Request,
    http::{StatusCode, header},
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
    answer::{event, sse},
    replay::Log,
    resumable::{Resumed, resumed},
    table::{Busy, Session, lock},
};
use crate::{
    http::{refusal::refuse, sessions::RESUME_AFTER},
    outbox::sink::{self, Sink},
};

/// Events written ahead of the host's reading.
const AHEAD: usize = 8;

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
    let session = match own.session(id, &parts).await {
        Ok(session) => session,
        Err(refused) => return refused,
    };
    let last = (parts.headers.get("last-event-id")).and_then(|v| v.to_str().ok());
    let from = match last.map(|last| resumed(&session, last)) {
        Some(Resumed::Answered(response)) => return response,
        Some(Resumed::Standalone(from)) => from,
        None => None,
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
    let log = session.standalone.clone();
    let from = from.unwrap_or_else(|| log.unread());
    let open = drain(
        &session,
        busy,
        drainer,
        Target::Log(log.clone()),
        Some(standalone),
    );
    let state = (log, from, asked, open, own.keep_alive, ended);
    let body = futures::stream::unfold(state, |state| async move {
        let (log, mut from, mut asked, open, every, ended) = state;
        let chunk = tokio::select! {
            chunk = log.next(&mut from) => chunk?,
            Some(question) = asked.recv() => question,
            () = tokio::time::sleep(every) => Bytes::from_static(b": keep-alive\n\n"),
            () = ended.cancelled() => return None,
        };
        Some((
            Ok::<_, Infallible>(chunk),
            (log, from, asked, open, every, ended),
        ))
    });
    // The host's wait before it asks again, its first event.
    let retry = format!("retry: {}\n\n", RESUME_AFTER.as_millis());
    let opened = futures::stream::once(async { Ok(Bytes::from(retry)) });
    sse(Body::from_stream(futures::StreamExt::chain(opened, body)))
}

/// Where a drained outbox goes: a request's response, or the standalone stream's log.
pub(super) enum Target {
    Channel(mpsc::Sender<Bytes>),
    Log(Arc<Log>),
}

/// The session's outbox drained to `target` while the guard lives (with `busy`, the session's
/// `drainer`, and the standalone stream's mark if it is that stream).
pub(super) fn drain(
    session: &Arc<Session>,
    busy: Busy,
    drainer: OwnedMutexGuard<()>,
    target: Target,
    standalone: Option<Standalone>,
) -> Open {
    let outbox = session.handler.shared.link.outbox.clone();
    let events = Events {
        target,
        session: session.clone(),
    };
    let writer = tokio::spawn(sink::run(outbox, events));
    Open {
        writer,
        _held: (busy, drainer, standalone),
    }
}

/// The outbox drained to a channel that the caller reads (`AHEAD` events ahead at most).
pub(super) fn drain_to_channel(
    session: &Arc<Session>,
    busy: Busy,
    drainer: OwnedMutexGuard<()>,
) -> (mpsc::Receiver<Bytes>, Open) {
    let (events, rx) = mpsc::channel(AHEAD);
    (
        rx,
        drain(session, busy, drainer, Target::Channel(events), None),
    )
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
    target: Target,
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
            match &self.target {
                Target::Log(log) => log.push_paced(&event).await,
                Target::Channel(events) => {
                    if events.send(event).await.is_err() {
                        // The response is gone and its writer is being ended: what is left
                        // stays queued.
                        std::future::pending::<()>().await;
                    }
                }
            }
            Ok(())
        })
    }
}
