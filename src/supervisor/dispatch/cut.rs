//! A 2026-07-28 request whose answer's stream was cut before its answer (SEP-2575): what the
//! call becomes, and what is learned of the server.
//!
//! In 2026-07-28 a broken response stream loses its request: the server MUST take the closed
//! stream as the request's cancellation, the revision has no `Last-Event-ID` to resume it, and
//! a client that still wants the answer MUST issue it again as a new request with a new id. A
//! cut says nothing of the server by itself: a load balancer, a NAT or an idle timeout on the
//! path cuts one connection while the server lives on.
//!
//! # Invariants
//!
//! 1. A cut does not end the generation. A request issued again is itself the check: its
//!    connection refused or reset is the generation's death (the verdict table), and a request
//!    refused so never ran and may go once to the next generation. A call that is not issued
//!    again is followed by one probe (when the heartbeat is on), which ends the generation only
//!    if the server is gone.
//! 2. Issued again once per call, within the call's deadline, as a new request (rmcp numbers
//!    it anew): every request but `tools/call` (the others only read), and a tool call when a
//!    second run is harmless, by the rule of a call lost with its generation (DESIGN invariant
//!    7): the tool annotated `readOnlyHint` or `idempotentHint`, and `replay` `annotated`.
//! 3. Otherwise, or when the request issued again is cut too, the call fails
//!    `ConnectionLost { may_have_run: true }` naming the generation, which lives on: the server
//!    was told the call was cancelled, but may have run part or all of it first. Whoever knows
//!    that a second run is safe calls again, and a new call is a new request with a new id, as
//!    SEP-2575 asks; this crate never repeats a side effect on its own.
//! 4. A cut on a generation already reported dead is that death: the call is lost with its
//!    generation, and the rules of that loss apply.

use rmcp::ServiceError;
use tokio::time::Instant;

use super::{CallPath, Sent};
use crate::{
    CallError,
    supervisor::session::{live::Live, probe::Prober},
    transport::stream_lost,
};

impl CallPath {
    /// What a failed send is when `error` says its answer's stream was cut (invariants 1 and
    /// 4); `None` for any other error.
    pub(super) fn cut(&self, live: &Live, error: &ServiceError) -> Option<Sent> {
        let lost = stream_lost(error)?;
        let detail = format!("StreamableHttp: {lost}");
        if live.dead.is_cancelled() {
            let detail = format!("the generation died during the call: {detail}");
            return Some(Sent::Done(Err(self.lost(live, detail, true))));
        }
        Some(Sent::Cut(detail))
    }

    /// The answer of a cut call that is not issued again (invariant 3), once one probe, inside
    /// the call's deadline, has said whether the server is gone (invariant 1). `again`: it was
    /// the request issued again that was cut.
    pub(super) async fn after_cut(
        &self,
        live: &Live,
        deadline: Instant,
        detail: String,
        again: bool,
    ) -> CallError {
        let within = deadline.saturating_duration_since(Instant::now());
        if let Some(probed) = live.probe(Prober::AfterCut, within).await {
            tracing::debug!(server = %self.server, generation = %live.generation, ?probed, "probed after a cut answer stream");
        }
        let why = match again {
            true => "cut again once issued again as a new request",
            false => {
                "not issued again: the tool is not annotated read-only or idempotent, or replay is `never`"
            }
        };
        let detail = format!(
            "{detail}; the server takes a cut stream as the call's cancellation, but may have \
             run part or all of it; {why}"
        );
        self.lost(live, detail, true)
    }
}
