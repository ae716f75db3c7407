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
    /// Both maps are persistent maps (`imbl`): the next snapshot shares all but the changed
    /// paths with this one, so a publish costs O(tools × log n) whatever the number n of
    /// servers. With `std`'s maps each publish copied every server's entries, which made
    /// starting 10,000 supervisors quadratic (issue 16).
    pub(super) servers: imbl::OrdMap<Arc<str>, Arc<ServerTools>>,
    /// Public name → (its server, its index in that server's set), for the tools [`get`]
    /// cannot find from the name alone ([`indexed`]): most names read back as
    /// `mcp__<server>__<tool>`, and those are found through `servers`. Indexing every tool
    /// cost an idle server of 16 tools about 2 KiB of hash-trie nodes and 16 inserts a publish
    /// (issue 43).
    ///
    /// [`get`]: Snapshot::get
    by_public: imbl::HashMap<Arc<str>, (Arc<str>, usize)>,
    /// The number of registered tools.
    count: usize,
}

/// The most tools of one server that [`Snapshot::get`] looks through by name; a larger set
/// has all its tools in the index.
const SCANNED: usize = 64;

/// The server a public name names when it reads back losslessly: the text between the
/// `mcp__` prefix and the first `__` after it (a lossless name's server part has no `__`,
/// see [`public_name`](super::public_name)).
fn server_part(public_name: &str) -> Option<&str> {
    let rest = public_name.strip_prefix("mcp__")?;
    rest.find("__").map(|end| &rest[..end])
}

/// Whether `tool` of a set of `len` tools goes in the index: [`Snapshot::get`] finds every
/// other tool by reading its server from its name and looking through that server's set.
fn indexed(tool: &RegisteredTool, len: usize) -> bool {
    len > SCANNED || server_part(&tool.public_name) != Some(&*tool.server)
}

impl Snapshot {
    /// Every registered tool, server by server (servers in name order).
    pub fn tools(&self) -> impl Iterator<Item = &RegisteredTool> {
        self.servers.values().flat_map(|s| s.tools.iter())
    }

    /// The number of registered tools.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The tool with this public name.
    pub fn get(&self, public_name: &str) -> Option<&RegisteredTool> {
        if let Some((server, index)) = self.by_public.get(public_name) {
            return self.servers.get(server)?.tools.get(*index);
        }
        let set = self.servers.get(server_part(public_name)?)?;
        if set.tools.len() > SCANNED {
            return None;
        }
        set.tools
            .iter()
            .find(|tool| &*tool.public_name == public_name)
    }

    /// One server's registered tools.
    pub fn server(&self, name: &str) -> Option<&Arc<ServerTools>> {
        self.servers.get(name)
    }

    /// The next snapshot: this one with `server`'s set replaced (or removed). The maps are
    /// shared with this snapshot (a clone of a persistent map is one reference count) and only
    /// `server`'s entries are patched.
    pub(super) fn with_server(
        &self,
        server: &Arc<str>,
        tools: Option<Arc<ServerTools>>,
    ) -> Snapshot {
        let mut next = Snapshot {
            servers: self.servers.clone(),
            by_public: self.by_public.clone(),
            count: self.count,
        };
        next.patch(server, tools);
        next
    }

    /// Replaces (or removes) `server`'s set in place. Only the nodes on the paths to its
    /// entries are touched, and a node is copied only when another snapshot still shares it.
    fn patch(&mut self, server: &Arc<str>, tools: Option<Arc<ServerTools>>) {
        if let Some(old) = self.servers.get(server) {
            let len = old.tools.len();
            for tool in old.tools.iter().filter(|t| indexed(t, len)) {
                self.by_public.remove(&tool.public_name);
            }
            self.count -= len;
        }
        if let Some(set) = &tools {
            let len = set.tools.len();
            for (index, tool) in set.tools.iter().enumerate() {
                if indexed(tool, len) {
                    self.by_public
                        .insert(tool.public_name.clone(), (server.clone(), index));
                }
            }
            self.count += len;
        }
        match tools {
            Some(tools) => self.servers.insert(server.clone(), tools),
            None => self.servers.remove(server),
        };
    }

    /// `server`'s set replaced (or removed) in the registry's current snapshot `current`. When
    /// no reader holds `current` (the registry's own reference is the only one), it is patched
    /// in place: no reader can see it change, and nothing is copied. Otherwise the next
    /// snapshot is built aside ([`with_server`](Self::with_server)) and swapped in whole, so a
    /// reader's snapshot stays as it was taken (invariant 1 of the registry).
    ///
    /// Building aside on every publish copied the persistent maps' nodes on the changed paths
    /// each time (about 100 reference counts a publish, cache misses at 100,000 servers: 6-8 %
    /// of the CPU of starting them, issue 43); readers hold snapshots only briefly, so the
    /// in-place path is the usual one.
    pub(super) fn replace(
        current: &mut Arc<Snapshot>,
        server: &Arc<str>,
        tools: Option<Arc<ServerTools>>,
    ) {
        match Arc::get_mut(current) {
            Some(only) => only.patch(server, tools),
            None => *current = Arc::new(current.with_server(server, tools)),
        }
    }
}
