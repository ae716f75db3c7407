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

/// One reload asked, and where its answer goes.
pub(in crate::http) type Ask = (
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
