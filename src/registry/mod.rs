//! The shared, generation-fenced tool registry.
//!
//! Every supervisor — stdio, legacy SSE and Streamable HTTP alike — publishes its server's tool
//! set here. Hosts read [`Snapshot`]s, resolve [`ToolHandle`]s and listen to
//! [`ToolRegistry::changes`].
//!
//! # Invariants
//!
//! 1. A snapshot is immutable. A publish builds the next snapshot aside and swaps it in whole,
//!    so a reader sees a server's old full set or its new full set, never a mix and never a
//!    duplicate.
//! 2. Publishes are fenced by generation: a set from a generation older than the one already
//!    registered for that server is refused.
//! 3. A list with a duplicate raw name, or whose public names would clash with another
//!    identity's, is refused and the previous set stays.
//! 4. A [`ToolHandle`] holds only names. It resolves the server's current route at call time, so
//!    it keeps working across reconnects.
//!
//! The lock inside is a `std::sync::RwLock` held only to clone or swap an `Arc`, never across an
//! `.await`.

pub mod definitions;
pub(crate) mod handle;
mod names;

use std::{
    collections::{BTreeMap, HashMap},
    sync::{Arc, RwLock},
};

use rmcp::model::Tool;
use tokio::sync::broadcast;

pub use handle::ToolHandle;
pub use names::{MAX_PUBLIC_NAME, public_name};

pub use crate::state::ToolsChanged;
use crate::{error::StartError, state::Generation};

/// How a [`ToolHandle`] reaches its server: the supervisor's call path, registered by `attach`.
/// A trait so that the registry does not depend on the supervisor that implements it.
pub(crate) trait Route: Send + Sync + std::fmt::Debug {
    /// Calls `tool` (its raw name) on the server's current generation.
    fn call_tool<'a>(
        &'a self,
        tool: &'a str,
        arguments: Option<rmcp::model::JsonObject>,
        timeout: Option<std::time::Duration>,
    ) -> futures::future::BoxFuture<'a, Result<rmcp::model::CallToolResult, crate::CallError>>;

    /// The server's state, live: a receiver of the supervisor's state channel.
    fn state_watch(&self) -> tokio::sync::watch::Receiver<crate::ConnectionState>;
}

/// One registered tool.
#[derive(Debug, Clone, PartialEq)]
pub struct RegisteredTool {
    /// The host-facing name, `mcp__<server>__<tool>`.
    pub public_name: Arc<str>,
    /// The server that provides the tool.
    pub server: Arc<str>,
    /// The tool's name on that server.
    pub raw_name: Arc<str>,
    /// The definition the server listed, unchanged.
    pub definition: Arc<Tool>,
}

/// One server's registered tools, as listed by one generation.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerTools {
    /// The server's name.
    pub server: Arc<str>,
    /// The generation that listed these tools.
    pub generation: Generation,
    /// The tools, in the order the server listed them.
    pub tools: Vec<RegisteredTool>,
}

/// An immutable view of every registered tool at one moment. Cheap to take and to keep.
#[derive(Debug, Default)]
pub struct Snapshot {
    servers: BTreeMap<Arc<str>, Arc<ServerTools>>,
    by_public: HashMap<Arc<str>, (Arc<str>, usize)>,
}

impl Snapshot {
    /// Every registered tool, server by server (servers in name order).
    pub fn tools(&self) -> impl Iterator<Item = &RegisteredTool> {
        self.servers.values().flat_map(|s| s.tools.iter())
    }

    /// The number of registered tools.
    pub fn len(&self) -> usize {
        self.by_public.len()
    }

    /// True when no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.by_public.is_empty()
    }

    /// The tool with this public name.
    pub fn get(&self, public_name: &str) -> Option<&RegisteredTool> {
        let (server, index) = self.by_public.get(public_name)?;
        self.servers.get(server)?.tools.get(*index)
    }

    /// One server's registered tools.
    pub fn server(&self, name: &str) -> Option<&Arc<ServerTools>> {
        self.servers.get(name)
    }

    /// The next snapshot: this one with `server`'s set replaced (or removed). Copies the
    /// indexes (reference-count bumps, no rehashing) and patches only `server`'s entries, so a
    /// publish costs a copy, not a rebuild, however many servers share the registry.
    fn with_server(&self, server: &Arc<str>, tools: Option<Arc<ServerTools>>) -> Snapshot {
        let mut servers = self.servers.clone();
        let mut by_public = self.by_public.clone();
        if let Some(old) = self.servers.get(server) {
            for tool in &old.tools {
                by_public.remove(&tool.public_name);
            }
        }
        if let Some(set) = &tools {
            for (index, tool) in set.tools.iter().enumerate() {
                by_public.insert(tool.public_name.clone(), (server.clone(), index));
            }
        }
        match tools {
            Some(tools) => servers.insert(server.clone(), tools),
            None => servers.remove(server),
        };
        Snapshot { servers, by_public }
    }
}

