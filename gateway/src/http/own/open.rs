//! A session's opening: a host's `initialize`, or a session held elsewhere taken over from the
//! host-session store and rebuilt here from what its host said in its `initialize`.

use std::sync::{Arc, PoisonError};

use tokio::sync::OwnedMutexGuard;

use axum::{
    http::{StatusCode, request::Parts},
    response::Response,
};
use rmcp::{
    Peer, RoleServer, ServerHandler,
    model::{
        ClientJsonRpcMessage, ClientRequest, GetExtensions, GetMeta, InitializeRequest,
        InitializeRequestParams, JsonRpcRequest, ProtocolVersion, RequestId, ServerJsonRpcMessage,
    },
    service::RequestContext,
};

use super::{
    Own,
    answer::{dispatch, json, message},
    table::Session,
};
use crate::http::{refusal::refuse, restore, sessions::SessionKey};

/// A new session's `initialize`: answered with its `Mcp-Session-Id` once the store shares it.
pub(super) async fn initialize(
    own: &Arc<Own>,
    parts: Parts,
    request: JsonRpcRequest<ClientRequest>,
) -> Response {
    let id = new_id();
    let peer = match &request.request {
        ClientRequest::InitializeRequest(asked) => own.peer_for(&asked.params.protocol_version),
        _ => dead_peer(),
    };
    let session = Session::new((own.make)(own.hooks.clone()), peer);
    super::asks::ask_through(&session);
    let answer = open(&session, &id, parts, request.request, request.id).await;
    if matches!(answer, ServerJsonRpcMessage::Response(_)) {
        own.store.share(&id).await;
        own.table.insert(&id, session);
        json(&answer, Some(&id))
    } else {
        own.close(&id);
        json(&answer, None)
    }
}

/// Runs `initialize` (the host's, or one replayed from the store) for session `id`.
async fn open(
    session: &Arc<Session>,
    id: &str,
    parts: Parts,
    mut request: ClientRequest,
    request_id: RequestId,
) -> ServerJsonRpcMessage {
    let mut context = RequestContext::new(request_id.clone(), session.peer.clone());
    context.meta = std::mem::take(request.get_meta_mut());
    context.extensions = std::mem::take(request.extensions_mut());
    context.extensions.insert(SessionKey(id.to_owned()));
    context.extensions.insert(parts);
    message(
        dispatch(&session.handler, request, context).await,
        request_id,
    )
}

/// A session a request names, found.
pub(super) enum Found {
    /// In the table.
    Here(Arc<Session>),
    /// Claimed from the store for this process just now: to be rebuilt here (boxed: the
    /// common case is the other).
    Claimed(Box<Claimed>),
}

/// A session claimed from the store, not rebuilt yet (its upstreams not started, not in the
/// table); no other request of this process takes a session over until it is.
pub(super) struct Claimed {
    /// The session it becomes (its logs already usable: a response may open on it).
    pub(super) session: Arc<Session>,
    params: InitializeRequestParams,
    _one_at_a_time: OwnedMutexGuard<()>,
}

impl Own {
    /// Session `id`, in the table or taken over from the store and rebuilt here.
    pub(super) async fn session(&self, id: &str, parts: &Parts) -> Result<Arc<Session>, Response> {
        match self.find(id).await? {
            Found::Here(session) => Ok(session),
            Found::Claimed(claimed) => claimed.rebuild(self, id, parts).await,
        }
    }

    /// Session `id`: in the table, or claimed from the store (invariant 1); else the refusal
    /// (`404`, or `503` with `Retry-After` when the store cannot tell: the host keeps its
    /// session, and nothing ran).
    pub(super) async fn find(&self, id: &str) -> Result<Found, Response> {
        if let Some(session) = self.table.get(id) {
            if self.store.holds(id) {
                return Ok(Found::Here(session));
            }
            tracing::info!("a host session claimed by another replica is let go here");
            self.close(id);
        }
        let one_at_a_time = self.restoring.clone().lock_owned().await;
        if let Some(session) = self.table.get(id) {
            return Ok(Found::Here(session));
        }
        let not_found = || refuse(StatusCode::NOT_FOUND, "no such session");
        let state = match self.store.claim(id).await {
            Ok(Some(state)) => state,
            Ok(None) => return Err(not_found()),
            Err(error) => {
                // Nothing ran: 503 and Retry-After, so that a balancer may try another replica.
                tracing::warn!(%error, "the session store could not tell whether it holds a session");
                let message = "the session store could not be read; ask again";
                let mut refused = refuse(StatusCode::SERVICE_UNAVAILABLE, message);
                let again = axum::http::HeaderValue::from_static("1");
                (refused.headers_mut()).insert(axum::http::header::RETRY_AFTER, again);
                return Err(refused);
            }
        };
        let Some(params) = restore::replayable(&*self.store, id, state) else {
            return Err(not_found());
        };
        tracing::info!("a host session held elsewhere is served here from now on");
        let peer = self.peer_for(&params.protocol_version);
        let session = Session::new((self.make)(self.hooks.clone()), peer);
        super::asks::ask_through(&session);
        Ok(Found::Claimed(Box::new(Claimed {
            session,
            params,
            _one_at_a_time: one_at_a_time,
        })))
    }
}

impl Claimed {
    /// The session rebuilt from what its host said in its `initialize` (its upstreams started
    /// again, what the host had set up on them renewed) and put in the table; `404` if that
    /// failed.
    pub(super) async fn rebuild(
        self: Box<Self>,
        own: &Own,
        id: &str,
        parts: &Parts,
    ) -> Result<Arc<Session>, Response> {
        let Self {
            session, params, ..
        } = *self;
        let replay = ClientRequest::InitializeRequest(InitializeRequest::new(params));
        let answer = open(&session, id, parts.clone(), replay, RequestId::Number(0)).await;
        if !matches!(answer, ServerJsonRpcMessage::Response(_)) {
            own.close(id);
            return Err(refuse(StatusCode::NOT_FOUND, "no such session"));
        }
        // What the host had set up on the upstreams, again; and its `initialized`, long ago.
        session.handler.renew();
        session.handler.shared.link.outbox.open();
        own.table.insert(id, session.clone());
        Ok(session)
    }
}

impl Own {
    /// The peer rmcp's dispatch is given for a session whose host asked for `version` in its
    /// `initialize`: one per known revision, shared by its sessions (rmcp reads the revision
    /// from it, and nothing else of it is read: the host's capabilities and client info are
    /// kept per session in the host-session store); a session of its own for any other.
    fn peer_for(&self, version: &ProtocolVersion) -> Peer<RoleServer> {
        if !ProtocolVersion::KNOWN_VERSIONS.contains(version) {
            return dead_peer();
        }
        let mut peers = self.peers.lock().unwrap_or_else(PoisonError::into_inner);
        let peer = peers
            .entry(version.as_str().to_owned())
            .or_insert_with(dead_peer);
        peer.clone()
    }
}

/// A session id: 128 random bits, in hex.
fn new_id() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// A peer for rmcp's dispatch, whose service has already ended: the host's revision is read
/// from it; nothing sent through it goes anywhere (the host is asked through `asks.rs`).
fn dead_peer() -> Peer<RoleServer> {
    struct Nobody;
    impl ServerHandler for Nobody {}
    let ended = rmcp::service::serve_directly::<RoleServer, _, _, _, _>(
        Nobody,
        (
            futures::sink::drain::<ServerJsonRpcMessage>(),
            futures::stream::empty::<ClientJsonRpcMessage>(),
        ),
        None,
    );
    ended.peer().clone()
}
