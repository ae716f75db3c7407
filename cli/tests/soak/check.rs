//! What the soak checks continuously, and how it tells a healthy server from a disturbed one.

use std::{
    collections::BTreeMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::Duration,
};

use mcp_resilient::{
    ConnectionState, ToolRegistry,
    state::{Event, Generation},
};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Every violation seen, with when and where.
#[derive(Default)]
pub struct Violations(Mutex<Vec<String>>);

impl Violations {
    pub fn add(&self, what: String) {
        tracing::error!("VIOLATION: {what}");
        self.0.lock().unwrap().push(what);
    }

    pub fn all(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// Whether a server is being disturbed by a fault right now. The injector raises it before a
/// fault and lowers it only once the server is ready again after the fault and a margin has
/// passed; `epoch` moves at both edges, so a call can tell whether a fault touched it.
#[derive(Default)]
pub struct Health {
    disturbed: AtomicBool,
    /// Raised while the current fault is one that may end a generation.
    death_allowed: AtomicBool,
    epoch: AtomicU64,
}

impl Health {
    pub fn disturb(&self, may_kill: bool) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
        self.death_allowed.store(may_kill, Ordering::SeqCst);
        self.disturbed.store(true, Ordering::SeqCst);
    }

    pub fn settle(&self) {
        self.disturbed.store(false, Ordering::SeqCst);
        self.death_allowed.store(false, Ordering::SeqCst);
        self.epoch.fetch_add(1, Ordering::SeqCst);
    }

    /// `Some(epoch)` when healthy now.
    pub fn healthy(&self) -> Option<u64> {
        let epoch = self.epoch.load(Ordering::SeqCst);
        (!self.disturbed.load(Ordering::SeqCst)).then_some(epoch)
    }

    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }

    pub fn death_allowed(&self) -> bool {
        self.death_allowed.load(Ordering::SeqCst)
    }
}

/// Follows one supervisor's events: generations only move forward, a new generation is ready
/// only after the previous one was lost, and a loss happens only under a fault that may kill.
pub async fn watch_generations(
    name: String,
    mut events: mcp_resilient::state::EventReceiver,
    health: Arc<Health>,
    violations: Arc<Violations>,
    stop: CancellationToken,
) {
    let mut last_ready: Option<Generation> = None;
    let mut lost_since_ready = true;
    loop {
        let event = tokio::select! {
            event = events.recv() => event,
            _ = stop.cancelled() => return,
        };
        let event = match event {
            Ok(event) => event,
            Err(mcp_resilient::state::RecvError::Lagged(n)) => {
                violations.add(format!("{name}: lost {n} events (the check cannot follow)"));
                continue;
            }
            Err(mcp_resilient::state::RecvError::Closed) => return,
        };
        let Event::State {
            status: mcp_resilient::Status {
                state, generation, ..
            },
            ..
        } = event
        else {
            continue;
        };
        match state {
            ConnectionState::Ready { generation: g, .. } => {
                if let Some(last) = last_ready
                    && (g <= last || !lost_since_ready)
                {
                    violations.add(format!(
                        "{name}: generation {g} ready after {last} without a loss in between"
                    ));
                }
                last_ready = Some(g);
                lost_since_ready = false;
            }
            ConnectionState::Reconnecting { death, .. } | ConnectionState::Failed { death, .. } => {
                if !health.death_allowed() {
                    violations.add(format!(
                        "{name}: generation {generation:?} lost without a death fault: {} ({})",
                        death.cause, death.detail
                    ));
                }
                lost_since_ready = true;
            }
            ConnectionState::Stopped => return,
            _ => {}
        }
    }
}

/// Takes snapshots as fast as it can; a server's set must always be whole.
pub async fn watch_registry(
    registry: ToolRegistry,
    violations: Arc<Violations>,
    stop: CancellationToken,
) -> u64 {
    let mut looks = 0;
    while !stop.is_cancelled() {
        let snapshot = registry.snapshot();
        let mut by_server: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for tool in snapshot.tools() {
            by_server
                .entry(&tool.server)
                .or_default()
                .push(&tool.raw_name);
        }
        for (server, tools) in by_server {
            if let Some(missing) = mcp_mock_server::BUILTINS
                .iter()
                .find(|b| !tools.contains(b))
            {
                violations.add(format!(
                    "{server}: a partial tool set is registered (no {missing}): {tools:?}"
                ));
            }
        }
        looks += 1;
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    looks
}

/// One caller: calls `echo` on random servers until `stop`; every call must end within
/// `deadline` with `Ok` or a typed error, and must succeed when its server was healthy
/// throughout.
pub async fn caller(
    id: usize,
    servers: Vec<(String, Arc<Health>)>,
    registry: ToolRegistry,
    deadline: Duration,
    violations: Arc<Violations>,
    stop: CancellationToken,
    seed: u64,
) -> (u64, u64) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let (mut ok, mut failed) = (0, 0);
    while !stop.is_cancelled() {
        let (name, health) = &servers[rng.random_range(0..servers.len())];
        let text = format!("caller {id} call {}", ok + failed);
        let healthy = health.healthy();
        let started = Instant::now();
        let call = async {
            let handle = registry
                .handle(&format!("mcp__{name}__echo"))
                .map_err(|unknown| mcp_resilient::CallError::ToolNotFound { name: unknown.name })?;
            handle.call(serde_json::json!({ "text": text })).await
        };
        let outcome = tokio::time::timeout(deadline, call).await;
        let took = started.elapsed();
        let still = healthy.is_some() && health.epoch() == healthy.unwrap_or(u64::MAX);
        match outcome {
            Err(_) => violations.add(format!(
                "{name}: a call did not end within its deadline ({deadline:?})"
            )),
            Ok(Ok(result)) => {
                let echoed = format!("{result:?}").contains(&text);
                if !echoed {
                    violations.add(format!("{name}: a call was answered wrongly: {result:?}"));
                }
                ok += 1;
            }
            Ok(Err(error)) => {
                failed += 1;
                if still {
                    violations.add(format!(
                        "{name}: a call failed while the server was healthy ({took:?}): {error}"
                    ));
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(rng.random_range(2..15))).await;
    }
    (ok, failed)
}
