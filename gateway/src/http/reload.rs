//! [`Reload`]: a serving gateway takes a new list of servers without a restart (the command
//! line sends one on SIGHUP, read again from `--config`).
//!
//! # Invariants
//!
//! 1. A list that does not make a gateway (the start's checks: names unique, every
//!    configuration valid; one server when transparent), that changes the `per_host` servers,
//!    or that adds a shared server while `per_host` ones are served, changes nothing; nor does
//!    a file that did not load ([`Reload::unreadable`]). Either is reported: a log line at
//!    error, the `mcp.server.resilience.reloads` counter with `outcome=refused`, the status page.
//! 2. The shared upstreams change as `gateway/src/reload.rs` says (the unchanged ones are not
//!    touched). Hosts are told `notifications/tools/list_changed` by the announcers, which
//!    tell a host only when the tools it would list changed.
//! 3. Reloads run one at a time, in the order they were asked, on a task the gateway owns.

use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{mpsc, oneshot};

use super::{hub::Hub, serve::split, status::Board};
use crate::{Mode, ProxyOptions, host::Target};
use mcp_resilient::ServerConfig;

/// What a reload did, by server name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Reloaded {
    /// Servers new in the list, started.
    pub added: Vec<String>,
    /// Servers no longer in the list, shut down.
    pub removed: Vec<String>,
    /// Servers whose configuration changed, shut down and started again.
    pub changed: Vec<String>,
    /// Servers left as they were (same generation, same host sessions).
    pub unchanged: Vec<String>,
}

/// Why a reload changed nothing (or, for [`Start`](Self::Start), stopped part way).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReloadError {
    /// The file could not be read or did not parse; the text says why.
    #[error("the configuration could not be loaded: {0}")]
    Unreadable(String),
    /// The servers do not make a gateway (the start's checks).
    #[error("the new servers do not make a gateway")]
    Invalid(#[source] Box<crate::ProxyError>),
    /// A transparent gateway serves one server; the list has another count.
    #[error("a transparent gateway serves one server; restart it to serve {0}")]
    Transparent(usize),
    /// The `per_host` servers changed, or a shared one was added beside them.
    #[error("{0}; restart the gateway for this change")]
    PerHost(&'static str),
    /// More servers than a gateway's list holds over its life.
    #[error(
        "more than {} servers over the gateway's life; restart it",
        crate::reload::MAX_PLACES
    )]
    TooMany,
    /// A new upstream's supervisor could not be started.
    #[error("could not start upstream '{server}'")]
    Start {
        /// The server's name.
        server: String,
        /// Why.
        #[source]
        source: mcp_resilient::StartError,
    },
    /// The gateway is not serving (not started, or stopped).
    #[error("the gateway is not serving")]
    NotServing,
}

type Ask = (
    Result<Vec<ServerConfig>, String>,
    oneshot::Sender<Result<Reloaded, ReloadError>>,
);

/// Asks a serving gateway to reload: give a clone to [`ServeOptions`](super::ServeOptions)'s
/// `reload`, keep one to ask with. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Reload {
    asks: mpsc::Sender<Ask>,
    taken: Arc<Mutex<Option<mpsc::Receiver<Ask>>>>,
}

impl Default for Reload {
    fn default() -> Self {
        Self::new()
    }
}

impl Reload {
    /// A handle no gateway serves yet.
    pub fn new() -> Self {
        let (asks, receiver) = mpsc::channel(4);
        Self {
            asks,
            taken: Arc::new(Mutex::new(Some(receiver))),
        }
    }

    /// Serves `servers` from now on (the module's invariants), and says what changed.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future does not cancel a reload that was handed over.
    pub async fn servers(&self, servers: Vec<ServerConfig>) -> Result<Reloaded, ReloadError> {
        self.ask(Ok(servers)).await
    }

