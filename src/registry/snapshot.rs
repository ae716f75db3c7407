//! What hosts read: a [`Snapshot`] of every server's tool set, immutable once built (invariant 1
//! of the registry).

use std::sync::Arc;

use rmcp::model::Tool;

use crate::state::Generation;

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
    /// Each server's set; written only by `publish` (building the next snapshot aside).
    ///
    /// Both indexes are persistent maps (`imbl`): the next snapshot shares all but the changed
    /// paths with this one, so a publish costs O(tools × log n) whatever the number n of
    /// servers. With `std`'s maps each publish copied every server's entries, which made
    /// starting 10,000 supervisors quadratic (issue 16).
    pub(super) servers: imbl::OrdMap<Arc<str>, Arc<ServerTools>>,
    /// Public name → (its server, its index in that server's set).
    pub(super) by_public: imbl::HashMap<Arc<str>, (Arc<str>, usize)>,
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

    /// The next snapshot: this one with `server`'s set replaced (or removed). The indexes are
    /// shared with this snapshot (a clone of a persistent map is one reference count) and only
    /// `server`'s entries are patched.
    pub(super) fn with_server(
        &self,
        server: &Arc<str>,
        tools: Option<Arc<ServerTools>>,
    ) -> Snapshot {
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
