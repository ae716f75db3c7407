//! One send of a request, and what its answer means for the request and for the generation.

use std::{sync::Arc, time::Duration};

use rmcp::{
    ServiceError,
    model::{ClientRequest, RequestId, ServerResult},
};
use tokio::time::Instant;

use super::{CallPath, Sent, abandon::Abandon};
use crate::{
    CallError,
    call::{CallPhase, ProgressFn},
    state::{Cause, Death},
    supervisor::session::{
        live::Live,
        probe::{Probed, Prober},
        relay::SETTLE_LIMIT,
    },
    transport::{judge, never_ran},
    verdict::Verdict,
};

/// The shortest wait before a call refused for load is sent again (a `Retry-After: 0`, or a
/// date in the past, would otherwise resend at once, as fast as the server can refuse).
const OVERLOAD_MIN_WAIT: Duration = Duration::from_millis(100);
/// How many times one call is sent again after being refused for load.
const OVERLOAD_RESENDS: u32 = 5;

/// How long a call whose generation was reported dead by someone else still waits for its own
/// outcome, which may say that it never left (a refused connection, a closed pipe): such a call
/// goes to the next generation instead of failing as one that may have run.
const DEATH_GRACE: Duration = Duration::from_millis(500);

impl CallPath {
    /// Sends `request` once on `live`, inside `deadline`; its progress goes to `progress`.
    /// `overloads` counts the refusals for load so far; each one waits longer (from
    /// [`OVERLOAD_MIN_WAIT`], doubling, or the server's `Retry-After` if longer).
    ///
    /// Dropping the future (or the deadline passing) abandons the request: the server is sent
    /// `notifications/cancelled` for it.
    pub(super) async fn send_once(
        &self,
        live: &Arc<Live>,
        mut request: ClientRequest,
        deadline: Instant,
        limit: Duration,
        overloads: &mut u32,
        progress: Option<&ProgressFn>,
    ) -> Sent {
        let op = crate::telemetry::Op::request(&live.telemetry, &request);
        op.inject(&mut request);
        let sent = self
            .send_traced(live, request, deadline, limit, overloads, progress, &op)
            .await;
        op.end(sent.outcome());
        sent
    }

    /// [`send_once`](Self::send_once) inside the request's client span (`op`).
    #[expect(clippy::too_many_arguments, reason = "send_once's own, plus its span")]
    async fn send_traced(
        &self,
        live: &Arc<Live>,
        request: ClientRequest,
        deadline: Instant,
        limit: Duration,
        overloads: &mut u32,
        progress: Option<&ProgressFn>,
        op: &crate::telemetry::Op,
    ) -> Sent {
        let sent = Instant::now();
        let id = std::sync::OnceLock::new();
        let outcome = {
            let _in_flight = live.call_started();
            let exchange = op.within(self.exchange(live, request, progress, &id));
            tokio::pin!(exchange);
            tokio::select! {
                biased;
                outcome = tokio::time::timeout_at(deadline, &mut exchange) => outcome,
                _ = live.dead.cancelled() => {
                    let grace = deadline.min(Instant::now() + DEATH_GRACE);
                    match tokio::time::timeout_at(grace, &mut exchange).await {
                        Ok(outcome) => Ok(outcome),
                        Err(_) => return self.died_during(live, id.get()).await,
                    }
                }
            }
        };
        let error = match outcome {
            Err(_) => {
                live.activity.mark_overdue();
                return Sent::Done(Err(CallError::Timeout {
                    server: self.server.to_string(),
                    phase: CallPhase::Answer,
                    after: limit,
                }));
            }
            // Any answer proves the server alive: the next miss is the first again.
            Ok(Ok(result)) => {
                live.misses.clear();
                return Sent::Done(Ok(result));
            }
            Ok(Err(ServiceError::McpError(e))) => {
                live.misses.clear();
                return Sent::Done(Err(CallError::Server(e)));
            }
            Ok(Err(e)) => e,
        };
        // Boxed: else every call's future is 3.8 KB wider, and moved whole (BENCHMARKS.md § 23).
        Box::pin(self.after_error(live, &error, id.get(), sent, deadline, overloads, op)).await
    }

    /// The call's generation died (reported by someone else) and the call's own outcome did not
    /// follow within [`DEATH_GRACE`]: it never ran if it never left, or else it may have.
    async fn died_during(&self, live: &Live, id: Option<&RequestId>) -> Sent {
        if never_ran(&live.activity, id, None).await {
            return Sent::Unsent(self.lost(
                live,
                "the generation died before the call left",
                false,
            ));
        }
        Sent::Done(Err(self.lost(
            live,
            "the generation died during the call",
            true,
        )))
    }

