//! The probe before a call that follows a long silence.

use std::time::Duration;

use tokio::time::Instant;

use super::Link;
use crate::{
    CallError,
    state::{Cause, Death},
    supervisor::live::Live,
    verdict::Verdict,
};

impl Link {
    /// The gRPC keepalive rule: after a long silence, prove the connection before trusting it,
    /// so a dead half-open connection fails in one probe timeout instead of hanging the call.
    /// A busy or overloaded server is alive: the call goes ahead.
    pub(super) async fn probe_before_call(
        &self,
        live: &Live,
        timeout: Duration,
        failures: u32,
    ) -> Result<(), CallError> {
        let sent = Instant::now();
        match live.probe(timeout).await {
            Verdict::Alive | Verdict::Rejected { .. } | Verdict::Overload { .. } => {
                live.misses.clear();
                Ok(())
            }
            Verdict::Busy => Ok(()),
            Verdict::Suspect { detail, .. } => {
                if live.misses.record(sent).is_some_and(|m| m >= failures) {
                    live.report_death(Death::new(
                        Cause::HeartbeatTimeout,
                        format!("pre-call probe: {detail}"),
                    ));
                }
                Err(self.lost(live, format!("pre-call probe: {detail}"), false))
            }
            Verdict::Death(death) => {
                let detail = format!("pre-call probe: {}", death.detail);
                live.report_unless_ended(Death::new(death.cause, detail.clone()));
                Err(self.lost(live, detail, false))
            }
            Verdict::Unauthorized { detail } => {
                live.report_death(Death::new(
                    Cause::Unauthorized,
                    format!("pre-call probe: {detail}"),
                ));
                Err(self.rejected(Some(401), detail))
            }
            // No token for the probe, so none for the call: it is not sent. Not a miss.
            Verdict::AuthUnavailable { detail } => Err(self.auth_unavailable(detail)),
        }
    }
}
