//! A server's requests to the host on the own front (sampling, elicitation, roots): each rides
//! the response of the host's request that caused it (the request the upstream serves, which
//! the core names on it), as on rmcp's front. That response is one JSON body while nothing is
//! asked; the first question turns it into an SSE stream (the questions, then the answer). The
//! host answers with a `POST` of a JSON-RPC response in its session, which reaches only the
//! question of that session it names.
//!
//! Bounds: at most 8 questions wait per session (`questions.rs`) (past it the upstream's request
//! fails at once); an answer is at most the front's body bound (`413`); the wait is the core's
//! (`host/link.rs`, ten minutes), and a question fails as soon as the host's request it rides
//! ends (answered, cancelled, its stream closed) or the session ends. A question without a
//! request of the host's to ride (none named: the host has several calls on that upstream; or
//! the request already answered) goes on the session's standalone stream when it is open (as
//! on rmcp's front), else fails with an error that says why. What a session holds of them is
//! in `questions.rs`.

use std::{
    sync::{Arc, Weak},
    time::Duration,
};

use axum::{http::request::Parts, response::Response};
use bytes::Bytes;
use futures::{Stream, StreamExt, future::BoxFuture};
use rmcp::{
    ErrorData,
    model::{
        ClientJsonRpcMessage, ClientRequest, ClientResult, GetExtensions, JsonRpcRequest,
        RequestId, ServerJsonRpcMessage, ServerRequest,
    },
    service::OriginatingRequestId,
};
use tokio::sync::mpsc;

use super::{
    Own, answer,
    answer::event,
    table::{Session, lock},
};

/// Events written ahead of the host's reading on a request's response.
const AHEAD: usize = 8;

/// The host's request `id` may carry questions on `events` while it lives.
pub(super) struct Ride(Arc<Session>, Option<RequestId>);

impl Drop for Ride {
    fn drop(&mut self) {
        if let Some(id) = self.1.take() {
            lock(&self.0.asks).unride(&id);
        }
    }
}

impl Session {
    /// Questions for the host's request `id` go to `events` while the guard lives (unless
    /// another request in flight has that id: the first keeps it).
    pub(super) fn ride(self: &Arc<Self>, id: &RequestId, events: mpsc::Sender<Bytes>) -> Ride {
        let taken = lock(&self.asks).ride(id, events);
        Ride(self.clone(), taken.then(|| id.clone()))
    }

    /// The host answered one of our questions (else: nothing happens).
    pub(super) fn answered(&self, message: ClientJsonRpcMessage) {
        let waiting = lock(&self.asks).waiting_for(&message);
        if let Some(waiting) = waiting {
            let _ = waiting.send(message);
        }
    }
}

/// What asks the host of one session (the core's `Asker`).
pub(super) struct Asker(Weak<Session>);

/// From now on the core asks `session`'s host through this front.
pub(super) fn ask_through(session: &Arc<Session>) {
    let asker: Arc<dyn crate::host::Asker> = Arc::new(Asker(Arc::downgrade(session)));
    session.handler.shared.link.asked_through(asker);
}

impl std::fmt::Debug for Asker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("own front asker")
    }
}

/// A question waiting, until answered or given up.
struct Pending(Arc<Session>, u64);

impl Drop for Pending {
    fn drop(&mut self) {
        lock(&self.0.asks).given_up(self.1);
    }
}

impl crate::host::Asker for Asker {
    fn ask(&self, request: ServerRequest) -> BoxFuture<'static, Result<ClientResult, ErrorData>> {
        let session = self.0.clone();
        Box::pin(async move {
            let session = session.upgrade().ok_or_else(ended)?;
            let origin = request.extensions().get::<OriginatingRequestId>();
            let origin = origin.map(|origin| origin.0.clone());
            let (id, events, answer) = lock(&session.asks).ask(origin.as_ref())?;
            let _pending = Pending(session.clone(), id);
            let number = i64::try_from(id).unwrap_or(i64::MAX);
            let question = ServerJsonRpcMessage::request(request, RequestId::Number(number));
            let question = event(&question).ok_or_else(ended)?;
            events.send(question).await.map_err(|_| ended())?;
            let answer = tokio::select! {
                answer = answer => answer.map_err(|_| ended())?,
                () = events.closed() => return Err(ended()),
                () = session.ended.cancelled() => return Err(ended()),
            };
            match answer {
                ClientJsonRpcMessage::Response(response) => Ok(response.result),
                ClientJsonRpcMessage::Error(error) => Err(error.error),
                _ => Err(ended()),
            }
        })
    }
}

