//! The lean link: a client session of our own over a Streamable HTTP transport, in place of
//! rmcp's service loop (its channels and its task per session).
//!
//! rmcp's client runs every session as a task that owns the transport, with channels between
//! the callers and that task and a map of responders. Over Streamable HTTP none of that is
//! needed: a request's answer comes back on the request's own `POST` (its JSON body, or its
//! event stream), so the future that sent the request can read its answer itself. This link
//! does what the service loop did, on rmcp's model types:
//!
//! 1. Ids: numbered from 0 per generation, as rmcp numbers them; each request also carries a
//!    progress token equal to its id, as rmcp's requests carry one each.
//! 2. Correlation ([`pending`]): a request waits in a bounded table under its id; the answer
//!    read off the wire is handed to it, wherever it came (its `POST`, or a resumed stream).
//! 3. Progress and the server's notifications go to the generation's [`Dispatch`] in the
//!    order received, before the answer that follows them; progress for no request in flight
//!    is dropped ([`inbound`]).
//! 4. Cancellation: a caller that drops its request's future drops its `POST` (an HTTP/2
//!    stream is reset); the call path then sends `notifications/cancelled`, as before (on a
//!    2026-07-28 session the transport sends none: the dropped stream is the cancellation).
//! 5. The server's requests (sampling, elicitation, roots, ping) are answered by a `POST` of
//!    their own, each worked on in a task that ends with the transport, or when the server
//!    cancels that request ([`working`]): the host's handler future is dropped, nothing is sent.
//! 6. The handshake ([`handshake`]): `initialize` and `notifications/initialized` (a 2025
//!    session), `server/discover` with rmcp's version negotiation (a 2026-07-28 session, whose
//!    every later request carries the version and the client in its `_meta`), or under
//!    `protocol: auto` `server/discover` first. Errors keep rmcp's shapes ([`ServiceError`],
//!    [`ClientInitializeError`]), so every verdict (`crate::transport::judge`) reads them as it
//!    read rmcp's.
//! 7. A 2026-07-28 `subscriptions/listen` ([`listen`]): its handle owns its answer future and a
//!    bounded mailbox where the notifications naming it are routed.
//!
//! # Invariants
//!
//! 1. No task and no channel per session: the link is a table, a counter and the transport.
//!    Tasks live only while a server's request is worked on (and a 2025 session's standalone
//!    stream). A listen stream is read by the task awaiting its handle (the listener's).
//! 2. Everything the transport owes rmcp's session it owes the link: the ledger entry of every
//!    request (`handed` before it leaves), writes counted while in flight, activity stamped on
//!    every message.
//! 3. Once the transport stopped (closed, or a death it observed), every request fails with
//!    `TransportClosed`, and none is sent.

pub(crate) mod handshake;
// The core names its `Inbound` by this path, not the re-export below: no import circle.
pub(in crate::transport::http) mod inbound;
pub(crate) mod listen;
mod mailbox;
mod pending;
mod working;

use std::sync::{
    Arc, OnceLock,
    atomic::{AtomicI64, Ordering},
};

use rmcp::{
    ServiceError,
    model::{
        ClientJsonRpcMessage, ClientNotification, ClientRequest, GetMeta, JsonRpcMessage,
        NumberOrString, ProgressToken, RequestId, ServerPeerInfo, ServerResult,
    },
    transport::DynamicTransportError,
};

pub(crate) use inbound::{Dispatch, Inbound};

use super::{
    core::{Core, Parts, Sink},
    errors::HttpError,
    probe::{ClientMeta, DirectProbe},
};

/// The switch: the lean link runs Streamable HTTP sessions of both eras (and `auto`'s) unless
/// the environment sets `MCP_RESILIENT_LEAN_LINK=0` (read once per process), which puts them all
/// back on rmcp's session. Internal: for comparing the two, and a way back should the lean link
/// misbehave.
pub(crate) fn enabled() -> bool {
    static ENABLED: OnceLock<bool> = OnceLock::new();
    *ENABLED.get_or_init(|| std::env::var("MCP_RESILIENT_LEAN_LINK").map_or(true, |v| v != "0"))
}

/// The most requests of one generation waiting for their answers at once; one more waits for
/// room (see [`pending`]).
const PENDING: usize = 4096;

/// One generation's client session over Streamable HTTP (see the module docs).
pub(crate) struct Link {
    core: Arc<Core>,
    inbound: Arc<Inbound>,
    /// The next request id.
    next: AtomicI64,
    /// What the server said of itself in the handshake.
    info: OnceLock<Arc<ServerPeerInfo>>,
    /// Who the client is, on every request of a 2026-07-28 session (set by its handshake).
    modern: OnceLock<handshake::Stamp>,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("url", &self.core.url.as_str())
            .field("pending", &self.inbound.pending.len())
            .field("closed", &self.core.stop.is_cancelled())
            .finish()
    }
}

/// One request about to leave, and then its answer.
pub(crate) struct Outgoing<'a> {
    link: &'a Link,
    id: RequestId,
    request: ClientRequest,
}

impl Link {
    pub(super) fn new(parts: Parts, dispatch: Arc<dyn Dispatch>) -> Link {
        let inbound = Arc::new(Inbound::new(dispatch, parts.activity.clone(), PENDING));
        let core = Arc::new(Core::new(parts, Sink::Link(inbound.clone())));
        let weak = Arc::downgrade(&core);
        let reply: inbound::Reply = Arc::new(move |message| {
            let core = weak.upgrade();
            Box::pin(async move {
                if let Some(core) = core {
                    let _ = core.send(message).await;
                }
            })
        });
        inbound.bind(reply, core.stop.clone());
        Link {
            core,
            inbound,
            next: AtomicI64::new(0),
            info: OnceLock::new(),
            modern: OnceLock::new(),
        }
    }

