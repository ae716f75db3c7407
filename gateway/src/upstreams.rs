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

use std::sync::{Arc, Mutex, PoisonError};

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
    pub(super) list: Vec<Arc<Upstream>>,
    /// Ends the keepers.
    stop: CancellationToken,
    keepers: Mutex<Vec<JoinHandle<()>>>,
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
        // One per configured server: the operator's own list (a config file is read within
        // 1 MiB), nothing a host or server sends.
        let mut list: Vec<Arc<Upstream>> = Vec::with_capacity(configs.len());
        for config in configs {
            let call_wait = config.get_call_wait().unwrap_or(options.call_wait);
            let config = config.call_wait(call_wait);
            let revive_after = config.get_reconnect().get_max_delay();
            let name = config.name().to_owned();
            let calls = callers.get(&name).cloned().unwrap_or_default();
            match Supervisor::spawn(config.handlers(handlers.clone()), &registry) {
                Ok(supervisor) => list.push(Arc::new(Upstream::new(
                    supervisor,
                    revive_after,
                    call_wait,
                    calls,
                ))),
                Err(error) => {
                    futures::future::join_all(list.iter().map(|u| u.supervisor.shutdown())).await;
                    return Err(StartFailed {
                        server: name,
                        source: error,
                    });
                }
            }
        }
        let stop = CancellationToken::new();
        let keepers = list
            .iter()
            .map(|upstream| tokio::spawn(upstream.clone().keep(stop.clone())))
            .collect();
        Ok(Self {
            registry,
            list,
            stop,
            keepers: Mutex::new(keepers),
        })
    }

    /// Waits up to `wait` for every upstream to be ready; warns about those that are not.
    pub(crate) async fn wait_ready(&self, wait: std::time::Duration) {
        futures::future::join_all(self.list.iter().map(|u| u.supervisor.wait_ready(wait))).await;
        for upstream in &self.list {
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
        futures::future::join_all(self.list.iter().map(|u| u.supervisor.shutdown())).await;
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
