//! One host as the core reaches it, whatever its front (stdio or HTTP): its outbox for what is
//! told to it, its peer for what is asked of it, and what it declared it answers.

// Sampling, roots and logging are deprecated by SEP-2577, but hosts and servers of the session
// era use them, and the proxy passes them on.
#![allow(deprecated)]

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, OnceLock, PoisonError},
    time::Duration,
};

use rmcp::{
    Peer, RoleServer, ServiceError,
    model::{
        ClientCapabilities, ClientResult, CreateMessageRequest, CreateMessageRequestParams,
        CreateMessageResult, ElicitRequest, ElicitRequestParams, ElicitResult, ErrorData,
        Extensions, ListRootsRequest, ListRootsResult, LoggingLevel, RequestId, ServerRequest,
    },
    service::OriginatingRequestId,
};

use crate::{
    host::Ask,
    proxy::{outbox::Outbox, shares::HostId},
};

/// How long a host may take to answer what a server asks it (a person may be answering).
const ASK_TIMEOUT: Duration = Duration::from_secs(600);

/// One host session, as the upstreams' handlers reach it.
#[derive(Debug)]
pub(crate) struct HostLink {
    /// Everything told to the host goes through it.
    pub(crate) outbox: Outbox,
    /// Set when the host initializes.
    peer: OnceLock<Peer<RoleServer>>,
    /// What the host declared it answers; set when it initializes.
    capabilities: OnceLock<ClientCapabilities>,
    /// The log level the host set last (a shared upstream's log messages are filtered by it).
    level: Mutex<Option<LoggingLevel>>,
    /// `pipe` (stdio) or `tcp` (HTTP), for telemetry.
    pub(crate) transport: &'static str,
    /// Counted among the open host sessions from the host's `initialize` to the link's drop.
    session: OnceLock<crate::telemetry::HostSession>,
    /// The resources the host subscribed to, with the server that has each (a shared
    /// upstream's updates go to subscribers; a session's subscriptions are given back at its
    /// end).
    subscriptions: Mutex<HashMap<String, Arc<str>>>,
}

impl HostLink {
    /// A host reached through `outbox`, over `transport` (`pipe`, `tcp`).
    pub(crate) fn new(outbox: Outbox, transport: &'static str) -> Self {
        Self {
            outbox,
            transport,
            session: OnceLock::new(),
            peer: OnceLock::new(),
            capabilities: OnceLock::new(),
            level: Mutex::new(None),
            subscriptions: Mutex::new(HashMap::new()),
        }
    }

    /// The host initialized: this is how it is asked, and what it answers.
    pub(crate) fn initialized(
        &self,
        peer: Peer<RoleServer>,
        capabilities: ClientCapabilities,
        protocol: &str,
    ) {
        let _ = self.peer.set(peer);
        let _ = self.capabilities.set(capabilities);
        let _ = self.session.set(crate::telemetry::HostSession::open(
            self.transport,
            protocol,
        ));
    }

    /// Whether the host initialized (a session); a 2026-07-28 host never does.
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub(crate) fn is_initialized(&self) -> bool {
        self.peer.get().is_some()
    }

    /// Whether the host declared it answers `ask`.
    pub(crate) fn answers(&self, ask: Ask) -> bool {
        let Some(capabilities) = self.capabilities.get() else {
            return false;
        };
        match ask {
            Ask::Elicitation => capabilities.elicitation.is_some(),
            Ask::Sampling => capabilities.sampling.is_some(),
            Ask::Roots => capabilities.roots.is_some(),
        }
    }

    pub(crate) fn set_level(&self, level: LoggingLevel) {
        *self.level.lock().unwrap_or_else(PoisonError::into_inner) = Some(level);
    }

    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub(crate) fn level(&self) -> Option<LoggingLevel> {
        *self.level.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// This host, for the upstreams' tables of who holds what.
    pub(crate) fn id(&self) -> HostId {
        self as *const Self as HostId
    }

    /// Adds a subscription to `uri` at `server`; true if it is new.
    pub(crate) fn subscribe(&self, uri: &str, server: &str) -> bool {
        let mut subscriptions = self
            .subscriptions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        subscriptions
            .insert(uri.to_owned(), Arc::from(server))
            .is_none()
    }

    /// Removes the subscription to `uri`; true if there was one.
    pub(crate) fn unsubscribe(&self, uri: &str) -> bool {
        let mut subscriptions = self
            .subscriptions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        subscriptions.remove(uri).is_some()
    }

    /// Takes every subscription (the session ends): URI and server.
    pub(crate) fn take_subscriptions(&self) -> Vec<(String, Arc<str>)> {
        let mut subscriptions = self
            .subscriptions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        subscriptions.drain().collect()
    }

    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub(crate) fn subscribed(&self, uri: &str) -> bool {
        self.subscriptions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(uri)
    }

    /// Asks the host an elicitation; `origin` is its request the upstream serves, if known
    /// (over HTTP the question then rides that request's stream).
    pub(crate) async fn elicit(
        &self,
        params: ElicitRequestParams,
        origin: Option<RequestId>,
    ) -> Result<ElicitResult, ErrorData> {
        let mut request = ElicitRequest::new(params);
        request.extensions = extensions(origin);
        match self.ask(ServerRequest::ElicitRequest(request)).await? {
            ClientResult::ElicitResult(result) => Ok(result),
            _ => Err(unexpected()),
        }
    }

    /// Asks the host for a model completion.
    pub(crate) async fn sample(
        &self,
        params: CreateMessageRequestParams,
        origin: Option<RequestId>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let mut request = CreateMessageRequest::new(params);
        request.extensions = extensions(origin);
        match self
            .ask(ServerRequest::CreateMessageRequest(request))
            .await?
        {
            ClientResult::CreateMessageResult(result) => Ok(*result),
            _ => Err(unexpected()),
        }
    }

    /// Asks the host for its roots.
    pub(crate) async fn roots(
        &self,
        origin: Option<RequestId>,
    ) -> Result<ListRootsResult, ErrorData> {
        let request = ListRootsRequest {
            method: Default::default(),
            extensions: extensions(origin),
        };
        match self.ask(ServerRequest::ListRootsRequest(request)).await? {
            ClientResult::ListRootsResult(result) => Ok(result),
            _ => Err(unexpected()),
        }
    }

    async fn ask(&self, request: ServerRequest) -> Result<ClientResult, ErrorData> {
        let peer = self.peer.get().ok_or_else(|| {
            ErrorData::internal_error("the host has not initialized; it cannot be asked", None)
        })?;
        match tokio::time::timeout(ASK_TIMEOUT, peer.send_request(request)).await {
            Ok(answer) => answer.map_err(host_error),
            Err(_) => Err(ErrorData::internal_error(
                format!("the host did not answer within {}s", ASK_TIMEOUT.as_secs()),
                None,
            )),
        }
    }
}

fn extensions(origin: Option<RequestId>) -> Extensions {
    let mut extensions = Extensions::new();
    if let Some(origin) = origin {
        extensions.insert(OriginatingRequestId(origin));
    }
    extensions
}

fn unexpected() -> ErrorData {
    ErrorData::internal_error("the host answered with the wrong kind of result", None)
}

/// The host's error as the upstream should see it: the host's own JSON-RPC error, or an
/// internal error that says the host could not be asked.
fn host_error(error: ServiceError) -> ErrorData {
    match error {
        ServiceError::McpError(error) => error,
        other => ErrorData::internal_error(format!("the host did not answer: {other}"), None),
    }
}
