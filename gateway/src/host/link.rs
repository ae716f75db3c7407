//! One host as the core reaches it, whatever its front (stdio or HTTP): its outbox for what is
//! told to it, its peer for what is asked of it, and what it declared it answers.

// Sampling, roots and logging are deprecated by SEP-2577, but hosts and servers of the session
// era use them, and the proxy passes them on.
#![allow(deprecated)]

use std::{
    sync::{
        Arc, OnceLock,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use rmcp::{
    Peer, RoleServer,
    model::{
        ClientResult, CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult,
        ElicitRequest, ElicitRequestParams, ElicitResult, ErrorData, InitializeRequestParams,
        ListRootsRequest, ListRootsResult, LoggingLevel, RequestId, ServerRequest,
    },
};

use super::asking::{Asker, extensions, host_error, unexpected};
use crate::{
    outbox::Outbox,
    shares::HostId,
    state::{HostStore, MemoryHostStore},
};
use mcp_resilient::host::Ask;

/// How long a host may take to answer what a server asks it (a person may be answering).
const ASK_TIMEOUT: Duration = Duration::from_secs(600);

/// One host session, as the upstreams' handlers reach it. Its state (revision, capabilities,
/// client info, log level, subscriptions) is kept in a [`HostStore`] under the host's key; what
/// is held here is what lives only in this process.
#[derive(Debug)]
pub(crate) struct HostLink {
    /// Everything told to the host goes through it.
    pub(crate) outbox: Outbox,
    /// Set when the host initializes.
    peer: OnceLock<Peer<RoleServer>>,
    /// Where the host's state is kept.
    store: Arc<dyn HostStore>,
    /// The host's key in this process, until (and unless) it initializes with a session id.
    local: String,
    /// The host's session id (HTTP), set when it initializes; its key from then on.
    session_id: OnceLock<String>,
    /// `pipe` (stdio) or `tcp` (HTTP), for telemetry.
    pub(crate) transport: &'static str,
    /// Counted among the open host sessions from the host's `initialize` to the link's drop.
    session: OnceLock<crate::telemetry::HostSession>,
    /// What asks the host when its front has no rmcp peer (the own HTTP front).
    asker: OnceLock<Arc<dyn Asker>>,
}

impl HostLink {
    /// A host reached through `outbox`, over `transport` (`pipe`, `tcp`), whose state is kept
    /// in a store of its own.
    pub(crate) fn new(outbox: Outbox, transport: &'static str) -> Self {
        Self::with_store(outbox, transport, Arc::new(MemoryHostStore::new()))
    }

    /// A host whose state is kept in `store`.
    pub(crate) fn with_store(
        outbox: Outbox,
        transport: &'static str,
        store: Arc<dyn HostStore>,
    ) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Self {
            outbox,
            transport,
            session: OnceLock::new(),
            peer: OnceLock::new(),
            store,
            local: format!("local-{}", NEXT.fetch_add(1, Ordering::Relaxed)),
            session_id: OnceLock::new(),
            asker: OnceLock::new(),
        }
    }

    /// From now on the host is asked through `asker` (once; a later call does nothing).
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub(crate) fn asked_through(&self, asker: Arc<dyn Asker>) {
        let _ = self.asker.set(asker);
    }

    /// The host's key in the store.
    fn key(&self) -> &str {
        self.session_id.get().map_or(&self.local, String::as_str)
    }

    /// The host initialized: this is how it is asked; its revision, capabilities and client
    /// info are kept, under `session_id` when it has one (what it set before moves there).
    pub(crate) fn initialized(
        &self,
        peer: Peer<RoleServer>,
        request: &InitializeRequestParams,
        session_id: Option<String>,
    ) {
        let _ = self.peer.set(peer);
        if let Some(id) = session_id {
            let before = self.store.remove(&self.local);
            if self.session_id.set(id).is_ok()
                && let Some(before) = before
            {
                self.store.change(self.key(), |state| *state = before);
            }
        }
        let protocol = request.protocol_version.as_str();
        self.store.change(self.key(), |state| {
            state.protocol = Some(protocol.to_owned());
            state.capabilities = request.capabilities.clone();
            state.client = Some(request.client_info.clone());
        });
        let _ = self.session.set(crate::telemetry::HostSession::open(
            self.transport,
            protocol,
        ));
    }

    /// The revision the host initialized with, if it did.
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub(crate) fn protocol(&self) -> Option<String> {
        self.store
            .read(self.key(), |state| state.protocol.clone())
            .flatten()
    }

    /// Whether the host initialized (a session); a 2026-07-28 host never does.
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub(crate) fn is_initialized(&self) -> bool {
        self.peer.get().is_some()
    }

    /// Whether the host declared it answers `ask`.
    pub(in crate::host) fn answers(&self, ask: Ask) -> bool {
        self.store
            .read(self.key(), |state| {
                let capabilities = &state.capabilities;
                match ask {
                    Ask::Elicitation => capabilities.elicitation.is_some(),
                    Ask::Sampling => capabilities.sampling.is_some(),
                    Ask::Roots => capabilities.roots.is_some(),
                }
            })
            .unwrap_or(false)
    }

    pub(crate) fn set_level(&self, level: LoggingLevel) {
        self.store
            .change(self.key(), |state| state.level = Some(level));
    }

    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub(crate) fn level(&self) -> Option<LoggingLevel> {
        self.store.read(self.key(), |state| state.level).flatten()
    }

    /// This host, for the upstreams' tables of who holds what.
    pub(crate) fn id(&self) -> HostId {
        self as *const Self as HostId
    }

    /// Adds a subscription to `uri` at `server`; true if it is new.
    pub(crate) fn subscribe(&self, uri: &str, server: &str) -> bool {
        self.store
            .change(self.key(), |state| {
                state
                    .subscriptions
                    .insert(uri.to_owned(), server.to_owned())
                    .is_none()
            })
            .unwrap_or(false)
    }

    /// Removes the subscription to `uri`; true if there was one.
    pub(crate) fn unsubscribe(&self, uri: &str) -> bool {
        self.store
            .change(self.key(), |state| {
                state.subscriptions.remove(uri).is_some()
            })
            .unwrap_or(false)
    }

    /// The session ends here: its state leaves this process's store (a shared store keeps its
    /// record for a replica that may be asked for the session), and its subscriptions, URI and
    /// server, are handed over to be given back.
    pub(crate) fn take_subscriptions(&self) -> Vec<(String, Arc<str>)> {
        self.store
            .remove(self.key())
            .map(|state| state.subscriptions)
            .unwrap_or_default()
            .into_iter()
            .map(|(uri, server)| (uri, Arc::from(server)))
            .collect()
    }

    /// Every subscription the host holds: URI and server.
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub(crate) fn subscriptions(&self) -> Vec<(String, String)> {
        self.store
            .read(self.key(), |state| {
                state.subscriptions.clone().into_iter().collect()
            })
            .unwrap_or_default()
    }

    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub(crate) fn subscribed(&self, uri: &str) -> bool {
        self.store
            .read(self.key(), |state| state.subscriptions.contains_key(uri))
            .unwrap_or(false)
    }

    /// Asks the host an elicitation; `origin` is its request the upstream serves, if known
    /// (over HTTP the question then rides that request's stream).
    pub(in crate::host) async fn elicit(
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
    pub(in crate::host) async fn sample(
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
    pub(in crate::host) async fn roots(
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
        let answer = match self.asker.get() {
            Some(asker) => tokio::time::timeout(ASK_TIMEOUT, asker.ask(request)).await,
            None => (tokio::time::timeout(ASK_TIMEOUT, peer.send_request(request)).await)
                .map(|answer| answer.map_err(host_error)),
        };
        answer.unwrap_or_else(|_| {
            Err(ErrorData::internal_error(
                format!("the host did not answer within {}s", ASK_TIMEOUT.as_secs()),
                None,
            ))
        })
    }
}

impl Drop for HostLink {
    /// The host is gone: its state goes with it (invariant 1 of the store).
    fn drop(&mut self) {
        self.store.remove(self.key());
    }
}
