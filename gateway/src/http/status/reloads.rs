//! What the status page says of the reloads: how many were applied and refused, and the
//! last one's outcome (what changed, or why nothing did, bounded).

use std::{
    sync::PoisonError,
    time::{SystemTime, UNIX_EPOCH},
};

use serde_json::{Value, json};

use super::Board;
use crate::http::{ReloadError, Reloaded, reload::error_chain};

/// The reloads seen.
#[derive(Debug, Default)]
pub(in crate::http) struct Reloads {
    last: Option<(SystemTime, Value)>,
    applied: u64,
    refused: u64,
}

impl Board {
    /// A reload was applied or refused: the page says so.
    pub(in crate::http) fn reloaded(&self, outcome: &Result<Reloaded, ReloadError>) {
        let facts = match outcome {
            Ok(done) => json!({
                "outcome": "applied",
                "added": done.added, "removed": done.removed, "changed": done.changed,
                "unchanged": done.unchanged.len(),
            }),
            Err(error) => json!({
                "outcome": "refused",
                "error": crate::calls::bounded(&error_chain(error), 400),
            }),
        };
        let mut reloads = self.reloads.lock().unwrap_or_else(PoisonError::into_inner);
        reloads.last = Some((SystemTime::now(), facts));
        match outcome.is_ok() {
            true => reloads.applied += 1,
            false => reloads.refused += 1,
        }
        drop(reloads);
        self.changed.notify_waiters();
    }

    /// The reloads' facts, for the snapshot.
    pub(in crate::http) fn reload_facts(&self) -> Value {
        let reloads = self.reloads.lock().unwrap_or_else(PoisonError::into_inner);
        let last = reloads.last.clone().map(|(at, mut facts)| {
            let ms = at
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_millis();
            facts["at_ms"] = Value::from(u64::try_from(ms).unwrap_or(u64::MAX));
            facts
        });
        json!({"applied": reloads.applied, "refused": reloads.refused, "last": last})
    }
}
