//! What one host session's handler and tasks share: the upstreams it sees (its own, started by
//! its `initialize` and stopped at its end, and, behind the gateway, the ones every session
//! shares), the tools it is shown, the routes from its names to an upstream, and the host itself
//! ([`HostLink`]).

use std::{
    borrow::Cow,
    sync::{Arc, Mutex, OnceLock, PoisonError},
};

use rmcp::{
    ErrorData,
    model::{InitializeResult, Tool},
};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use mcp_resilient::{ServerConfig, ToolRegistry, registry};

use super::{
    Mode, ProxyOptions, announce, forward::Routes, host::HostLink, upstream::Upstream,
    upstreams::Upstreams,
};

/// How long a session's end waits for a shared upstream to take back one subscription.
const GIVE_BACK: std::time::Duration = std::time::Duration::from_secs(1);

/// What one host session's handler and tasks share.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(super) mode: Mode,
    pub(super) options: ProxyOptions,
    /// The upstreams every host session shares (the gateway's `shared` servers), if any.
    pub(super) common: Option<Arc<Upstreams>>,
    /// This session's own upstreams' configurations until `initialize` starts them.
    pub(super) pending: Mutex<Option<Vec<ServerConfig>>>,
    /// This session's own upstreams, once started.
    pub(super) own: OnceLock<Upstreams>,
    /// The `initialize` answer (before the protocol version is negotiated).
    pub(super) info: OnceLock<InitializeResult>,
    pub(super) routes: Routes,
    /// The host, as the upstreams reach it: its outbox, its peer, what it answers.
    pub(super) link: Arc<HostLink>,
    /// Set once a host that does not initialize (2026-07-28 on stdio) has had this session's
    /// own upstreams started at its first request.
    pub(super) inline: tokio::sync::OnceCell<()>,
    /// Ends the announcer.
    pub(super) stop: CancellationToken,
    pub(super) tasks: Mutex<Vec<JoinHandle<()>>>,
}

impl Shared {
    /// A host session with `own` upstreams to start at its `initialize`, beside the `common`
    /// ones (already started), reaching the host through `link`.
    pub(crate) fn new(
        mode: Mode,
        own: Vec<ServerConfig>,
        common: Option<Arc<Upstreams>>,
        options: ProxyOptions,
        link: Arc<HostLink>,
    ) -> Self {
        Self {
            mode,
            options,
            common,
            pending: Mutex::new(Some(own)),
            own: OnceLock::new(),
            info: OnceLock::new(),
            routes: Routes::default(),
            link,
            inline: tokio::sync::OnceCell::new(),
            stop: CancellationToken::new(),
            tasks: Mutex::new(Vec::new()),
        }
    }

    /// Every upstream the host sees, the common ones first (as a reload left them), then its
    /// own once started: before it initialized (or when it never does, as a 2026-07-28 host),
    /// the common ones. A reload replaces a common one in its place and adds new ones at the
    /// end, and adds none while sessions have their own, so a place stays its upstream's.
    pub(super) fn upstreams(&self) -> Arc<Vec<Arc<Upstream>>> {
        let common = (self.common.as_ref()).map(|c| c.list());
        match (common, self.own.get()) {
            (Some(common), None) => common,
            (None, None) => Arc::default(),
            (common, Some(own)) => {
                let common = common.unwrap_or_default();
                Arc::new(common.iter().chain(own.list().iter()).cloned().collect())
            }
        }
    }

    /// The registries the host's tools come from.
    fn registries(&self) -> Vec<ToolRegistry> {
        let common = self.common.iter().map(|c| c.registry.clone());
        common
            .chain(self.own.get().map(|own| own.registry.clone()))
            .collect()
    }

    /// The tools the host is shown now: the registries', with raw names (transparent) or
    /// public names (aggregated).
    pub(crate) fn host_tools(&self) -> Vec<Tool> {
        let snapshots: Vec<_> = self.registries().iter().map(|r| r.snapshot()).collect();
        match self.mode {
            Mode::Transparent => self
                .upstreams()
                .first()
                .and_then(|upstream| {
                    snapshots
                        .iter()
                        .find_map(|s| s.server(upstream.name()).cloned())
                })
                .map(|set| set.tools.iter().map(|t| (*t.definition).clone()).collect())
                .unwrap_or_default(),
            Mode::Aggregated => snapshots
                .iter()
                .flat_map(|snapshot| snapshot.tools())
                .map(|tool| {
                    let mut definition = (*tool.definition).clone();
                    definition.name = Cow::Owned(tool.public_name.to_string());
                    definition
                })
                .collect(),
        }
    }

