//! The host-session store as rmcp's `SessionStore`: how a request for a session this gateway
//! does not hold becomes a session restored from the store.
//!
//! rmcp asks `load` when a request names a session it has no worker for; given what the host
//! sent in its `initialize`, it starts a worker under the same id and replays that `initialize`
//! (marked with `SessionRestoreMarker`), and the core rebuilds what the host had on the
//! upstreams (`gateway/src/renew.rs`). `store` comes after every
//! `initialize` this gateway answers: the session is one other replicas may be asked for. `delete`
//! comes after the host's `DELETE`.

use std::sync::{
    Arc,
    atomic::{AtomicU64, Ordering},
};

use rmcp::{
    model::{InitializeRequestParams, ProtocolVersion},
    transport::streamable_http_server::session::{SessionState, SessionStore, SessionStoreError},
};

use super::opening::Openings;
use crate::state::{HostState, HostStore};

/// The host-session store, as rmcp's session store; the openings of the requests that wait on
/// a take-over.
pub(in crate::http) struct Restore(
    pub(in crate::http) Arc<dyn HostStore>,
    pub(in crate::http) Arc<Openings>,
    /// What the status page says of the store.
    pub(in crate::http) Arc<StoreCounts>,
);

/// The `initialize` to replay for session `id` claimed with `state`; none (and the record
/// removed) when the record lacks what `initialize` said: the host then starts again.
pub(in crate::http) fn replayable(
    store: &dyn HostStore,
    id: &str,
    state: HostState,
) -> Option<InitializeRequestParams> {
    let version = (state.protocol)
        .and_then(|protocol| serde_json::from_value::<ProtocolVersion>(protocol.into()).ok());
    let (Some(version), Some(client)) = (version, state.client) else {
        store.remove(id);
        return None;
    };
    Some(InitializeRequestParams::new(state.capabilities, client).with_protocol_version(version))
}

#[async_trait::async_trait]
impl SessionStore for Restore {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        // A store that cannot tell is an error (rmcp answers 500), not an unknown session
        // (404): the host keeps its session and asks again.
        let claimed = self.0.claim(session_id).await;
        self.2.claimed(claimed.is_ok());
        let Some(state) = claimed? else {
            return Ok(None);
        };
        let Some(params) = replayable(&*self.0, session_id, state) else {
            return Ok(None);
        };
        tracing::info!("a host session held elsewhere is served here from now on");
        // Ours now: the requests waiting on it get their heads before it is rebuilt (starting
        // its own upstreams may take seconds), so a host whose request dies with this process
        // from here on can ask for it again (`gateway/src/http/opening/mod.rs`).
        self.1.taken_over(session_id);
        self.2.takeovers.fetch_add(1, Ordering::Relaxed);
        Ok(Some(SessionState::new(params)))
    }

    async fn store(
        &self,
        session_id: &str,
        _state: &SessionState,
    ) -> Result<(), SessionStoreError> {
        self.0.share(session_id).await;
        self.2.shared.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        self.0.forget(session_id);
        Ok(())
    }
}

/// What the fleet's store did here: take-overs, records shared, claims that failed.
#[derive(Debug, Default)]
pub(in crate::http) struct StoreCounts {
    pub(in crate::http) takeovers: AtomicU64,
    pub(in crate::http) shared: AtomicU64,
    pub(in crate::http) claims_failed: AtomicU64,
    /// Whether the last claim got an answer from the store (0 none yet, 1 yes, 2 no).
    pub(in crate::http) last_claim: AtomicU64,
}

impl StoreCounts {
    pub(in crate::http) fn claimed(&self, answered: bool) {
        if !answered {
            self.claims_failed.fetch_add(1, Ordering::Relaxed);
        }
        let last = if answered { 1 } else { 2 };
        self.last_claim.store(last, Ordering::Relaxed);
    }
}
