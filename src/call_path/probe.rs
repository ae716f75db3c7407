//! The probe before a call that follows a long silence.

use std::time::Duration;

use super::CallPath;
use crate::{
    CallError,
    session::{
        live::Live,
        probe::{Probed, Prober},
    },
};

impl CallPath {
    /// The gRPC keepalive rule: after a long silence, prove the connection before trusting it,
    /// so a dead half-open connection fails in one probe timeout instead of hanging the call.
    /// A busy or overloaded server is alive: the call goes ahead. What the probe's outcome
    /// means is decided by [`Live::probe`]; this only says what the call becomes.
    pub(super) async fn probe_before_call(
        &self,
        live: &Live,
        limit: Duration,
    ) -> Result<(), CallError> {
        match live.probe(Prober::BeforeCall, limit).await {
            None | Some(Probed::Alive | Probed::Overloaded { .. } | Probed::Busy) => Ok(()),
            Some(Probed::Missed { detail, .. }) => Err(self.lost(live, detail, false)),
            Some(Probed::Dead(death)) => Err(self.lost(live, death.detail, false)),
            Some(Probed::Unauthorized(detail)) => Err(self.rejected(Some(401), detail)),
            // No token for the probe, so none for the call: it is not sent. Not a miss.
            Some(Probed::NotSent(detail)) => Err(self.auth_unavailable(detail)),
        }
    }
}
