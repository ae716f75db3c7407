//! The in-memory [`HostStore`]: one map in this process, right for one gateway (or a fleet whose
//! balancer keeps each session on one replica).

use std::{
    collections::HashMap,
    sync::{Mutex, PoisonError},
};

use super::{HostState, HostStore};

/// Host sessions' state in this process's memory. The default store.
#[derive(Debug, Default)]
pub struct MemoryHostStore {
    /// Every host's state by key; the lock is never held across an await or a call out.
    states: Mutex<HashMap<String, HostState>>,
}

impl MemoryHostStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl HostStore for MemoryHostStore {
    fn view(&self, key: &str, look: &mut dyn FnMut(Option<&HostState>)) {
        let states = self.states.lock().unwrap_or_else(PoisonError::into_inner);
        look(states.get(key));
    }

    fn update(&self, key: &str, change: &mut dyn FnMut(&mut HostState)) {
        let mut states = self.states.lock().unwrap_or_else(PoisonError::into_inner);
        change(states.entry(key.to_owned()).or_default());
    }

    fn remove(&self, key: &str) -> Option<HostState> {
        let mut states = self.states.lock().unwrap_or_else(PoisonError::into_inner);
        states.remove(key)
    }

    fn len(&self) -> usize {
        self.states
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

#[cfg(test)]
#[allow(deprecated)]
mod tests {
    use super::*;

    #[test]
    fn a_host_state_is_written_read_and_removed_by_key() {
        let store: &dyn HostStore = &MemoryHostStore::new();
        assert!(
            store.read("a", |s| s.level).is_none(),
            "nothing before a write"
        );
        store.change("a", |s| s.level = Some(rmcp::model::LoggingLevel::Debug));
        let added = store.change("a", |s| {
            s.subscriptions
                .insert("mock://x".into(), "files".into())
                .is_none()
        });
        assert_eq!(added, Some(true));
        store.change("b", |s| s.protocol = Some("2025-11-25".into()));
        assert_eq!(store.len(), 2);
        assert_eq!(
            store.read("a", |s| s.level),
            Some(Some(rmcp::model::LoggingLevel::Debug))
        );
        assert_eq!(store.read("b", |s| s.subscriptions.len()), Some(0));
        let gone = store.remove("a").expect("a's state");
        assert_eq!(gone.subscriptions.len(), 1);
        assert!(store.read("a", |_| ()).is_none());
        assert_eq!(store.len(), 1);
    }

    #[test]
    fn a_state_survives_a_round_trip_through_json() {
        let mut state = HostState {
            protocol: Some("2025-06-18".into()),
            level: Some(rmcp::model::LoggingLevel::Warning),
            ..HostState::default()
        };
        state.subscriptions.insert("mock://a".into(), "srv".into());
        let text = serde_json::to_string(&state).expect("serialize");
        let back: HostState = serde_json::from_str(&text).expect("deserialize");
        assert_eq!(back, state);
    }
}