    /// Tells the host (through its outbox) whenever the tools it would list change, from now
    /// until `stop`.
    pub(crate) fn announce(
        self: Arc<Self>,
        stop: CancellationToken,
    ) -> impl Future<Output = ()> + Send + 'static {
        let outbox = self.link.outbox.clone();
        self.announce_to(outbox, stop)
    }

    /// Tells `outbox` (one listen stream's) whenever the tools the host would list change,
    /// from now until `stop`.
    pub(crate) fn announce_to(
        self: Arc<Self>,
        outbox: super::outbox::Outbox,
        stop: CancellationToken,
    ) -> impl Future<Output = ()> + Send + 'static {
        let (registries, baseline) = (self.registries(), announce::digest(&self.host_tools()));
        announce::tools(
            registries,
            move || self.host_tools(),
            outbox,
            baseline,
            stop,
        )
    }

    /// The upstream and the tool's name there, for a name the host called.
    pub(super) fn route_tool(&self, name: &str) -> Result<(Arc<Upstream>, String), ErrorData> {
        let upstreams = self.upstreams();
        match self.mode {
            Mode::Transparent => upstreams
                .first()
                .map(|u| (u.clone(), name.to_owned()))
                .ok_or_else(not_initialized),
            Mode::Aggregated => {
                for registry in self.registries() {
                    if let Some(tool) = registry.snapshot().get(name)
                        && let Some(upstream) = upstreams.iter().find(|u| u.name() == &*tool.server)
                    {
                        return Ok((upstream.clone(), tool.raw_name.to_string()));
                    }
                }
                // Not registered now (its server gave up, say): a lossless public name still
                // names its server, which then explains itself.
                upstreams
                    .iter()
                    .find_map(|u| {
                        let raw = name.strip_prefix(&format!("mcp__{}__", u.name()))?;
                        (registry::public_name(u.name(), raw) == name)
                            .then(|| (u.clone(), raw.to_owned()))
                    })
                    .ok_or_else(|| {
                        ErrorData::invalid_params(format!("no tool named '{name}'"), None)
                    })
            }
        }
    }

    /// The single upstream (transparent), for requests passed through as they are.
    pub(super) fn only(&self) -> Option<Arc<Upstream>> {
        match self.mode {
            Mode::Transparent => self.upstreams().first().cloned(),
            Mode::Aggregated => None,
        }
    }

    /// Stops the announcer, then shuts this session's own upstreams down (children reaped);
    /// the common ones are their owner's to stop, and are only given back what this host held
    /// there (subscriptions, its log level).
    pub(crate) async fn shutdown(&self) {
        self.stop.cancel();
        let tasks = std::mem::take(&mut *lock(&self.tasks));
        for task in tasks {
            let _ = task.await;
        }
        if let Some(common) = &self.common {
            self.give_back(common).await;
        }
        if let Some(own) = self.own.get() {
            own.shutdown().await;
        }
    }

    /// What this host held at the common upstreams: a subscription only it held is ended
    /// there (each within [`GIVE_BACK`]); its level no longer counts.
    async fn give_back(&self, common: &Upstreams) {
        let host = self.link.id();
        for (uri, server) in self.link.take_subscriptions() {
            let list = common.list();
            let Some(upstream) = list.iter().find(|u| u.name() == &*server) else {
                continue;
            };
            if upstream.shares.unsubscribe(&uri) {
                let ended = upstream.supervisor.unsubscribe(&uri);
                if tokio::time::timeout(GIVE_BACK, ended).await.is_err() {
                    tracing::debug!(%server, "resources/unsubscribe unanswered at a session's end");
                }
            }
        }
        for upstream in common.list().iter() {
            upstream.shares.forget(host);
        }
    }
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(super) fn not_initialized() -> ErrorData {
    ErrorData::invalid_request("the proxy has not been initialized", None)
}
