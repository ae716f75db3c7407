//! Legacy HTTP+SSE transport (spec 2024-11-05), hand-written because rmcp has none.
//!
//! `GET /sse` opens a session: the stream's first event `endpoint` names
//! `/message?sessionId=<id>`, then every server message follows as a `message` event. The client
//! POSTs its messages there; each is answered `202 Accepted` and handed to the session's rmcp
//! server, whose replies travel on the stream.
//!
//! The sessions themselves are in [`sessions`]; this file holds the two routes.

pub(crate) mod sessions;

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures::channel::mpsc;
use futures::{Stream, StreamExt};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use tokio::sync::watch;

use super::state::ServerState;

/// `GET /sse`.
pub(crate) async fn open_stream(
    State(server): State<Arc<ServerState>>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let (id, from_server, guard) = server.legacy.open();
    let keep_alive = server.legacy_keep_alive;
    let endpoint = server
        .cross_origin()
        .unwrap_or_else(|| format!("/message?sessionId={id}"));
    let mut oversized = server.oversized.subscribe();
    let first_oversized = *oversized.borrow_and_update();
    let head = futures::stream::iter(
        std::iter::once(Event::default().event("endpoint").data(endpoint))
            .chain((first_oversized > 0).then(|| oversized_event(first_oversized))),
    );
    let state = (from_server, oversized, guard);
    let tail = futures::stream::unfold(state, |(mut from_server, mut oversized, guard)| async {
        let event = next_event(&mut from_server, &mut oversized).await?;
        Some((event, (from_server, oversized, guard)))
    });
    Sse::new(head.chain(tail).map(Ok)).keep_alive(KeepAlive::new().interval(keep_alive))
}

/// The next event of a stream, or `None` once the session's server is gone.
async fn next_event(
    from_server: &mut mpsc::Receiver<ServerJsonRpcMessage>,
    oversized: &mut watch::Receiver<usize>,
) -> Option<Event> {
    loop {
        tokio::select! {
            message = from_server.next() => {
                let json = serde_json::to_string(&message?).ok()?;
                return Some(Event::default().event("message").data(json));
            }
            Ok(()) = oversized.changed() => {
                let bytes = *oversized.borrow_and_update();
                if bytes > 0 {
                    return Some(oversized_event(bytes));
                }
            }
        }
    }
}

fn oversized_event(bytes: usize) -> Event {
    Event::default().event("message").data("x".repeat(bytes))
}

/// `POST /message?sessionId=<id>`.
pub(crate) async fn post_message(
    State(server): State<Arc<ServerState>>,
    Query(query): Query<HashMap<String, String>>,
    body: Bytes,
) -> StatusCode {
    let Some(id) = query.get("sessionId") else {
        return StatusCode::BAD_REQUEST;
    };
    let Ok(message) = serde_json::from_slice::<ClientJsonRpcMessage>(&body) else {
        return StatusCode::BAD_REQUEST;
    };
    server.legacy.post(id, message).await
}
