//! [`Inbound`]: what the server sends a lean link, taken as it comes off the wire — answers to
//! their waiting requests, notifications to the generation's [`Dispatch`], the server's own
//! requests answered by a `POST` each.
//!
//! # Invariants
//!
//! 1. Every message stamps the generation's activity and every answer its ledger entry, as
//!    `Observed` does for rmcp's session.
//! 2. An answer nobody waits for (an unknown id, a second answer) and progress for no request
//!    in flight are dropped and counted; the first stray of a link is logged at warn.
//! 3. Notifications are dispatched in the order they arrived, before anything after them on
//!    the same stream: the progress of a request reaches its route before its answer.
//! 4. At most [`SERVER_REQUESTS`] requests of the server are worked on at once, each in a task
//!    of the link's tracker that ends with the transport; one more is refused at once.
//! 5. A `notifications/cancelled` of the server's naming one of its requests in progress drops
//!    that request's work (the host's handler future with it) and no answer is sent for it; one
//!    naming no request in progress changes nothing. The table of requests in progress holds
//!    one entry per task, so invariant 4 bounds it too.
//! 6. A notification naming a `subscriptions/listen` request of ours as its `subscriptionId`,
//!    and the server's `notifications/cancelled` naming one, go to that subscription
//!    ([`super::listen`]) and nowhere else.
//! 7. On a 2026-07-28 session, the server's sampling, elicitation and roots requests are
//!    answered only while a request of ours is in flight (SEP-2260, rmcp's coarse check: the
//!    transport does not say which stream a message came on); otherwise they are refused.

use std::sync::{
    Arc, Mutex, OnceLock, PoisonError,
    atomic::{AtomicBool, AtomicU64, Ordering},
};

use futures::future::BoxFuture;
use rmcp::model::{
    ClientJsonRpcMessage, ClientResult, ErrorCode, ErrorData, GetMeta, JsonRpcMessage, RequestId,
    ServerJsonRpcMessage, ServerNotification, ServerRequest,
};
use tokio_util::task::TaskTracker;

use tokio_util::sync::CancellationToken;

use super::mailbox::Mailbox;
use super::pending::Pending;
use super::working::Working;
use crate::transport::{
    Activity,
    refusal::{self, Judged},
};

/// What a generation does with what its server sends besides answers.
pub(crate) trait Dispatch: Send + Sync + 'static {
    /// A notification, in the order received. It should not wait long: the stream it came on
    /// is not read meanwhile.
    fn notify(&self, notification: ServerNotification) -> BoxFuture<'_, ()>;

    /// A request of the server's other than `ping` (which the link answers itself).
    fn request(&self, request: ServerRequest) -> BoxFuture<'_, Result<ClientResult, ErrorData>>;
}

/// Sends our answer to a request of the server's, with the transport's own send. Its future is
/// boxed and named `Send`: a send may deliver what the server sends back, which may be a
/// request again, so the compiler could not otherwise see through the cycle.
pub(super) type Reply = Arc<dyn Fn(ClientJsonRpcMessage) -> BoxFuture<'static, ()> + Send + Sync>;

/// The most requests of the server worked on at once (invariant 4).
pub(super) const SERVER_REQUESTS: usize = 64;

/// The receiving half of a lean link (see the module docs).
pub(crate) struct Inbound {
    pub(super) pending: Pending,
    dispatch: Arc<dyn Dispatch>,
    activity: Arc<Activity>,
    /// How the server's requests are answered, and the transport's stop (set once, when the
    /// transport is built).
    reply: OnceLock<(Reply, CancellationToken)>,
    /// The server's requests being worked on.
    pub(super) tasks: TaskTracker,
    /// The stop of each request of the server's in progress, by its id (invariant 5).
    working: Working,
    strays: AtomicU64,
    /// The handshake's `server/discover` while it waits for its answer (see
    /// [`super::handshake`]); whether the handshake went on to `initialize` after one.
    probe: Mutex<(Option<RequestId>, bool)>,
    /// The open `subscriptions/listen` requests, each with where its notifications go
    /// (invariant 6); usually one, on a 2026-07-28 session.
    subscriptions: Mutex<Vec<(RequestId, Arc<Mailbox>)>>,
    /// Set once a 2026-07-28 handshake succeeded (invariant 7).
    modern: AtomicBool,
}

