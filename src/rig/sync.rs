//! [`ToolSync`]: the task that keeps a [`ManagedToolSink`] in step with a [`ToolRegistry`].

use std::{collections::HashMap, sync::Arc};

use futures::{
    StreamExt,
    stream::{BoxStream, SelectAll},
};
use rig_core::tool::{ManagedToolSink, ManagedToolToken};
use tokio::{sync::oneshot, task::JoinHandle};

use super::tool::dynamic_tools;
use crate::{ToolRegistry, registry::ToolsChanged, supervisor::board::StatusWatch};

/// The tokens a sink returned for one server's tools, by public name.
type Tokens = HashMap<String, ManagedToolToken>;

/// A running sync from a [`ToolRegistry`] into a rig [`ManagedToolSink`] (rig-agent's
/// `ToolServerHandle`, or any other). Start it with [`ToolSync::start`]; stop it with
/// [`shutdown`](Self::shutdown).
///
/// Each server is one source of the sink. The task installs a server's tools when it first sees
/// them, reconciles them on every change the registry announces (tools added, removed or
/// changed, by any number of servers) and again each time the server becomes ready (a sink may
/// have retired them during the outage, since their `is_live` probe was false).
///
/// # Invariants
///
/// 1. One task owns the tokens and is the only caller of the sink for this registry, so
///    reconciles run one at a time, in the order the registry announced its changes.
/// 2. A reconcile sends the server's set from the registry's *current* snapshot, never the set an
///    event carried: a late event can only repeat the present, never restore the past.
/// 3. Every reconcile hands back the tokens of the previous one; the sink changes a name only
///    while that token is still current, so a registration made after ours (by the host, or a
///    newer refresh) is never undone by this task.
#[derive(Debug)]
pub struct ToolSync {
    /// Dropped or fired to stop the task; taken by `shutdown`.
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl ToolSync {
    /// Installs the registry's current tools into `sink` (before it returns) and spawns the task
    /// that keeps them in step. Must be called inside a Tokio runtime.
    pub fn start<S>(registry: ToolRegistry, sink: S) -> ToolSync
    where
        S: ManagedToolSink + Send + 'static,
    {
        // Subscribe before reading the snapshot, so no change falls between the two.
        let changes = registry.changes();
        let mut syncer = Syncer {
            registry,
            sink,
            tokens: HashMap::new(),
            watched: HashMap::new(),
            readiness: SelectAll::new(),
        };
        syncer.resync_all();
        let (stop, stopped) = oneshot::channel();
        let span = tracing::info_span!("rig_sync");
        let task = tokio::spawn(tracing::Instrument::instrument(
            syncer.run(changes, stopped),
            span,
        ));
        ToolSync {
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// Stops the task and waits until it has ended. The tools it installed stay in the sink;
    /// their callbacks keep routing through the registry and their `is_live` keeps following
    /// the servers' states.
    ///
    /// # Cancel safety
    ///
    /// If the future is dropped, the task still stops (its stop signal was sent or dropped), but
    /// nobody waits for it.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }

    /// True once the task has ended.
    pub fn is_finished(&self) -> bool {
        self.task.as_ref().is_none_or(JoinHandle::is_finished)
    }
}

/// What woke the task.
enum Step {
    Changed(Result<ToolsChanged, crate::state::RecvError>),
    /// A server's readiness changed (`Some`), or its supervisor is gone (`None`).
    Readiness(Arc<str>, Option<bool>),
    Stop,
}

struct Syncer<S> {
    registry: ToolRegistry,
    sink: S,
    /// Per server seen: the tokens of its last install or reconcile. An entry exists from the
    /// first install until the server's tools are unregistered.
    tokens: HashMap<Arc<str>, Tokens>,
    /// The state channel each server is watched on (to notice a new supervisor of the same name).
    watched: HashMap<Arc<str>, StatusWatch>,
    readiness: SelectAll<BoxStream<'static, (Arc<str>, Option<bool>)>>,
}

impl<S: ManagedToolSink> Syncer<S> {
    async fn run(
        mut self,
        mut changes: crate::state::ChangeReceiver,
        mut stopped: oneshot::Receiver<()>,
    ) {
        loop {
            let step = tokio::select! {
                _ = &mut stopped => Step::Stop,
                change = changes.recv() => Step::Changed(change),
                Some((server, ready)) = self.readiness.next(), if !self.readiness.is_empty() => {
                    Step::Readiness(server, ready)
                }
            };
            match step {
                Step::Changed(Ok(change)) => self.on_change(&change.server),
                Step::Changed(Err(crate::state::RecvError::Lagged(missed))) => {
                    tracing::debug!(missed, "registry changes lagged; reconciling every server");
                    self.resync_all();
                }
                Step::Changed(Err(crate::state::RecvError::Closed)) | Step::Stop => return,
                Step::Readiness(server, Some(true)) => self.reconcile(&server),
                Step::Readiness(_, Some(false)) => {}
                Step::Readiness(server, None) => {
                    self.watched.remove(&server);
                    self.watch(&server);
                }
            }
        }
    }

    fn on_change(&mut self, server: &Arc<str>) {
        self.watch(server);
        self.reconcile(server);
    }

    /// Reconciles every server the sink or the registry knows.
    fn resync_all(&mut self) {
        let snapshot = self.registry.snapshot();
        let mut servers: Vec<Arc<str>> = self.tokens.keys().cloned().collect();
        for tool in snapshot.tools() {
            if !servers.contains(&tool.server) {
                servers.push(tool.server.clone());
            }
        }
        for server in servers {
            self.on_change(&server);
        }
    }

    /// Sends `server`'s current set to the sink: an install the first time, a reconcile with the
    /// previous tokens after that. A set that is now empty removes ours and forgets the server.
    fn reconcile(&mut self, server: &Arc<str>) {
        let snapshot = self.registry.snapshot();
        let tools = dynamic_tools(&self.registry, &snapshot, Some(server));
        let offered = tools.len();
        let tokens = match self.tokens.remove(server) {
            None if tools.is_empty() => return,
            None => self.sink.add_managed_tools(tools),
            Some(expected) => self.sink.reconcile_managed_tools(expected, tools),
        };
        tracing::debug!(
            server = %server,
            offered,
            installed = tokens.len(),
            "rig tool sink reconciled"
        );
        if offered > 0 {
            self.tokens.insert(server.clone(), tokens);
        }
    }

    /// Starts watching `server`'s readiness, unless its current supervisor is watched already.
    fn watch(&mut self, server: &Arc<str>) {
        let Some(rx) = self.registry.watch(server) else {
            return;
        };
        if self
            .watched
            .get(server)
            .is_some_and(|known| known.same_channel(&rx))
        {
            return;
        }
        self.watched.insert(server.clone(), rx.clone());
        self.readiness.push(readiness(server.clone(), rx));
    }
}

/// The readiness edges of one server: `Some(ready)` each time it flips, then `None` once when
/// its supervisor is gone.
fn readiness(server: Arc<str>, rx: StatusWatch) -> BoxStream<'static, (Arc<str>, Option<bool>)> {
    let last = rx.status().is_ready();
    futures::stream::unfold(Some((rx, last)), move |state| {
        let server = server.clone();
        async move {
            let (mut rx, last) = state?;
            loop {
                let Some(status) = rx.changed().await else {
                    return Some(((server, None), None));
                };
                let ready = status.is_ready();
                if ready != last {
                    return Some(((server, Some(ready)), Some((rx, ready))));
                }
            }
        }
    })
    .boxed()
}
