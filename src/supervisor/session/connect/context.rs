//! What one attempt is given ([`Attempt`], with the [`ConnectContext`] every attempt of a
//! supervisor shares) and what it hands back: a [`Connected`] generation or an
//! [`AttemptFailure`].

use std::{sync::Arc, time::Duration};

use rmcp::model::{ProtocolVersion, Tool};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::era;
use crate::{
    config::ServerConfig,
    supervisor::mailbox::Msg,
    supervisor::session::{generation::Session, handler::GenerationHandler, listen, relay::Relay},
    state::{Death, Generation},
    transport::{
        Activity,
        detect::{Failure, KindMemory},
    }};

/// Why an attempt produced no generation.
#[derive(Debug)]
pub(crate) struct AttemptFailure {
    /// Cause `connect_failed`, `unauthorized` or `rejected`.
    pub(crate) death: Death,
    /// The wait the server asked for (HTTP 429 or 503 with `Retry-After`).
    pub(crate) retry_after: Option<Duration>,
}

impl From<Death> for AttemptFailure {
    fn from(death: Death) -> Self {
        AttemptFailure {
            death,
            retry_after: None,
        }
    }
}

impl From<Failure> for AttemptFailure {
    fn from(failure: Failure) -> Self {
        AttemptFailure {
            death: failure.death,
            retry_after: failure.retry_after,
        }
    }
}

/// A generation that completed its handshake and its first tool listing.
pub(crate) struct Connected {
    pub(crate) session: Session,
    pub(crate) tools: Vec<Tool>,
    /// The listing's `ttlMs`: when to list again even without a change notification.
    pub(crate) ttl: Option<Duration>,
    /// The `subscriptions/listen` stream of a 2026-07-28 server that can change its lists.
    pub(crate) subscription: Option<rmcp::service::Subscription>,
    /// What that stream asked for.
    pub(crate) wanted: listen::Wanted,
    /// The protocol version the handshake negotiated.
    pub(crate) protocol: ProtocolVersion,
    /// How long the handshake and the listing took.
    pub(crate) elapsed: Duration,
}

/// What every attempt of one supervisor shares: built once in `Supervisor::start`.
#[derive(Debug, Clone)]
pub(crate) struct ConnectContext {
    /// The HTTP client of the remote transports (shared, so connections are pooled).
    pub(crate) http: reqwest::Client,
    /// The transport `auto` found; written by the remote arm of [`open`] after a handshake.
    pub(crate) detected: Arc<KindMemory>,
    /// The protocol era `auto` found; written after each handshake.
    pub(crate) era: Arc<era::EraMemory>,
    /// Progress routes and resource subscriptions, shared with the call path.
    pub(crate) relay: Arc<Relay>,
    /// The server's authorization (remote servers with `auth` set); shared by every generation,
    /// so a token outlives the session it was first sent on.
    pub(crate) auth: Option<Arc<crate::auth::Authorizer>>,
}

impl ConnectContext {
    pub(crate) fn new(
        http: reqwest::Client,
        relay: Arc<Relay>,
        auth: Option<Arc<crate::auth::Authorizer>>,
    ) -> Self {
        ConnectContext {
            http,
            detected: Arc::default(),
            era: Arc::default(),
            relay,
            auth,
        }
    }
}

/// Everything one attempt works with, passed down once.
pub(crate) struct Attempt {
    pub(crate) config: Arc<ServerConfig>,
    pub(crate) context: ConnectContext,
    pub(crate) generation: Generation,
    pub(crate) tx: mpsc::UnboundedSender<Msg>,
    /// Cancels the attempt (the result is then an error and everything is cleaned up).
    pub(crate) ct: CancellationToken,
    /// Stamped by every step that gets an answer (an SSE stream's headers and `endpoint`, any
    /// message received): the supervisor tells a stuck attempt from a slow one by it. It becomes
    /// the generation's activity.
    pub(crate) activity: Arc<Activity>,
}

impl Attempt {
    /// The rmcp client handler of this attempt's generation, offering `version` to `initialize`.
    pub(super) fn handler(&self, version: ProtocolVersion) -> GenerationHandler {
        GenerationHandler::new(
            self.generation,
            Arc::from(self.config.name.as_str()),
            self.tx.clone(),
            self.config.handlers.clone(),
            self.context.relay.clone(),
            version,
        )
    }
}