impl Inbound {
    pub(super) fn new(dispatch: Arc<dyn Dispatch>, activity: Arc<Activity>, limit: usize) -> Self {
        Inbound {
            pending: Pending::new(limit),
            dispatch,
            activity,
            reply: OnceLock::new(),
            tasks: TaskTracker::new(),
            working: Working::new(SERVER_REQUESTS),
            strays: AtomicU64::new(0),
            probe: Mutex::default(),
            subscriptions: Mutex::default(),
            modern: AtomicBool::new(false),
        }
    }

    /// The session is a 2026-07-28 one (invariant 7).
    pub(super) fn go_modern(&self) {
        self.modern.store(true, Ordering::Relaxed);
    }

    /// Routes the notifications of the listen request `id` to `mailbox` (invariant 6).
    pub(super) fn subscribe(&self, id: RequestId, mailbox: Arc<Mailbox>) {
        self.subscriptions().push((id, mailbox));
    }

    /// The listen request `id` is over: its notifications go nowhere special any more.
    pub(super) fn unsubscribe(&self, id: &RequestId) {
        self.subscriptions().retain(|(open, _)| open != id);
    }

    fn subscriptions(&self) -> std::sync::MutexGuard<'_, Vec<(RequestId, Arc<Mailbox>)>> {
        self.subscriptions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The subscription `notification` belongs to, if any (invariant 6).
    fn subscriber(&self, notification: &ServerNotification) -> Option<Arc<Mailbox>> {
        let subscriptions = self.subscriptions();
        if subscriptions.is_empty() {
            return None;
        }
        let id = match notification {
            ServerNotification::CancelledNotification(cancelled) => {
                cancelled.params.request_id.clone()
            }
            other => other.get_meta().subscription_id(),
        }?;
        let found = subscriptions.iter().find(|(open, _)| *open == id);
        found.map(|(_, mailbox)| mailbox.clone())
    }

    /// Reads answers as answers to the discover request `id` until it has one (see
    /// [`super::handshake`]); `None` once it is over.
    pub(super) fn expect_discover(&self, id: Option<RequestId>) {
        let mut probe = self.probe.lock().unwrap_or_else(PoisonError::into_inner);
        probe.1 |= probe.0.is_some() && id.is_none();
        probe.0 = id;
    }

    /// True once a discover request was asked and the handshake went on.
    pub(super) fn fell_back(&self) -> bool {
        self.probe.lock().unwrap_or_else(PoisonError::into_inner).1
    }

    /// `message` as the answer to the handshake's discover request, if one waits and it is
    /// its answer (read as `DiscoverRefusals` reads it), with that request's id.
    fn discover_answer(&self, message: ServerJsonRpcMessage) -> (Option<RequestId>, Judged) {
        let mut probe = self.probe.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(id) = probe.0.clone() else {
            return (None, Judged::Other(message));
        };
        match refusal::judge(&id, message) {
            Judged::Answer(answer) => {
                probe.0 = None;
                (Some(id), Judged::Answer(answer))
            }
            other => (None, other),
        }
    }

    pub(super) fn bind(&self, reply: Reply, stop: CancellationToken) {
        let _ = self.reply.set((reply, stop));
    }

