//! A set of upstreams started together: their supervisors, the registry they publish into, and
//! the keepers that start again an upstream that gave up.
//!
//! The stdio proxy starts one set per host session (at its `initialize`). The gateway starts
//! one set when it starts (its `shared` servers, seen by every host session) and one per host
//! session for its `per_host` servers.
//!
//! # Invariants
//!
//! 1. Every keeper is ended and awaited, and every supervisor shut down (children reaped),
//!    by [`Upstreams::shutdown`]; a set that failed to start has shut down what it had started.

use std::sync::{Arc, Mutex, PoisonError, RwLock};

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use mcp_resilient::{ServerConfig, Supervisor, ToolRegistry, host::HostHandlers};

use super::{
    ProxyOptions,
    host::{CallerMap, Callers},
    upstream::Upstream,
};

/// Started upstreams and their registry.
#[derive(Debug)]
pub(crate) struct Upstreams {
    pub(super) registry: ToolRegistry,
    /// The upstreams, in a list that a reload changes in place (`reload.rs`): a slot keeps its
    /// server's name and place, so that what routes by place stays right.
    pub(super) list: RwLock<Arc<Vec<Arc<Upstream>>>>,
    /// The configurations as given (before the set's defaults), for a reload to compare.
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub(super) configured: Mutex<Vec<ServerConfig>>,
    /// Ends the keepers.
    pub(super) stop: CancellationToken,
    pub(super) keepers: Mutex<Vec<JoinHandle<()>>>,
}

impl Upstreams {
    /// Starts one supervisor per configuration and its keeper. Every upstream gets the
    /// handlers `handlers` makes of the set's in-flight calls. A server without its own
    /// `call_wait` gets the options' one.
    pub(crate) async fn start(
        configs: Vec<ServerConfig>,
        options: &ProxyOptions,
        handlers: impl FnOnce(Arc<CallerMap>) -> HostHandlers,
    ) -> Result<Self, StartFailed> {
        let callers: CallerMap = configs
            .iter()
            .map(|config| (config.name().to_owned(), Arc::new(Callers::default())))
            .collect();
        let callers = Arc::new(callers);
        let handlers = handlers(callers.clone());
        let registry = ToolRegistry::new();
        let stop = CancellationToken::new();
        let configured = configs.clone();
        // One per configured server: the operator's own list (a config file is read within
        // 1 MiB), nothing a host or server sends.
        let mut list: Vec<Arc<Upstream>> = Vec::with_capacity(configs.len());
        for config in configs {
            let calls = callers.get(config.name()).cloned().unwrap_or_default();
            match spawn(config, options, &handlers, calls, &registry, &stop) {
                Ok(upstream) => list.push(upstream),
                Err(failed) => {
                    futures::future::join_all(list.iter().map(|u| u.supervisor.shutdown())).await;
                    return Err(failed);
                }
            }
        }
        let keepers = list
            .iter()
            .map(|upstream| tokio::spawn(upstream.clone().keep()))
            .collect();
        Ok(Self {
            registry,
            list: RwLock::new(Arc::new(list)),
            configured: Mutex::new(configured),
            stop,
            keepers: Mutex::new(keepers),
        })
    }

    /// The upstreams now (a reload may change them for the next caller of this).
    pub(crate) fn list(&self) -> Arc<Vec<Arc<Upstream>>> {
        self.list
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The upstreams now, without those a reload removed.
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub(crate) fn serving(&self) -> Vec<Arc<Upstream>> {
        (self.list().iter())
            .filter(|u| !u.retired())
            .cloned()
            .collect()
    }

    /// Waits up to `wait` for every upstream to be ready; warns about those that are not.
    pub(crate) async fn wait_ready(&self, wait: std::time::Duration) {
        let list = self.list();
        futures::future::join_all(list.iter().map(|u| u.supervisor.wait_ready(wait))).await;
        for upstream in list.iter() {
            let status = upstream.supervisor.status();
            if !status.is_ready() {
                tracing::warn!(
                    server = %upstream.name(), state = %status,
                    "not ready after {wait:?}; answering the host without it, its tools follow when it is"
                );
            }
        }
    }

    /// Ends the keepers, then shuts every upstream down (children reaped).
    pub(crate) async fn shutdown(&self) {
        self.stop.cancel();
        let keepers =
            std::mem::take(&mut *self.keepers.lock().unwrap_or_else(PoisonError::into_inner));
        for keeper in keepers {
            let _ = keeper.await;
        }
        let list = self.list();
        futures::future::join_all(list.iter().map(|u| u.supervisor.shutdown())).await;
    }
}

/// Starts one upstream of a set (its supervisor, with the set's defaults and `handlers`);
/// its keeper is the caller's to start.
pub(crate) fn spawn(
    config: ServerConfig,
    options: &ProxyOptions,
    handlers: &HostHandlers,
    calls: Arc<Callers>,
    registry: &ToolRegistry,
    stop: &CancellationToken,
) -> Result<Arc<Upstream>, StartFailed> {
    let call_wait = config.get_call_wait().unwrap_or(options.call_wait);
    let config = config.call_wait(call_wait);
    let revive_after = config.get_reconnect().get_max_delay();
    let name = config.name().to_owned();
    match Supervisor::spawn(config.handlers(handlers.clone()), registry) {
        Ok(supervisor) => Ok(Arc::new(Upstream::new(
            supervisor,
            revive_after,
            call_wait,
            calls,
            stop.child_token(),
        ))),
        Err(error) => Err(StartFailed {
            server: name,
            source: error,
        }),
    }
}

/// An upstream whose supervisor could not be started: the stdio host hears it as an internal
/// error, the gateway returns it as `ServeError::Start`.
#[derive(Debug)]
pub(crate) struct StartFailed {
    pub(crate) server: String,
    pub(crate) source: mcp_resilient::StartError,
}

impl std::fmt::Display for StartFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "could not start upstream '{}': {}",
            self.server, self.source
        )
    }
}
