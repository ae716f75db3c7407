//! The counts of what was dropped for a slow host, and the one line that reports them.

use std::time::Duration;

use super::Kind;

/// The most often a drop count is reported.
pub(in crate::outbox) const REPORT_EVERY: Duration = Duration::from_secs(10);

/// Counts of dropped messages.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Dropped {
    pub(super) log: u64,
    pub(super) progress: u64,
    pub(super) resource_updates: u64,
}

impl Dropped {
    pub(super) fn is_empty(&self) -> bool {
        *self == Dropped::default()
    }

    pub(super) fn add(&mut self, kind: &Kind) {
        match kind {
            Kind::Log => self.log += 1,
            Kind::Progress => self.progress += 1,
            Kind::Updated(_) => self.resource_updates += 1,
            Kind::Changed(_) | Kind::Keep => {}
        }
    }
}

/// The one line that says what was dropped.
pub(super) fn report(dropped: Dropped) {
    if dropped.is_empty() {
        return;
    }
    let Dropped {
        log,
        progress,
        resource_updates,
    } = dropped;
    if resource_updates == 0 {
        tracing::warn!(
            log,
            progress,
            "dropped {log} log messages and {progress} progress notifications for a slow host"
        );
    } else {
        tracing::warn!(
            log,
            progress,
            resource_updates,
            "dropped {log} log messages, {progress} progress notifications and \
             {resource_updates} resource updates for a slow host"
        );
    }
}
