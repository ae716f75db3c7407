//! A request that asked for progress (`_meta.progressToken`): answered as an SSE stream, its
//! progress going out as it comes and before the answer, as on rmcp's front (when no standalone
//! stream is open, everything else the session's outbox holds meanwhile too). The request runs
//! on its own task and its stream can be asked for again (`resumable.rs`). Every other request
//! is answered as one JSON body.

use std::{sync::Arc, time::Duration};

use axum::{http::request::Parts, response::Response};
use bytes::Bytes;
use futures::{StreamExt, future::BoxFuture};
use rmcp::model::ProgressToken;
use rmcp::model::{ClientRequest, JsonRpcRequest, ServerJsonRpcMessage};
use tokio::sync::mpsc;

use super::{
    Own, answer,
    answer::event,
    asks::Ride,
    stream,
    table::{Route, Session},
};
use crate::outbox::Outbox;

/// Progress events written ahead of the host's reading.
const AHEAD: usize = 8;

/// How long an answer waits for what its request queued to be handed to its stream.
const FLUSH_LIMIT: Duration = Duration::from_secs(2);

/// `request` answered as a stream that carries its progress (`token`), and, when nothing
/// drains the session's outbox, everything else the outbox holds meanwhile. In a fleet a
/// `tools/call`'s stream opens before the call runs (`mod.rs`).
pub(super) fn streamed(
    own: &Arc<Own>,
    session: &Arc<Session>,
    parts: Parts,
    request: JsonRpcRequest<ClientRequest>,
    token: ProgressToken,
) -> Response {
    let unanswered = super::unanswered(&request);
    let early = own.store.shared() && matches!(request.request, ClientRequest::CallToolRequest(_));
    let work = events(own, session, parts, request, token);
    let mut response = super::resumable::respond(session, unanswered.tag(), early, work);
    response.extensions_mut().insert(unanswered);
    response
}

/// The events of `request`, which asked for progress (`token`): its progress (and what else
/// its response drains), then its answer.
pub(super) fn events(
    own: &Arc<Own>,
    session: &Arc<Session>,
    parts: Parts,
    request: JsonRpcRequest<ClientRequest>,
    token: ProgressToken,
) -> impl futures::Stream<Item = Bytes> + Send + 'static {
    let (events, rx) = mpsc::channel(AHEAD);
    // The upstream's questions for this request ride its response too (`asks.rs`).
    let ride = session.ride(&request.id, events.clone());
    let route = session.route(token, events);
    // Nothing drains the outbox: this response does, while it lasts.
    let drained = (session.drainer.clone().try_lock_owned().ok()).map(|drainer| {
        let busy = session.busy(&own.table, None);
        stream::drain_to_channel(session, busy, drainer)
    });
    let (others, open) = drained.unzip();
    let outbox = session.handler.shared.link.outbox.clone();
    let call: BoxFuture<'static, ServerJsonRpcMessage> = {
        let (own, session) = (own.clone(), session.clone());
        Box::pin(async move { answer::ask(&own.table, &session, parts, request).await })
    };
    let state = Some(Running {
        call,
        rx,
        others,
        held: (route, open, ride),
        outbox,
    });
    futures::stream::unfold(state, next).flat_map(futures::stream::iter)
}

/// A streamed request while it runs.
struct Running {
    call: BoxFuture<'static, ServerJsonRpcMessage>,
    /// Its progress.
    rx: mpsc::Receiver<Bytes>,
    /// The rest of the outbox, if this response drains it.
    others: Option<mpsc::Receiver<Bytes>>,
    held: (Route, Option<stream::Open>, Ride),
    outbox: Outbox,
}

/// The stream's next events: one, or the last ones and the answer.
async fn next(state: Option<Running>) -> Option<(Vec<Bytes>, Option<Running>)> {
    let mut state = state?;
    tokio::select! {
        biased;
        Some(event) = state.rx.recv() => Some((vec![event], Some(state))),
        Some(event) = recv(&mut state.others) => Some((vec![event], Some(state))),
        answer = &mut state.call => {
            // What the request queued goes out before its answer.
            let mut out = Vec::new();
            let flushed = state.outbox.flushed(state.outbox.mark(), FLUSH_LIMIT);
            tokio::pin!(flushed);
            loop {
                tokio::select! {
                    biased;
                    Some(event) = state.rx.recv() => out.push(event),
                    Some(event) = recv(&mut state.others) => out.push(event),
                    () = &mut flushed => break,
                }
            }
            while let Ok(event) = state.rx.try_recv() {
                out.push(event);
            }
            while let Some(Ok(event)) = state.others.as_mut().map(mpsc::Receiver::try_recv) {
                out.push(event);
            }
            out.extend(event(&answer));
            drop(state.held);
            Some((out, None))
        }
    }
}

/// The next of `others`, or never.
async fn recv(others: &mut Option<mpsc::Receiver<Bytes>>) -> Option<Bytes> {
    match others {
        Some(others) => others.recv().await,
        None => std::future::pending().await,
    }
}