    /// A reload whose file could not be loaded (`why`): nothing changes, and it is reported
    /// like any refused reload.
    pub async fn unreadable(&self, why: impl Into<String>) -> ReloadError {
        match self.ask(Err(why.into())).await {
            Err(error) => error,
            Ok(_) => ReloadError::NotServing,
        }
    }

    async fn ask(&self, what: Result<Vec<ServerConfig>, String>) -> Result<Reloaded, ReloadError> {
        let (answer, answered) = oneshot::channel();
        (self.asks.send((what, answer)).await).map_err(|_| ReloadError::NotServing)?;
        answered.await.unwrap_or(Err(ReloadError::NotServing))
    }

    /// The receiving end, for the one gateway that serves this handle.
    pub(in crate::http) fn take(&self) -> Option<mpsc::Receiver<Ask>> {
        self.taken
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

/// What the reload task needs.
pub(in crate::http) struct Reloader {
    pub(in crate::http) hub: Arc<Hub>,
    pub(in crate::http) board: Arc<Board>,
    pub(in crate::http) mode: Mode,
    pub(in crate::http) proxy: ProxyOptions,
    pub(in crate::http) per_host: Vec<String>,
    /// The `per_host` servers served (their configurations).
    pub(in crate::http) own: Vec<ServerConfig>,
}

impl Reloader {
    /// Answers the reloads asked on `asks`, one at a time, until every handle is dropped.
    pub(in crate::http) async fn run(self, mut asks: mpsc::Receiver<Ask>) {
        while let Some((what, answer)) = asks.recv().await {
            let outcome = match what {
                Ok(servers) => self.apply(servers).await,
                Err(why) => Err(ReloadError::Unreadable(why)),
            };
            match &outcome {
                Ok(done) => tracing::info!(
                    added = ?done.added, removed = ?done.removed, changed = ?done.changed,
                    unchanged = done.unchanged.len(), "configuration reloaded"
                ),
                Err(error) => tracing::error!(
                    error = %crate::calls::bounded(&error_chain(error), 400),
                    "configuration not reloaded; the servers are as they were"
                ),
            }
            crate::telemetry::reloaded(outcome.is_ok());
            self.board.reloaded(&outcome);
            let _ = answer.send(outcome);
        }
    }

    async fn apply(&self, servers: Vec<ServerConfig>) -> Result<Reloaded, ReloadError> {
        let transparent = self.mode == Mode::Transparent;
        if transparent && servers.len() != 1 {
            return Err(ReloadError::Transparent(servers.len()));
        }
        crate::Proxy::aggregated(servers.clone())
            .map_err(|error| ReloadError::Invalid(Box::new(error)))?;
        let (own, common) = split(servers, &self.per_host)
            .map_err(|_| ReloadError::PerHost("a per-host server is no longer in the list"))?;
        if own != self.own {
            return Err(ReloadError::PerHost("the per-host servers changed"));
        }
        let serving = self.hub.common.list();
        let adds = common
            .iter()
            .any(|c| !serving.iter().any(|u| u.name() == c.name()));
        if !own.is_empty() && adds {
            return Err(ReloadError::PerHost(
                "a shared server was added beside per-host ones",
            ));
        }
        let (hosts, mode) = (self.hub.hosts.clone(), self.mode);
        let handlers =
            |callers| crate::host::handlers(Target::Shared(hosts.clone()), callers, mode);
        let change = (self.hub.common)
            .reload(common, &self.proxy, transparent, handlers)
            .await;
        self.board.follow();
        match change {
            Ok(change) => Ok(Reloaded {
                added: change.added,
                removed: change.removed,
                changed: change.changed,
                unchanged: change.unchanged,
            }),
            Err(crate::reload::Refusal::TooManyPlaces) => Err(ReloadError::TooMany),
            Err(crate::reload::Refusal::Start(failed)) => Err(ReloadError::Start {
                server: failed.server,
                source: failed.source,
            }),
        }
    }
}

/// The error and its causes on one line.
pub(in crate::http) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
