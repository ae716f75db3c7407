//! The task that answers a gateway's reloads (the invariants are [`Reload`](super::Reload)'s,
//! `gateway/src/http/reload.rs`): checks the new servers, hands the shared ones to the hub's
//! upstreams (`gateway/src/reload.rs`), and reports the outcome (log, metric, status page).

use std::sync::Arc;

use tokio::sync::mpsc;

use super::{
    ReloadError, Reloaded,
    hub::Hub,
    maker::split,
    reload::{Ask, error_chain},
    status::Board,
};
use crate::{Mode, ProxyOptions, host::Target};
use mcp_resilient::ServerConfig;

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
