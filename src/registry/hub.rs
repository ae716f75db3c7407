//! [`ToolRegistry`]: the registry itself, its snapshot and its routes; and [`ToolHandle`], a
//! host's long-lived reference to one tool, which calls through it (the two refer to each other:
//! the registry makes handles, a handle asks the registry for its route at each call).

use std::{
    collections::HashMap,
    sync::{Arc, RwLock},
};

use rmcp::model::{CallToolResult, JsonObject};
use tokio::sync::broadcast;

use super::{RegisteredTool, Route, Snapshot, ToolsChanged, UnknownTool, shared};
use crate::{CallError, call::CallOptions, error::StartError};

#[derive(Debug)]
pub(super) struct Inner {
    /// Swapped whole by `publish`/`unregister`; readers clone the `Arc`.
    pub(super) snapshot: RwLock<Arc<Snapshot>>,
    /// Call routes by server name; set by `attach` when a supervisor starts, removed by `detach`.
    pub(super) routes: RwLock<HashMap<Arc<str>, Arc<dyn Route>>>,
    pub(super) changes: broadcast::Sender<ToolsChanged>,
    /// One copy of each distinct definition across servers.
    pub(super) definitions: shared::Definitions,
}

/// The tool registry shared by every supervisor of a host. Clone it freely: clones share state.
#[derive(Debug, Clone)]
pub struct ToolRegistry {
    pub(super) inner: Arc<Inner>,
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
                definitions: shared::Definitions::default(),
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
    pub fn changes(&self) -> crate::state::ChangeReceiver {
        crate::state::ChangeReceiver::new(self.inner.changes.subscribe())
    }

    /// A handle to the tool with this public name. It stays valid across reconnects; its calls
    /// fail with `ToolNotFound` only while the tool is not registered. A name that is not
    /// registered now is an [`UnknownTool`], which names the closest registered one.
    pub fn handle(&self, public_name: &str) -> Result<ToolHandle, UnknownTool> {
        let snapshot = self.snapshot();
        match snapshot.get(public_name) {
            Some(tool) => Ok(ToolHandle::new(self.clone(), tool)),
            None => Err(UnknownTool {
                name: public_name.to_owned(),
                closest: crate::text::closest(
                    public_name,
                    snapshot.tools().map(|t| &*t.public_name),
                )
                .map(str::to_owned),
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

    /// The status of the attached server `server`; `None` when no supervisor of that name is
    /// attached (never started, or shut down).
    pub fn status(&self, server: &str) -> Option<crate::state::Status> {
        self.route(server).map(|route| route.status())
    }

    /// True while the attached server `server` has a ready generation. Cheap: one map lookup
    /// and one channel read, no await.
    #[cfg_attr(not(feature = "rig"), allow(dead_code))]
    pub(crate) fn is_ready(&self, server: &str) -> bool {
        self.route(server)
            .is_some_and(|route| route.status().is_ready())
    }

    /// A watch of the attached server `server`'s status.
    #[cfg_attr(not(feature = "rig"), allow(dead_code))]
    pub(crate) fn watch(&self, server: &str) -> Option<crate::supervisor::board::StatusWatch> {
        self.route(server).map(|route| route.watch())
    }

    pub(in crate::registry) fn route(&self, server: &str) -> Option<Arc<dyn Route>> {
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
}

/// Poison-tolerant read: the data under these locks is replaced whole, never left half-written.
pub(super) fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|e| e.into_inner())
}

pub(super) fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|e| e.into_inner())
}

/// A reference to one tool that survives reconnects.
///
/// It holds the tool's identity (server + raw name), not a connection: each call resolves the
/// server's current generation. Cloning is cheap.
#[derive(Debug, Clone)]
pub struct ToolHandle {
    registry: ToolRegistry,
    public_name: Arc<str>,
    server: Arc<str>,
    raw_name: Arc<str>,
}

impl ToolHandle {
    pub(crate) fn new(registry: ToolRegistry, tool: &RegisteredTool) -> Self {
        ToolHandle {
            registry,
            public_name: tool.public_name.clone(),
            server: tool.server.clone(),
            raw_name: tool.raw_name.clone(),
        }
    }

    /// The host-facing name.
    pub fn public_name(&self) -> &str {
        &self.public_name
    }

    /// The server that provides the tool.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The tool's name on its server.
    pub fn raw_name(&self) -> &str {
        &self.raw_name
    }

    /// The tool's current definition, if it is registered right now.
    pub fn definition(&self) -> Option<Arc<rmcp::model::Tool>> {
        self.registry
            .snapshot()
            .get(&self.public_name)
            .map(|t| t.definition.clone())
    }

    /// Calls the tool on the server's current generation, with the server's call timeout.
    /// While the server reconnects, the call waits for it (the server's `call_wait`, 10 s by
    /// default), so a blip costs the caller a short wait, not a failure.
    ///
    /// `arguments` must be a JSON object or `null`. A result with `is_error == Some(true)` is
    /// the tool's own failure and comes back as `Ok`.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the call; the server is then sent
    /// `notifications/cancelled`. Nothing else is affected.
    pub async fn call(&self, arguments: serde_json::Value) -> Result<CallToolResult, CallError> {
        self.call_with(arguments, CallOptions::default()).await
    }

    /// Like [`call`](Self::call), with per-call options: a timeout of its own, a progress
    /// callback.
    ///
    /// # Cancel safety
    ///
    /// As [`call`](Self::call): dropping the future abandons the call, and the server is sent
    /// `notifications/cancelled` for it.
    pub async fn call_with(
        &self,
        arguments: serde_json::Value,
        options: CallOptions,
    ) -> Result<CallToolResult, CallError> {
        let arguments = to_object(arguments)?;
        if self.registry.snapshot().get(&self.public_name).is_none() {
            return Err(CallError::ToolNotFound {
                name: self.public_name.to_string(),
            });
        }
        let Some(link) = self.registry.route(&self.server) else {
            return Err(CallError::ToolNotFound {
                name: self.public_name.to_string(),
            });
        };
        link.call_tool(&self.raw_name, arguments, options).await
    }
}

pub(in crate::registry) fn to_object(
    arguments: serde_json::Value,
) -> Result<Option<JsonObject>, CallError> {
    match arguments {
        serde_json::Value::Null => Ok(None),
        serde_json::Value::Object(map) => Ok(Some(map)),
        other => Err(CallError::Protocol {
            detail: format!("tool arguments must be a JSON object, got {other}"),
        }),
    }
}