/// Why a tool list was not published.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PublishError {
    /// A newer generation's set is already registered.
    #[error("generation {generation} is older than the registered generation {registered}")]
    Stale {
        /// The generation that tried to publish.
        generation: Generation,
        /// The generation already registered.
        registered: Generation,
    },
    /// The list names the same tool twice.
    #[error("the server listed tool '{0}' more than once")]
    DuplicateTool(String),
    /// A public name would be shared with another identity.
    #[error("public name '{0}' is already taken by another server's tool")]
    NameClash(String),
}

#[derive(Debug)]
struct Inner {
    /// Swapped whole by `publish`/`unregister`; readers clone the `Arc`.
    snapshot: RwLock<Arc<Snapshot>>,
    /// Call routes by server name; set by `attach` when a supervisor starts, removed by `detach`.
    routes: RwLock<HashMap<Arc<str>, Arc<dyn Route>>>,
    changes: broadcast::Sender<ToolsChanged>,
}

/// The tool registry shared by every supervisor of a host. Clone it freely: clones share state.
#[derive(Debug, Clone)]
pub struct ToolRegistry {
    inner: Arc<Inner>,
}

impl Default for ToolRegistry {
    fn default() -> Self {
        Self::new()
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        let (changes, _) = broadcast::channel(256);
        ToolRegistry {
            inner: Arc::new(Inner {
                snapshot: RwLock::new(Arc::new(Snapshot::default())),
                routes: RwLock::new(HashMap::new()),
                changes,
            }),
        }
    }