    /// The generation's probe that goes around the link ([`super::probe`]).
    pub(crate) fn direct_probe(&self, meta: ClientMeta) -> DirectProbe {
        DirectProbe::new(&self.core, meta)
    }

    /// What the server said of itself in the handshake.
    pub(crate) fn peer_info(&self) -> Option<Arc<ServerPeerInfo>> {
        self.info.get().cloned()
    }

    /// True once the transport stopped.
    pub(crate) fn is_closed(&self) -> bool {
        self.core.stop.is_cancelled()
    }

    /// Resolves once the transport stopped.
    pub(crate) async fn ended(&self) {
        self.core.stop.cancelled().await;
    }

    /// Ends the session in good order: the transport closes (its `DELETE` bounded), and the
    /// server's requests still worked on end with it.
    pub(crate) async fn close(&self) {
        self.core.close().await;
        self.inbound.tasks.close();
        self.inbound.tasks.wait().await;
    }

    /// Numbers `request` and gives it its progress token (on a 2026-07-28 session, its stamp
    /// too); nothing is sent yet.
    pub(crate) fn start(&self, mut request: ClientRequest) -> Outgoing<'_> {
        let id = self.next_id();
        let meta = request.get_meta_mut();
        self.modern.get().inspect(|stamp| stamp.on(meta));
        meta.set_progress_token(ProgressToken(id.clone()));
        Outgoing {
            link: self,
            id,
            request,
        }
    }

    /// Sends `request` and waits for its answer.
    pub(crate) async fn request(
        &self,
        request: ClientRequest,
    ) -> Result<ServerResult, ServiceError> {
        self.start(request).answer().await
    }

    /// Sends a notification.
    pub(crate) async fn notify(
        &self,
        notification: ClientNotification,
    ) -> Result<(), ServiceError> {
        if self.is_closed() {
            return Err(ServiceError::TransportClosed);
        }
        let _writing = Writing::new(&self.core);
        let message = ClientJsonRpcMessage::notification(notification);
        self.core
            .clone()
            .send(message)
            .await
            .map_err(transport_send)
    }

    fn next_id(&self) -> RequestId {
        NumberOrString::Number(self.next.fetch_add(1, Ordering::Relaxed))
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.core.stop.cancel();
    }
}

impl Outgoing<'_> {
    /// The request's id.
    pub(crate) fn id(&self) -> &RequestId {
        &self.id
    }

    /// The progress token the request carries.
    pub(crate) fn progress_token(&self) -> ProgressToken {
        ProgressToken(self.id.clone())
    }

    /// Sends the request and waits for its answer.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future gives the request up: its `POST` is dropped, its id leaves the
    /// table, and an answer that comes later is dropped as stray.
    pub(crate) async fn answer(self) -> Result<ServerResult, ServiceError> {
        let Outgoing { link, id, request } = self;
        let core = &link.core;
        if core.stop.is_cancelled() {
            return Err(ServiceError::TransportClosed);
        }
        let Some(mut entry) = link.inbound.pending.enter(id.clone()).await else {
            // Ids are never reused while one waits; this is a bug, not the server's doing.
            return Err(ServiceError::UnexpectedResponse);
        };
        core.activity.ledger.handed(&id, request.method());
        let writing = Writing::new(core);
        // Boxed: the send holds its whole answer's reading.
        let sent = Box::pin(
            core.clone()
                .send(ClientJsonRpcMessage::request(request, id)),
        )
        .await;
        drop(writing);
        sent.map_err(transport_send)?;
        let answer = match entry.take() {
            Some(answer) => answer,
            // Accepted with no answer yet: it comes on another stream, or never.
            None => tokio::select! {
                answer = entry.answered() => answer.ok_or(ServiceError::TransportClosed)?,
                () = core.stop.cancelled() => return Err(ServiceError::TransportClosed),
            },
        };
        match *answer {
            JsonRpcMessage::Response(response) => Ok(response.result),
            JsonRpcMessage::Error(error) => Err(ServiceError::McpError(error.error)),
            _ => Err(ServiceError::UnexpectedResponse),
        }
    }
}

/// A transport error as rmcp hands it over (named as rmcp names the transport's).
fn transport_send(error: HttpError) -> ServiceError {
    ServiceError::TransportSend(dynamic(error))
}

/// `error` as rmcp wraps a transport's error.
fn dynamic(error: HttpError) -> DynamicTransportError {
    DynamicTransportError::from_parts(
        TRANSPORT_NAME,
        std::any::TypeId::of::<Link>(),
        Box::new(error),
    )
}

/// The name rmcp gives errors of our Streamable HTTP transport (`HttpTransport::name`).
const TRANSPORT_NAME: &str = "StreamableHttp";

/// One write in flight, counted as `Observed` counts rmcp's (invariant 2).
struct Writing(Arc<crate::transport::Activity>);

impl Writing {
    fn new(core: &Core) -> Self {
        core.activity.send_started();
        Writing(core.activity.clone())
    }
}

impl Drop for Writing {
    fn drop(&mut self) {
        self.0.send_finished();
    }
}
