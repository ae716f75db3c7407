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
use tokio::{sync::mpsc, task::JoinHandle};

use super::{
    Own,
    table::{Busy, Session},
};
use crate::{
    http::{lost::Tag, refusal::refuse},
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
    let last = (parts.headers.get("last-event-id")).and_then(|v| v.to_str().ok());
    if let Some((_, Some(tag))) = last.map(Tag::split) {
        tracing::info!(
            "a request's stream is asked for again; this front has none: answered as lost"
        );
        let lost = tag.answer();
        let data = lost
            .message
            .as_deref()
            .and_then(|m| serde_json::to_string(m).ok());
        let event = format!("data: {}\n\n", data.unwrap_or_default());
        return sse(Body::from(event));
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
    let busy = session.busy(&own.table, None);
    let (events, rx) = mpsc::channel(AHEAD);
    let outbox = session.handler.shared.link.outbox.clone();
    let writer = tokio::spawn(sink::run(outbox, Events(events)));
    let ended = session.ended.clone();
    let open = Open {
        session,
        writer,
        _busy: busy,
    };
    let state = (rx, open, own.keep_alive, ended);
    let body = futures::stream::unfold(state, |(mut rx, open, every, ended)| async move {
        let chunk = tokio::select! {
            chunk = rx.recv() => chunk?,
            () = tokio::time::sleep(every) => Bytes::from_static(b": keep-alive\n\n"),
            () = ended.cancelled() => return None,
        };
        Some((Ok::<_, Infallible>(chunk), (rx, open, every, ended)))
    });
    let opened = futures::stream::once(async { Ok(Bytes::from_static(b": open\n\n")) });
    sse(Body::from_stream(futures::StreamExt::chain(opened, body)))
}

fn sse(body: Body) -> Response {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// The stream is open while it lives: then the writer ends, and another stream may open.
struct Open {
    session: Arc<Session>,
    writer: JoinHandle<()>,
    _busy: Busy,
}

impl Drop for Open {
    fn drop(&mut self) {
        self.writer.abort();
        self.session.streaming.store(false, Ordering::Release);
    }
}

/// The stream's events.
struct Events(mpsc::Sender<Bytes>);

impl Sink for Events {
    fn send(&self, notification: ServerNotification) -> BoxFuture<'_, Result<(), ()>> {
        Box::pin(async move {
            let message = ServerJsonRpcMessage::notification(notification);
            let Ok(json) = serde_json::to_string(&message) else {
                return Ok(());
            };
            let event = Bytes::from(format!("event: message\ndata: {json}\n\n"));
            if self.0.send(event).await.is_err() {
                // The stream is gone and its writer is being ended: what is left stays queued.
                std::future::pending::<()>().await;
            }
            Ok(())
        })
    }
}
