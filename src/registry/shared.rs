//! One copy of each distinct tool definition, however many servers list it.
//!
//! A gateway that holds thousands of connections to the same kind of server gets the same tool
//! list from each of them; each connection used to keep its own parsed copy (about 27 KiB for
//! the mock server's tools, the largest share of a connection's heap that is ours to keep;
//! BENCHMARKS.md section 13). [`Definitions::share`] hands out one `Arc<Tool>` per distinct
//! definition: equal definitions (`Tool: PartialEq`, so names, descriptions, schemas and
//! annotations alike) share one allocation, and a definition no server lists any more is freed
//! with its last holder.
//!
//! # Bounds
//!
//! Buckets are keyed by a hash of the definition's JSON, so a publish compares a definition
//! only with the definitions that hash alike (in practice: equal ones). Entries whose
//! definitions are gone are dropped from the buckets a publish touches, and from every bucket
//! whenever the table has doubled since it was last swept: the table stays within twice the
//! number of distinct live definitions, plus one sweep's worth.

use std::{
    collections::HashMap,
    hash::{Hash, Hasher},
    sync::{Arc, Mutex, PoisonError, Weak},
};

use rmcp::model::Tool;

/// The table of distinct definitions (see the module docs).
#[derive(Debug, Default)]
pub(super) struct Definitions {
    table: Mutex<Table>,
}

#[derive(Debug, Default)]
struct Table {
    /// Each definition with its name as an `Arc<str>`, shared the same way (a registered tool
    /// keeps its raw name beside its definition).
    buckets: HashMap<u64, Vec<Entry>>,
    /// Entries after the last sweep; the next sweep comes at twice that.
    swept_at: usize,
    entries: usize,
}

/// A definition and its name, held weakly: freed with their last holders.
type Entry = (Weak<Tool>, Weak<str>);

impl Definitions {
    /// The shared copy of `tool`, and of its name: an existing equal one if any server still
    /// lists it.
    pub(super) fn share(&self, tool: Tool) -> (Arc<Tool>, Arc<str>) {
        let key = fingerprint(&tool);
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        let bucket = table.buckets.entry(key).or_default();
        let before = bucket.len();
        bucket.retain(|(weak, _)| weak.strong_count() > 0);
        let found = bucket.iter_mut().find_map(|(weak, name)| {
            let shared = weak.upgrade().filter(|shared| **shared == tool)?;
            // A host may hold the definition after every registered tool (and the name) is gone.
            let name = name.upgrade().unwrap_or_else(|| {
                let fresh: Arc<str> = Arc::from(shared.name.as_ref());
                *name = Arc::downgrade(&fresh);
                fresh
            });
            Some((shared, name))
        });
        let after = bucket.len();
        let shared = match found {
            Some(shared) => shared,
            None => {
                let name: Arc<str> = Arc::from(tool.name.as_ref());
                let shared = Arc::new(tool);
                bucket.push((Arc::downgrade(&shared), Arc::downgrade(&name)));
                (shared, name)
            }
        };
        let added = bucket.len() - after;
        table.entries = table.entries + added - (before - after);
        if table.entries > 2 * table.swept_at.max(64) {
            table.sweep();
        }
        shared
    }

    /// Entries in the table, live or not (for tests).
    #[cfg(test)]
    pub(super) fn entries(&self) -> usize {
        self.table
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entries
    }
}

impl Table {
    fn sweep(&mut self) {
        self.buckets.retain(|_, bucket| {
            bucket.retain(|(weak, _)| weak.strong_count() > 0);
            !bucket.is_empty()
        });
        self.entries = self.buckets.values().map(Vec::len).sum();
        self.swept_at = self.entries;
    }
}

/// A hash of the definition's JSON form (what the server sent, re-serialized).
fn fingerprint(tool: &Tool) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    match serde_json::to_vec(tool) {
        Ok(json) => json.hash(&mut hasher),
        // Not expected for a definition that was parsed from JSON; its name still buckets it.
        Err(_) => tool.name.hash(&mut hasher),
    }
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, description: &str) -> Tool {
        serde_json::from_value(json!({
            "name": name,
            "description": description,
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
        }))
        .expect("a tool")
    }

    #[test]
    fn equal_definitions_share_one_copy_and_different_ones_do_not() {
        let table = Definitions::default();
        let (a, a_name) = table.share(tool("echo", "Echoes."));
        let (b, b_name) = table.share(tool("echo", "Echoes."));
        let (c, _) = table.share(tool("echo", "Echoes twice."));
        assert!(Arc::ptr_eq(&a, &b) && Arc::ptr_eq(&a_name, &b_name));
        assert_eq!(&*a_name, "echo");
        assert!(!Arc::ptr_eq(&a, &c));
        // The name's last holder gone, the definition still held: a fresh name.
        drop((a_name, b_name));
        let (d, d_name) = table.share(tool("echo", "Echoes."));
        assert!(Arc::ptr_eq(&a, &d));
        assert_eq!(&*d_name, "echo");
        assert_eq!(*c, tool("echo", "Echoes twice."));
    }

    #[test]
    fn a_definition_nobody_holds_is_freed_and_the_table_stays_bounded() {
        let table = Definitions::default();
        for i in 0..10_000 {
            // Each definition is dropped at once: the table must not keep 10,000 entries.
            drop(table.share(tool("t", &format!("version {i}"))));
        }
        assert!(table.entries() <= 2 * 64 + 1, "{} entries", table.entries());
        let kept: Vec<_> = (0..500)
            .map(|i| table.share(tool("k", &format!("kept {i}"))))
            .collect();
        assert!(table.entries() >= kept.len());
        assert!(
            table.entries() <= 2 * kept.len() + 1,
            "{} entries",
            table.entries()
        );
    }
}
