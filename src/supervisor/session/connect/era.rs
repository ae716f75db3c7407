//! Which protocol era an attempt speaks, and what `auto` remembers.
//!
//! 2025-11-25 and earlier open a session with `initialize`; 2026-07-28 servers answer
//! `server/discover` and keep no session. With `protocol: auto` an attempt asks with
//! `server/discover` and falls back to `initialize` when the server does not know it (rmcp's
//! `Auto` lifecycle, on the same transport), whichever way the server says so: an error, a
//! result that is not a discover result, an HTTP 4xx or an empty 2xx (see
//! [`crate::transport::refusal`]). What worked is remembered: a server known to be
//! legacy is not asked again, until it refuses `initialize` with `-32022` (it was upgraded); then
//! the memory is dropped and the next attempt asks again. Legacy SSE is always 2024-11-05.

use std::sync::atomic::{AtomicU8, Ordering};

use rmcp::{model::ProtocolVersion, service::ClientLifecycleMode};

use crate::config::ProtocolChoice;

/// The era `auto` found for one supervisor; shared by all its attempts.
#[derive(Debug, Default)]
#[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
pub struct EraMemory {
    /// 0: not known; 1: legacy (`initialize`); 2: modern (`server/discover`).
    era: AtomicU8,
}

impl EraMemory {
    fn legacy(&self) -> bool {
        self.era.load(Ordering::Relaxed) == 1
    }

    /// Records the version a handshake negotiated.
    #[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
    pub fn remember(&self, negotiated: &ProtocolVersion) {
        let era = if is_modern(negotiated) { 2 } else { 1 };
        self.era.store(era, Ordering::Relaxed);
    }

    /// Forgets the era: the next attempt asks again.
    pub(in crate::supervisor) fn forget(&self) {
        self.era.store(0, Ordering::Relaxed);
    }
}

/// True for a version without `initialize` (2026-07-28 and later).
#[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
pub fn is_modern(version: &ProtocolVersion) -> bool {
    !version.has_initialize()
}

/// How one attempt opens its session.
pub(in crate::supervisor) fn lifecycle(
    choice: ProtocolChoice,
    memory: &EraMemory,
    legacy_sse: bool,
) -> ClientLifecycleMode {
    let modern = || vec![ProtocolVersion::V_2026_07_28];
    match choice {
        _ if legacy_sse => ClientLifecycleMode::Initialize,
        ProtocolChoice::V2025_11_25 => ClientLifecycleMode::Initialize,
        ProtocolChoice::V2026_07_28 => ClientLifecycleMode::Discover {
            preferred_versions: modern(),
        },
        ProtocolChoice::Auto if memory.legacy() => ClientLifecycleMode::Initialize,
        ProtocolChoice::Auto => ClientLifecycleMode::Auto {
            preferred_versions: modern(),
            legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_asks_until_it_knows_a_legacy_server_and_asks_again_when_told_to_forget() {
        let memory = EraMemory::default();
        let auto = |m: &EraMemory| lifecycle(ProtocolChoice::Auto, m, false);
        assert!(matches!(auto(&memory), ClientLifecycleMode::Auto { .. }));
        memory.remember(&ProtocolVersion::V_2025_11_25);
        assert!(matches!(auto(&memory), ClientLifecycleMode::Initialize));
        memory.forget();
        assert!(matches!(auto(&memory), ClientLifecycleMode::Auto { .. }));
        memory.remember(&ProtocolVersion::V_2026_07_28);
        assert!(matches!(auto(&memory), ClientLifecycleMode::Auto { .. }));
    }

    #[test]
    fn a_pinned_protocol_and_legacy_sse_ignore_the_memory() {
        let memory = EraMemory::default();
        memory.remember(&ProtocolVersion::V_2025_11_25);
        assert!(matches!(
            lifecycle(ProtocolChoice::V2026_07_28, &memory, false),
            ClientLifecycleMode::Discover { .. }
        ));
        assert!(matches!(
            lifecycle(ProtocolChoice::Auto, &EraMemory::default(), true),
            ClientLifecycleMode::Initialize
        ));
        assert!(matches!(
            lifecycle(ProtocolChoice::V2025_11_25, &EraMemory::default(), false),
            ClientLifecycleMode::Initialize
        ));
    }
}
