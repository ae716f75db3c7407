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
    state::{Death, Generation},
    supervisor::mailbox::Msg,
    supervisor::session::{generation::Session, handler::GenerationHandler, listen, relay::Relay},
    transport::{
        Activity,
        detect::{Failure, KindMemory},
    },
};

/// Why an attempt produced no generation.
#[derive(Debug)]
pub(in crate::supervisor) struct AttemptFailure {
    /// Cause `connect_failed`, `unauthorized` or `rejected`.
    pub(in crate::supervisor) death: Death,
    /// The wait the server asked for (HTTP 429 or 503 with `Retry-After`).
    pub(in crate::supervisor) retry_after: Option<Duration>,
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
pub(in crate::supervisor) struct Connected {
    pub(in crate::supervisor) session: Session,
    pub(in crate::supervisor) tools: Vec<Tool>,
    /// The listing's `ttlMs`: when to list again even without a change notification.
    pub(in crate::supervisor) ttl: Option<Duration>,
    /// The `subscriptions/listen` stream of a 2026-07-28 server that can change its lists.
    pub(in crate::supervisor) subscription: Option<super::super::link::Listening>,
    /// What that stream asked for.
    pub(in crate::supervisor) wanted: listen::Wanted,
    /// The protocol version the handshake negotiated.
    pub(in crate::supervisor) protocol: ProtocolVersion,
    /// How long the handshake and the listing took.
    pub(in crate::supervisor) elapsed: Duration,
}

/// What every attempt of one supervisor shares: built once in `Supervisor::start`.
#[derive(Debug, Clone)]
pub(in crate::supervisor) struct ConnectContext {
    /// The HTTP client of the remote transports (shared, so connections are pooled).
    pub(in crate::supervisor) http: reqwest::Client,
    /// The transport `auto` found; written by the remote arm of [`open`] after a handshake.
    pub(in crate::supervisor) detected: Arc<KindMemory>,
    /// The protocol era `auto` found; written after each handshake.
    pub(in crate::supervisor) era: Arc<era::EraMemory>,
    /// Progress routes and resource subscriptions, shared with the call path.
    pub(in crate::supervisor) relay: Arc<Relay>,
    /// The server's authorization (remote servers with `auth` set); shared by every generation,
    /// so a token outlives the session it was first sent on.
    pub(in crate::supervisor) auth: Option<Arc<crate::auth::Authorizer>>,
}

impl ConnectContext {
    pub(in crate::supervisor) fn new(
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
pub(in crate::supervisor) struct Attempt {
    pub(in crate::supervisor) config: Arc<ServerConfig>,
    pub(in crate::supervisor) context: ConnectContext,
    pub(in crate::supervisor) generation: Generation,
    pub(in crate::supervisor) tx: mpsc::UnboundedSender<Msg>,
    /// Cancels the attempt (the result is then an error and everything is cleaned up).
    pub(in crate::supervisor) ct: CancellationToken,
    /// Stamped by every step that gets an answer (an SSE stream's headers and `endpoint`, any
    /// message received): the supervisor tells a stuck attempt from a slow one by it. It becomes
    /// the generation's activity.
    pub(in crate::supervisor) activity: Arc<Activity>,
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