    /// Sends `request` and waits for its answer, with its progress routed to `progress` and a
    /// cancellation sent if this future is dropped first.
    async fn exchange(
        &self,
        live: &Live,
        request: ClientRequest,
        progress: Option<&ProgressFn>,
        id: &std::sync::OnceLock<RequestId>,
    ) -> Result<ServerResult, ServiceError> {
        // rmcp picks the progress token inside the send, and the server's progress can come
        // back before the send returns: it is held for this call's route until then (`Relay`).
        // The lean link numbers the request first and sends it only when its answer is awaited,
        // so there the route is in place before anything can come back.
        let sending = progress.map(|_| self.relay.sending(live.generation));
        let outgoing = live.link.start(request).await?;
        let _ = id.set(outgoing.id().clone());
        crate::telemetry::request_id(outgoing.id());
        let route = sending
            .zip(progress)
            .map(|(sending, callback)| sending.route(outgoing.progress_token(), callback.clone()));
        let mut abandon = Abandon {
            live,
            id: Some(outgoing.id().clone()),
        };
        let result = outgoing.answer().await;
        abandon.id = None;
        if let Some(route) = &route
            && !route.settled(SETTLE_LIMIT).await
        {
            // rmcp hands each notification to its own task but the answer straight to us, so
            // progress sent before the answer can still be on its way (see `Relay`).
            tracing::debug!(
                limit = ?SETTLE_LIMIT,
                "progress received before the answer was not delivered in time"
            );
        }
        result
    }

    /// What a failed send means (see [`crate::verdict`]).
    #[expect(
        clippy::too_many_arguments,
        reason = "the send's own facts, each used once"
    )]
    async fn after_error(
        &self,
        live: &Live,
        error: &ServiceError,
        id: Option<&RequestId>,
        sent: Instant,
        deadline: Instant,
        overloads: &mut u32,
        op: &crate::telemetry::Op,
    ) -> Sent {
        let verdict = judge(error);
        op.verdict(&verdict);
        if let Some(cut) = self.cut(live, error) {
            return cut;
        }
        let failed = match verdict {
            Verdict::Overload {
                status,
                retry_after: Some(asked),
            } if *overloads < OVERLOAD_RESENDS
                && crate::clock::deadline_in(overload_wait(asked, *overloads)) < deadline =>
            {
                let wait = overload_wait(asked, *overloads);
                *overloads += 1;
                tracing::debug!(server = %self.server, generation = %live.generation, status, wait_ms = wait.as_millis() as u64, "call refused for load; sending it again after Retry-After");
                tokio::select! {
                    _ = tokio::time::sleep(wait) => return Sent::Again,
                    _ = live.dead.cancelled() => self.lost(live, "the generation died while waiting out Retry-After", false),
                }
            }
            Verdict::Overload {
                status,
                retry_after,
            } => CallError::Overloaded {
                server: self.server.to_string(),
                status,
                retry_after,
            },
            Verdict::Suspect { status, detail } => {
                self.suspect(live, sent).await;
                CallError::Http {
                    server: self.server.to_string(),
                    status,
                    detail,
                }
            }
            Verdict::Death(death) => {
                live.report_unless_ended(Death::new(
                    death.cause,
                    format!("call path: {}", death.detail),
                ));
                if never_ran(&live.activity, id, Some(error)).await {
                    let detail = format!("not run by the server ({})", death.detail);
                    return Sent::Unsent(self.lost(live, detail, false));
                }
                self.lost(live, death.detail, true)
            }
            Verdict::Unauthorized { detail } => {
                live.report_death(Death::new(
                    Cause::Unauthorized,
                    format!("call path: {detail}"),
                ));
                self.rejected(Some(401), detail)
            }
            Verdict::Rejected { status, detail } => self.rejected(status, detail),
            Verdict::AuthUnavailable { detail } => self.auth_unavailable(detail),
            Verdict::Alive | Verdict::Busy => CallError::Protocol {
                detail: error.to_string(),
            },
        };
        Sent::Done(Err(failed))
    }

    /// A suspect answer counts as one miss. When that makes `failures` in a row, one probe
    /// decides ([`Live::probe`]): answered (or busy, or overloaded), the count starts again;
    /// unanswered or suspect too, the generation is dead. So a flaky gateway that fails two
    /// calls in a row does not end a session whose server answers.
    async fn suspect(&self, live: &Live, sent: Instant) {
        if !live.suspect_answer(sent) {
            return;
        }
        // A server busy with another call inside its deadline answers that call: not a miss.
        if let Some(Probed::Busy) = live.probe(Prober::AfterSuspect, Duration::MAX).await {
            live.misses.clear();
        }
    }
}

/// The wait before the `n`-th resend (from 0) of a call refused for load: what the server asked
/// for, but never less than [`OVERLOAD_MIN_WAIT`] doubled `n` times.
fn overload_wait(asked: Duration, n: u32) -> Duration {
    asked.max(OVERLOAD_MIN_WAIT * 2u32.saturating_pow(n))
}
