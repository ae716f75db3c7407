//! What the proxy's handler and tasks share: the upstreams (started by the host's `initialize`,
//! stopped at the end), the tools the host is shown, and the routes from a host's name to an
//! upstream.

use std::{
    borrow::Cow,
    sync::{Arc, Mutex, OnceLock, PoisonError},
};

use rmcp::{
    ErrorData, RoleServer,
    model::{InitializeRequestParams, InitializeResult, Tool},
};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::{ServerConfig, Supervisor, ToolRegistry, registry};

use super::{
    Mode, ProxyOptions, announce, forward::Routes, host, outbox::Outbox, upstream::Upstream,
};

/// What the handler and the proxy's tasks share.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(super) mode: Mode,
    pub(super) options: ProxyOptions,
    pub(super) registry: ToolRegistry,
    /// The upstreams' configurations until `initialize` starts them.
    pub(super) pending: Mutex<Option<Vec<ServerConfig>>>,
    pub(super) upstreams: OnceLock<Vec<Arc<Upstream>>>,
    /// The `initialize` answer (before the protocol version is negotiated).
    pub(super) info: OnceLock<InitializeResult>,
    pub(super) routes: Routes,
    /// Everything for the host goes through it (progress and upstream notifications directly).
    pub(super) outbox: Outbox,
    /// Ends the keepers and the announcer.
    pub(super) stop: CancellationToken,
    pub(super) tasks: Mutex<Vec<JoinHandle<()>>>,
}

impl Shared {
    pub(super) fn new(
        mode: Mode,
        configs: Vec<ServerConfig>,
        options: ProxyOptions,
        registry: ToolRegistry,
        outbox: Outbox,
    ) -> Self {
        Self {
            outbox,
            mode,
            options,
            registry,
            pending: Mutex::new(Some(configs)),
            upstreams: OnceLock::new(),
            info: OnceLock::new(),
            routes: Routes::default(),
            stop: CancellationToken::new(),
            tasks: Mutex::new(Vec::new()),
        }
    }

    pub(super) fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    pub(super) fn upstreams(&self) -> &[Arc<Upstream>] {
        self.upstreams.get().map(Vec::as_slice).unwrap_or_default()
    }

    /// The tools the host is shown now: the registry's, with raw names (transparent) or public
    /// names (aggregated).
    pub(super) fn host_tools(&self) -> Vec<Tool> {
        let snapshot = self.registry.snapshot();
        match self.mode {
            Mode::Transparent => self
                .upstreams()
                .first()
                .and_then(|upstream| snapshot.server(upstream.name()).cloned())
                .map(|set| set.tools.iter().map(|t| (*t.definition).clone()).collect())
                .unwrap_or_default(),
            Mode::Aggregated => snapshot
                .tools()
                .map(|tool| {
                    let mut definition = (*tool.definition).clone();
                    definition.name = Cow::Owned(tool.public_name.to_string());
                    definition
                })
                .collect(),
        }
    }

    /// Starts the upstreams with handlers that reach `peer`, waits for them up to the startup
    /// wait, and starts the keepers and the announcer.
    pub(super) async fn start(
        self: &Arc<Self>,
        peer: rmcp::Peer<RoleServer>,
        request: &InitializeRequestParams,
    ) -> Result<(), ErrorData> {
        let configs = lock(&self.pending).take().ok_or_else(|| {
            ErrorData::invalid_request("initialize was already answered in this session", None)
        })?;
        let handlers = host::handlers(
            self.outbox.clone(),
            peer.clone(),
            &request.capabilities,
            self.mode,
        );
        let mut upstreams = Vec::with_capacity(configs.len());
        for mut config in configs {
            let call_wait = *config.call_wait.get_or_insert(self.options.call_wait);
            let revive_after = config.reconnect.max_delay;
            let name = config.name.clone();
            match Supervisor::spawn(config.handlers(handlers.clone()), &self.registry) {
                Ok(supervisor) => {
                    upstreams.push(Arc::new(Upstream::new(supervisor, revive_after, call_wait)))
                }
                Err(error) => {
                    let started = upstreams
                        .iter()
                        .map(|u: &Arc<Upstream>| u.supervisor.shutdown());
                    futures::future::join_all(started).await;
                    return Err(ErrorData::internal_error(
                        format!("could not start upstream '{name}': {error}"),
                        None,
                    ));
                }
            }
        }
        let upstreams = self.upstreams.get_or_init(|| upstreams);
        let mut tasks = Vec::new();
        for upstream in upstreams {
            tasks.push(tokio::spawn(upstream.clone().keep(self.stop.clone())));
        }
        let wait = self.options.startup_wait;
        futures::future::join_all(upstreams.iter().map(|u| u.supervisor.wait_ready(wait))).await;
        for upstream in upstreams {
            let status = upstream.supervisor.status();
            if !status.is_ready() {
                tracing::warn!(
                    server = %upstream.name(), state = %status,
                    "not ready after {wait:?}; answering the host without it, its tools follow when it is"
                );
            }
        }
        let _ = self.info.set(self.describe());
        let shared = self.clone();
        tasks.push(tokio::spawn(announce::tools(
            self.registry().clone(),
            move || shared.host_tools(),
            peer,
            self.host_tools(),
            self.stop.clone(),
        )));
        lock(&self.tasks).extend(tasks);
        Ok(())
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
                let snapshot = self.registry.snapshot();
                if let Some(tool) = snapshot.get(name)
                    && let Some(upstream) = upstreams.iter().find(|u| u.name() == &*tool.server)
                {
                    return Ok((upstream.clone(), tool.raw_name.to_string()));
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
    pub(super) fn only(&self) -> Option<&Arc<Upstream>> {
        match self.mode {
            Mode::Transparent => self.upstreams().first(),
            Mode::Aggregated => None,
        }
    }

    /// Stops the keepers and the announcer, then shuts every upstream down (children reaped).
    pub(super) async fn shutdown(&self) {
        self.stop.cancel();
        let tasks = std::mem::take(&mut *lock(&self.tasks));
        for task in tasks {
            let _ = task.await;
        }
        futures::future::join_all(self.upstreams().iter().map(|u| u.supervisor.shutdown())).await;
    }
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(super) fn not_initialized() -> ErrorData {
    ErrorData::invalid_request("the proxy has not been initialized", None)
}