    /// Takes one message from the server (see the module invariants).
    ///
    /// # Cancel safety
    ///
    /// Dropped while a notification is being dispatched, that notification is lost; the
    /// transport drops it only when it stops.
    pub(in crate::transport::http) async fn receive(&self, message: ServerJsonRpcMessage) {
        self.activity.touch();
        let message = match self.discover_answer(message) {
            (Some(id), Judged::Answer(answer)) => return self.answered(&id, answer),
            (_, Judged::Answer(message) | Judged::Other(message)) => message,
        };
        match message {
            JsonRpcMessage::Response(ref response) => {
                let id = response.id.clone();
                self.answered(&id, message);
            }
            JsonRpcMessage::Error(ref error) => match error.id.clone() {
                Some(id) => self.answered(&id, message),
                None => self.stray("an error answering no request"),
            },
            JsonRpcMessage::Notification(notification) => {
                self.notified(notification.notification).await;
            }
            JsonRpcMessage::Request(request) => self.asked(request.id, request.request).await,
        }
    }

    fn answered(&self, id: &RequestId, message: ServerJsonRpcMessage) {
        self.activity.ledger.answered(id);
        if !self.pending.answer(id, Box::new(message)) {
            self.stray("a response to no request in flight");
        }
    }

    async fn notified(&self, notification: ServerNotification) {
        if let Some(mailbox) = self.subscriber(&notification) {
            mailbox.post(notification);
            return;
        }
        if let ServerNotification::ProgressNotification(progress) = &notification
            && !self.pending.claims(&progress.params.progress_token)
        {
            self.stray("progress for no request in flight");
            return;
        }
        if let ServerNotification::CancelledNotification(cancelled) = &notification
            && let Some(id) = &cancelled.params.request_id
        {
            self.withdrawn(id);
        }
        self.dispatch.notify(notification).await;
    }

    /// A request of the server's: worked on in a task of its own, answered by a `POST`.
    async fn asked(&self, id: RequestId, request: ServerRequest) {
        let Some((reply, stop)) = self.reply.get() else {
            return;
        };
        let unasked = self.modern.load(Ordering::Relaxed)
            && matches!(
                request,
                ServerRequest::CreateMessageRequest(_)
                    | ServerRequest::ListRootsRequest(_)
                    | ServerRequest::ElicitRequest(_)
            )
            && self.pending.len() == 0;
        let refusal = if unasked {
            Some(ErrorData::invalid_params(
                "SEP-2260: server-to-client requests must be associated with an in-flight client \
                 request",
                None,
            ))
        } else {
            (self.tasks.len() >= SERVER_REQUESTS).then(|| {
                let busy = "too many requests of the server in progress";
                ErrorData::new(ErrorCode::INTERNAL_ERROR, busy, None)
            })
        };
        if let Some(refusal) = refusal {
            reply(ClientJsonRpcMessage::error(refusal, Some(id))).await;
            return;
        }
        let dispatch = self.dispatch.clone();
        let reply = reply.clone();
        // Entered before the task, so the entry goes even if the task is never polled.
        let (stop, untrack) = self.working.track(&id, stop);
        self.tasks.spawn(async move {
            let _untrack = untrack;
            let work = async {
                let answered = match request {
                    ServerRequest::PingRequest(_) => Ok(ClientResult::empty(())),
                    other => dispatch.request(other).await,
                };
                let message = match answered {
                    Ok(result) => ClientJsonRpcMessage::response(result, id),
                    Err(error) => ClientJsonRpcMessage::error(error, Some(id)),
                };
                reply(message).await;
            };
            // The stop first: a request cancelled before its task ran never reaches the host.
            tokio::select! {
                biased;
                () = stop.cancelled() => {}
                () = work => {}
            }
        });
    }

    /// The server withdrew its request `id` (invariant 5).
    fn withdrawn(&self, id: &RequestId) {
        match self.working.cancel(id) {
            true => tracing::debug!(%id, "the server cancelled its request; its work is dropped"),
            false => tracing::debug!(%id, "the server cancelled no request in progress"),
        }
    }

    fn stray(&self, what: &str) {
        let n = self.strays.fetch_add(1, Ordering::Relaxed) + 1;
        if n == 1 {
            tracing::warn!("the server sent {what}; dropped (logged once per generation)");
        } else {
            tracing::debug!(strays = n, "the server sent {what}; dropped");
        }
    }
}
