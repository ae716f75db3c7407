//! What the hosts of one upstream hold there: resource subscriptions and log levels. Behind the
//! gateway a shared upstream has many hosts: it stays subscribed to a resource while any host
//! is, and is sent the most verbose level any host asked for (each host then gets only what
//! its own level admits: the hub's fan-out filters).
//!
//! # Invariants
//!
//! 1. A URI's count is the number of hosts subscribed to it; the upstream is subscribed exactly
//!    while it is above zero.

// Logging is deprecated by SEP-2577; hosts of the session era still set levels.
#![allow(deprecated)]

use std::{
    collections::HashMap,
    sync::{Mutex, MutexGuard, PoisonError},
};

use rmcp::model::LoggingLevel;

/// One host, by the address of its link (unique while it lives).
pub(crate) type HostId = usize;

/// The hosts' subscriptions and levels at one upstream.
#[derive(Debug, Default)]
pub(crate) struct Shares {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    subscribers: HashMap<String, usize>,
    levels: Vec<(HostId, LoggingLevel)>,
}

impl Shares {
    /// One more host subscribed to `uri`: true if it is the first (subscribe the upstream).
    pub(crate) fn subscribe(&self, uri: &str) -> bool {
        let mut inner = self.lock();
        let count = inner.subscribers.entry(uri.to_owned()).or_default();
        *count += 1;
        *count == 1
    }

    /// One host fewer subscribed to `uri`: true if it was the last (unsubscribe the upstream).
    pub(crate) fn unsubscribe(&self, uri: &str) -> bool {
        let mut inner = self.lock();
        let Some(count) = inner.subscribers.get_mut(uri) else {
            return false;
        };
        *count -= 1;
        if *count == 0 {
            inner.subscribers.remove(uri);
            return true;
        }
        false
    }

    /// `host`'s level is `level` now.
    pub(crate) fn set_level(&self, host: HostId, level: LoggingLevel) {
        let mut inner = self.lock();
        inner.levels.retain(|(id, _)| *id != host);
        inner.levels.push((host, level));
    }

    /// `host` left: its level no longer counts.
    pub(crate) fn forget(&self, host: HostId) {
        self.lock().levels.retain(|(id, _)| *id != host);
    }

    /// The most verbose level any host set, if any did.
    pub(crate) fn level(&self) -> Option<LoggingLevel> {
        let inner = self.lock();
        inner
            .levels
            .iter()
            .map(|(_, level)| *level)
            .min_by_key(|level| *level as u8)
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_upstream_is_subscribed_while_any_host_is_and_gets_the_most_verbose_level() {
        let shares = Shares::default();
        assert!(
            shares.subscribe("a://x"),
            "the first host subscribes the upstream"
        );
        assert!(!shares.subscribe("a://x"));
        assert!(!shares.unsubscribe("a://x"), "one host still wants it");
        assert!(shares.unsubscribe("a://x"), "the last one unsubscribes it");
        assert!(!shares.unsubscribe("a://x"), "never below zero");
        assert_eq!(shares.level(), None);
        shares.set_level(1, LoggingLevel::Error);
        shares.set_level(2, LoggingLevel::Info);
        shares.set_level(1, LoggingLevel::Warning);
        assert_eq!(shares.level(), Some(LoggingLevel::Info));
        shares.forget(2);
        assert_eq!(shares.level(), Some(LoggingLevel::Warning));
    }
}