    /// The current tool set. Holding it never blocks anyone.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        read(&self.inner.snapshot).clone()
    }

    /// Notifications of every change, in publish order: a server's first registration, a set
    /// that differs from the registered one, an unregistration. Re-publishing an identical set
    /// (a reconnect to an unchanged server) is not a change. A receiver that falls more than 256
    /// changes behind gets `Lagged` and should take a fresh [`snapshot`](Self::snapshot).
    pub fn changes(&self) -> broadcast::Receiver<ToolsChanged> {
        self.inner.changes.subscribe()
    }

    /// A handle to the tool with this public name. It stays valid across reconnects; it fails
    /// with `ToolNotFound` only while the tool is not registered.
    pub fn handle(&self, public_name: &str) -> Result<ToolHandle, crate::CallError> {
        match self.snapshot().get(public_name) {
            Some(tool) => Ok(ToolHandle::new(self.clone(), tool)),
            None => Err(crate::CallError::ToolNotFound {
                name: public_name.to_owned(),
            }),
        }
    }

    /// The names of the servers whose supervisors are attached.
    pub fn servers(&self) -> Vec<String> {
        let mut names: Vec<String> = read(&self.inner.routes)
            .keys()
            .map(|k| k.to_string())
            .collect();
        names.sort();
        names
    }

    /// The state of the attached server `server`; `None` when no supervisor of that name is
    /// attached (never started, or shut down).
    pub fn server_state(&self, server: &str) -> Option<crate::ConnectionState> {
        let route = self.route(server)?;
        let state = route.state_watch().borrow().clone();
        Some(state)
    }

    /// True while the attached server `server` has a ready generation. Cheap: one map lookup
    /// and one channel read, no await.
    pub fn is_ready(&self, server: &str) -> bool {
        self.route(server)
            .is_some_and(|route| route.state_watch().borrow().is_ready())
    }

    /// The state channel of the attached server `server`.
    #[cfg_attr(not(feature = "rig"), allow(dead_code))]
    pub(crate) fn state_watch(
        &self,
        server: &str,
    ) -> Option<tokio::sync::watch::Receiver<crate::ConnectionState>> {
        self.route(server).map(|route| route.state_watch())
    }

    pub(crate) fn route(&self, server: &str) -> Option<Arc<dyn Route>> {
        read(&self.inner.routes).get(server).cloned()
    }

    pub(crate) fn attach(&self, server: &Arc<str>, link: Arc<dyn Route>) -> Result<(), StartError> {
        let mut routes = write(&self.inner.routes);
        if routes.contains_key(server) {
            return Err(StartError::DuplicateServer(server.to_string()));
        }
        routes.insert(server.clone(), link);
        Ok(())
    }

    pub(crate) fn detach(&self, server: &str) {
        write(&self.inner.routes).remove(server);
    }

    /// Replaces `server`'s whole tool set with `tools`, listed by `generation`.
    pub(crate) fn publish(
        &self,
        server: &Arc<str>,
        generation: Generation,
        tools: Vec<Tool>,
    ) -> Result<ToolsChanged, PublishError> {
        let mut next = Vec::with_capacity(tools.len());
        let mut seen = HashMap::with_capacity(tools.len());
        for tool in tools {
            let raw: Arc<str> = Arc::from(tool.name.as_ref());
            if seen.insert(raw.clone(), ()).is_some() {
                return Err(PublishError::DuplicateTool(raw.to_string()));
            }
            next.push(RegisteredTool {
                public_name: Arc::from(public_name(server, &raw)),
                server: server.clone(),
                raw_name: raw,
                definition: Arc::new(tool),
            });
        }
        let mut guard = write(&self.inner.snapshot);
        let previous = guard.servers.get(server).cloned();
        if let Some(prev) = &previous
            && prev.generation > generation
        {
            return Err(PublishError::Stale {
                generation,
                registered: prev.generation,
            });
        }
        for tool in &next {
            if let Some((owner, _)) = guard.by_public.get(&tool.public_name)
                && owner != server
            {
                return Err(PublishError::NameClash(tool.public_name.to_string()));
            }
        }
        let change = diff(server, generation, previous.as_deref(), &next);
        let set = Arc::new(ServerTools {
            server: server.clone(),
            generation,
            tools: next,
        });
        *guard = Arc::new(guard.with_server(server, Some(set)));
        drop(guard);
        // A reconnect that lists the same tools again changes nothing a host can see.
        if previous.is_none() || !change.is_empty() {
            let _ = self.inner.changes.send(change.clone());
        }
        Ok(change)
    }

    /// Removes `server`'s tools, unless a newer generation than `generation` registered them.
    pub(crate) fn unregister(
        &self,
        server: &Arc<str>,
        generation: Generation,
    ) -> Option<ToolsChanged> {
        let mut guard = write(&self.inner.snapshot);
        let previous = guard.servers.get(server).cloned()?;
        if previous.generation > generation {
            return None;
        }
        let change = diff(server, previous.generation, Some(&previous), &[]);
        *guard = Arc::new(guard.with_server(server, None));
        drop(guard);
        let _ = self.inner.changes.send(change.clone());
        Some(change)
    }
}

fn diff(
    server: &Arc<str>,
    generation: Generation,
    previous: Option<&ServerTools>,
    next: &[RegisteredTool],
) -> ToolsChanged {
    let old: HashMap<&str, &Tool> = previous
        .map(|p| {
            p.tools
                .iter()
                .map(|t| (&*t.raw_name, &*t.definition))
                .collect()
        })
        .unwrap_or_default();
    let new: HashMap<&str, &Tool> = next
        .iter()
        .map(|t| (&*t.raw_name, &*t.definition))
        .collect();
    let mut change = ToolsChanged {
        server: server.clone(),
        generation,
        tools: next.iter().map(|t| t.raw_name.to_string()).collect(),
        added: Vec::new(),
        removed: Vec::new(),
        changed: Vec::new(),
    };
    for tool in next {
        match old.get(&*tool.raw_name) {
            None => change.added.push(tool.raw_name.to_string()),
            Some(def) if **def != *tool.definition => {
                change.changed.push(tool.raw_name.to_string())
            }
            Some(_) => {}
        }
    }
    if let Some(prev) = previous {
        for tool in &prev.tools {
            if !new.contains_key(&*tool.raw_name) {
                change.removed.push(tool.raw_name.to_string());
            }
        }
    }
    change
}

/// Poison-tolerant read: the data under these locks is replaced whole, never left half-written.
fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|e| e.into_inner())
}

fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests;