fn ended() -> ErrorData {
    ErrorData::internal_error(
        "the host's request this question rode ended before the host answered it",
        None,
    )
}

/// How long a tool call's answer may take before its response opens as an SSE stream (the
/// priming event first, the answer an event later): a call answered within it is one JSON
/// body (the hop's fast path: no task, no log); a longer one gets an event id to resume from.
pub(super) const STREAM_AFTER: Duration = Duration::from_millis(10);

/// A request in a session, answered as one JSON body, or as an SSE stream (the priming event,
/// the questions, then the answer) once the upstream asks the host something for it, or, for
/// a `tools/call`, once [`STREAM_AFTER`] has passed without its answer. In a fleet a
/// `tools/call`'s stream opens before the call runs (`mod.rs`).
pub(super) async fn answer(
    own: &Arc<Own>,
    session: &Arc<Session>,
    parts: Parts,
    request: JsonRpcRequest<ClientRequest>,
) -> Response {
    let unanswered = super::unanswered(&request);
    let call = matches!(request.request, ClientRequest::CallToolRequest(_));
    let early = call && own.store.shared();
    let mut asking = Asking::new(own, session, parts, request);
    let first = match early {
        true => None,
        false => tokio::select! {
            biased;
            answer = &mut asking.call => return answer::json(&answer, None),
            Some(first) = asking.questions.recv() => Some(first),
            () = grace(call) => None,
            // Past the drain's limit the gateway ends: the host is told the call may have run.
            () = own.cut.cancelled() => return answer::json(&unanswered.message(), None),
        },
    };
    // From here the request runs on its own task, and its stream can be asked for again.
    let work = asking.events(first);
    let mut response = super::resumable::respond(session, unanswered.tag(), early, work);
    response.extensions_mut().insert(unanswered);
    response
}

/// [`STREAM_AFTER`] for a call; never for anything else.
async fn grace(call: bool) {
    match call {
        true => tokio::time::sleep(STREAM_AFTER).await,
        false => std::future::pending().await,
    }
}

/// A request on its way: its answer to come, and the questions that ride its response.
pub(super) struct Asking {
    call: BoxFuture<'static, ServerJsonRpcMessage>,
    questions: mpsc::Receiver<Bytes>,
    ride: Ride,
}

impl Asking {
    /// `request` dispatched (it runs when the answer is first awaited).
    pub(super) fn new(
        own: &Arc<Own>,
        session: &Arc<Session>,
        parts: Parts,
        request: JsonRpcRequest<ClientRequest>,
    ) -> Self {
        let (events, questions) = mpsc::channel(AHEAD);
        let ride = session.ride(&request.id, events);
        let call: BoxFuture<'static, ServerJsonRpcMessage> = {
            let (own, session) = (own.clone(), session.clone());
            Box::pin(async move { answer::ask(&own.table, &session, parts, request).await })
        };
        Self {
            call,
            questions,
            ride,
        }
    }

    /// Its events on a stream: `first`, the questions as they come, then the answer.
    pub(super) fn events(self, first: Option<Bytes>) -> impl Stream<Item = Bytes> + Send + 'static {
        let rest = futures::stream::unfold(Some(self), |state| async move {
            let Self {
                mut call,
                mut questions,
                ride,
            } = state?;
            tokio::select! {
                biased;
                Some(question) = questions.recv() => {
                    Some((question, Some(Self { call, questions, ride })))
                }
                answer = &mut call => {
                    drop(ride);
                    Some((event(&answer).unwrap_or_default(), None))
                }
            }
        });
        futures::stream::iter(first).chain(rest)
    }
}
