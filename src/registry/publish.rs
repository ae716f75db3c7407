//! Writing the registry: a server's whole tool set swapped in, fenced by generation and
//! checked for duplicate and clashing names (invariants 1-3 of the registry), or taken out; and
//! what changed, for `changes`.

use std::{collections::HashMap, sync::Arc};

use rmcp::model::Tool;

use super::{
    ToolRegistry, ToolsChanged,
    hub::write,
    public_name,
    snapshot::{RegisteredTool, ServerTools, Snapshot},
};
use crate::state::Generation;

/// A tool set swapped in by [`ToolRegistry::publish`], not yet announced.
#[derive(Debug)]
pub(crate) struct Publish {
    /// What changed against the set registered before.
    pub(crate) change: ToolsChanged,
    /// Whether [`ToolRegistry::changes`] hears of it: the server's first set, or a set that
    /// differs from the registered one.
    announce: bool,
}

/// Why a tool list was not published.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
pub enum PublishError {
    /// A newer generation's set is already registered.
    #[error("generation {generation} is older than the registered generation {registered}")]
    Stale {
        /// The generation of the refused list.
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

impl ToolRegistry {
    /// Replaces `server`'s whole tool set with `tools`, listed by `generation`. Readers of
    /// [`snapshot`](Self::snapshot) see the new set at once; [`changes`](Self::changes) hears of
    /// it only from [`announce`](Self::announce), which the supervisor calls once its status
    /// says the generation takes calls (tools are announced only when calls can reach them).
    pub(crate) fn publish(
        &self,
        server: &Arc<str>,
        generation: Generation,
        tools: Vec<Tool>,
    ) -> Result<Publish, PublishError> {
        let mut next = Vec::with_capacity(tools.len());
        let mut seen = HashMap::with_capacity(tools.len());
        for tool in tools {
            let (definition, raw) = self.inner.definitions.share(tool);
            if seen.insert(raw.clone(), ()).is_some() {
                return Err(PublishError::DuplicateTool(raw.to_string()));
            }
            next.push(RegisteredTool {
                public_name: Arc::from(public_name(server, &raw)),
                server: server.clone(),
                raw_name: raw,
                definition,
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
            if let Some(owner) = guard.get(&tool.public_name)
                && owner.server != *server
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
        Snapshot::replace(&mut guard, server, Some(set));
        drop(guard);
        Ok(Publish {
            // A reconnect that lists the same tools again changes nothing a host can see.
            announce: previous.is_none() || !change.is_empty(),
            change,
        })
    }

    /// Tells [`changes`](Self::changes) of a publish that changed what a host can see.
    pub(crate) fn announce(&self, publish: &Publish) {
        if publish.announce {
            let _ = self.inner.changes.send(publish.change.clone());
        }
    }

    /// Removes `server`'s tools, and tells [`changes`](Self::changes).
    pub(crate) fn unregister(&self, server: &Arc<str>) -> Option<ToolsChanged> {
        let mut guard = write(&self.inner.snapshot);
        let previous = guard.servers.get(server).cloned()?;
        let change = diff(server, previous.generation, Some(&previous), &[]);
        Snapshot::replace(&mut guard, server, None);
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
