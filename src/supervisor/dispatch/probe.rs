//! The probe before a call that follows a long silence.

use std::time::Duration;

use super::CallPath;
use crate::{
    CallError,
    call::CallPhase,
    supervisor::session::{
        live::Live,
        probe::{Probed, Prober},
    },
};

/// Why a call does not go to the generation it probed.
pub(super) enum NotThere {
    /// The probe ended the generation: the call, not sent, may go to the next one (with this
    /// error if none comes within its deadline).
    Ended(CallError),
    /// The call ends here.
    Failed(CallError),
}

impl CallPath {
    /// The gRPC keepalive rule: after a long silence, prove the connection before trusting it,
    /// so a dead half-open connection costs one probe timeout instead of hanging the call. A
    /// probe unanswered for its whole timeout ends the generation, and the call goes to the
    /// next one (`session::probe`, invariant 4). A busy or overloaded server is alive, and a
    /// suspect answer that was not the last miss allowed says the connection is not half-open:
    /// the call goes ahead. What the probe's outcome means is decided by [`Live::probe`]; this
    /// only says what the call becomes.
    pub(super) async fn probe_before_call(
        &self,
        live: &Live,
        limit: Duration,
    ) -> Result<(), NotThere> {
        match live.probe(Prober::BeforeCall, limit).await {
            None
            | Some(
                Probed::Alive
                | Probed::Overloaded { .. }
                | Probed::Busy
                | Probed::Missed { dead: false, .. },
            ) => Ok(()),
            Some(Probed::Missed { detail, dead: true }) => {
                Err(NotThere::Ended(self.lost(live, detail, false)))
            }
            Some(Probed::Dead(death)) => Err(NotThere::Ended(self.lost(live, death.detail, false))),
            // The call's own deadline came first: nothing was learned, nothing was sent.
            Some(Probed::CutShort(after)) => Err(NotThere::Failed(CallError::Timeout {
                server: self.server.to_string(),
                phase: CallPhase::Probe,
                after,
            })),
            Some(Probed::Unauthorized(detail)) => {
                Err(NotThere::Failed(self.rejected(Some(401), detail)))
            }
            // No token for the probe, so none for the call: it is not sent. Not a miss.
            Some(Probed::NotSent(detail)) => Err(NotThere::Failed(self.auth_unavailable(detail))),
        }
    }
}
