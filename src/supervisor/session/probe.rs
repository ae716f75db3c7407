//! Probes: sending one (`ping`, or `server/discover` for a server that has no ping), and what
//! its outcome means, decided here whoever sent it: the heartbeat, a call that follows a long
//! silence, or the call path after suspect answers or a cut answer stream.
//!
//! # Invariants
//!
//! 1. A probe answered in any way (a result, a JSON-RPC error, "overloaded", a refusal) proves
//!    the server alive and clears the misses.
//! 2. An unanswered or suspect probe is a miss, unless it overlapped a miss already counted
//!    ([`Misses`](crate::verdict::probe::Misses)); every counted miss is told as
//!    [`Event::ProbeMissed`], and the miss that makes `failures` in a row reports the death
//!    (`heartbeat_timeout`). A suspect answer to a call counts as a miss too, and when it makes
//!    `failures` in a row, one probe decides.
//! 3. A death or a refusal of our credentials that a probe observes is reported as such, with
//!    the prober's name in the detail.
//! 4. A pre-call probe unanswered for the whole probe timeout ends its generation, whatever the
//!    count (gRPC's keepalive rule): a caller waits on it, and no call is in flight (else the
//!    silence is busy), so a half-open connection is not waited on twice. A pre-call probe
//!    cut short by its call's own deadline is no miss: that silence was shorter than a probe's.
//! 5. A probe whose token the server refused (a 401, or a 403 asking for scopes) was answered,
//!    even when the new token takes longer than the probe timeout to come: the authorization
//!    server's time is not the MCP server's silence.

use std::{sync::atomic::Ordering, time::Duration};

use rmcp::{ServiceError, model::ErrorCode};
use tokio::time::Instant;

use super::live::{Live, ProbeRules};
use crate::{
    state::{Cause, Death, Event},
    transport::{judge, probe_wire::Answered},
    verdict::Verdict,
};

/// Who sent a probe: named in what it reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::supervisor) enum Prober {
    /// The idle-only heartbeat.
    Heartbeat,
    /// A call after a silence longer than the heartbeat interval.
    BeforeCall,
    /// The call path, after `failures` suspect answers in a row.
    AfterSuspect,
    /// The call path, after a 2026-07-28 call's answer stream was cut and the call was not
    /// issued again: was it the server's death, or only the path's?
    AfterCut,
}

impl Prober {
    fn words(self) -> &'static str {
        match self {
            Prober::Heartbeat => "heartbeat probe",
            Prober::BeforeCall => "pre-call probe",
            Prober::AfterSuspect => "probe after suspect answers",
            Prober::AfterCut => "probe after a cut answer stream",
        }
    }
}

/// What a probe showed, once what it means was carried out (misses counted, deaths reported).
#[derive(Debug)]
pub(in crate::supervisor) enum Probed {
    /// Answered: the server is alive.
    Alive,
    /// Answered "overloaded": alive, and asking to be probed less often.
    Overloaded { status: u16 },
    /// Unanswered while a call is in flight inside its deadline: that call judges the silence.
    Busy,
    /// Not sent: no token could be had. Nothing was learned about the server.
    NotSent(String),
    /// Unanswered or suspect: one more miss. `dead` when the death was reported: the miss was
    /// the last allowed, or a pre-call probe's silence (invariant 4).
    Missed { detail: String, dead: bool },
    /// A pre-call probe unanswered when its call's own deadline came, before the probe
    /// timeout: not a miss (invariant 4). The call was not sent.
    CutShort(Duration),
    /// The probe observed the generation's death, which was reported.
    Dead(Death),
    /// The server refused our credentials; reported as `unauthorized`.
    Unauthorized(String),
}

impl Live {
    /// Sends a probe for `prober`, waiting for its answer the probe timeout but no longer than
    /// `within` (a call's probe is part of the call), and carries out what its outcome means
    /// (see the module's invariants). `None` when this generation is not probed (no heartbeat
    /// configured).
    pub(in crate::supervisor) async fn probe(
        &self,
        prober: Prober,
        within: Duration,
    ) -> Option<Probed> {
        let rules = self.probes.as_ref()?;
        let sent = Instant::now();
        let timeout = rules.timeout.min(within);
        let (verdict, silent) = self.send_probe(prober, timeout).await;
        if silent && timeout < rules.timeout {
            return Some(Probed::CutShort(timeout));
        }
        Some(self.judge_probe(prober, rules, sent, verdict, silent))
    }

    /// A suspect answer to a request sent at `sent` counts as one miss; true when that made
    /// `failures` in a row, and a probe must decide.
    pub(in crate::supervisor) fn suspect_answer(&self, sent: Instant) -> bool {
        let Some(rules) = &self.probes else {
            return false;
        };
        self.misses
            .record(sent)
            .is_some_and(|misses| misses >= rules.failures)
    }

    fn judge_probe(
        &self,
        prober: Prober,
        rules: &ProbeRules,
        sent: Instant,
        verdict: Verdict,
        silent: bool,
    ) -> Probed {
        let who = prober.words();
        match verdict {
            Verdict::Alive | Verdict::Rejected { .. } => {
                self.misses.clear();
                self.note_probe_round_trip(sent.elapsed());
                Probed::Alive
            }
            Verdict::Overload { status, .. } => {
                self.misses.clear();
                Probed::Overloaded { status }
            }
            Verdict::Busy => Probed::Busy,
            Verdict::AuthUnavailable { detail } => Probed::NotSent(detail),
            Verdict::Suspect { detail, .. } => self.missed(prober, rules, sent, detail, silent),
            Verdict::Death(death) => {
                let death = Death::new(death.cause, format!("{who}: {}", death.detail));
                self.report_unless_ended(death.clone());
                Probed::Dead(death)
            }
            Verdict::Unauthorized { detail } => {
                self.report_death(Death::new(Cause::Unauthorized, format!("{who}: {detail}")));
                Probed::Unauthorized(detail)
            }
        }
    }

    /// Counts a miss (invariant 2): told as an event, and the death reported when it was the
    /// last one allowed, or a pre-call probe's silence (invariant 4).
    fn missed(
        &self,
        prober: Prober,
        rules: &ProbeRules,
        sent: Instant,
        detail: String,
        silent: bool,
    ) -> Probed {
        let who = prober.words();
        let counted = self.misses.record(sent);
        if let Some(misses) = counted {
            tracing::warn!(server = %self.server, generation = %self.generation, misses, "{who} missed: {detail}");
            rules.events.send(Event::ProbeMissed {
                server: self.server.clone(),
                generation: self.generation,
                misses,
            });
        }
        let death = match counted {
            Some(misses) if misses >= rules.failures => Some(format!(
                "{misses} consecutive misses, the last a {who} unanswered within {:?}: {detail}",
                rules.timeout
            )),
            // Overlapping another miss or not, this silence held up a call (invariant 4).
            _ if silent && prober == Prober::BeforeCall => Some(format!(
                "{who} unanswered within {:?} with no call in flight: a connection that silent \
                 is not trusted with a call",
                rules.timeout
            )),
            _ => None,
        };
        let dead = death.is_some();
        if let Some(death) = death {
            self.report_death(Death::new(Cause::HeartbeatTimeout, death));
        }
        Probed::Missed {
            detail: format!("{who}: {detail}"),
            dead,
        }
    }

    /// Sends one probe with `timeout` and says what its outcome is, and whether it was a
    /// silence. A silence is [`Verdict::Busy`] or a miss ([`Verdict::Suspect`]) according to
    /// the load, or alive when the server refused the probe's token meanwhile (invariant 5); an
    /// answer of any kind is alive; `ping` answered method-not-found switches this generation's
    /// probe to `server/discover` and is not a miss.
    ///
    /// The heartbeat's probes on the remote transports go around rmcp's session
    /// ([`DirectProbe`](crate::transport::direct::DirectProbe)), but one in
    /// [`THROUGH_SESSION`]: that one, and every probe of a call's, proves the session loop
    /// itself (calls go through it; a wedged loop must not hide behind a live server).
    async fn send_probe(&self, prober: Prober, timeout: Duration) -> (Verdict, bool) {
        let refusals = self.activity.refusals();
        let discover = self.discover.load(Ordering::Relaxed);
        let method = match discover {
            true => "server/discover",
            false => "ping",
        };
        let direct = match (prober, self.activity.direct_probe.get()) {
            (Prober::Heartbeat, Some(direct)) => {
                let n = self.heartbeats.fetch_add(1, Ordering::Relaxed);
                (!n.is_multiple_of(THROUGH_SESSION)).then_some(direct)
            }
            _ => None,
        };
        let op = crate::telemetry::Op::internal(&self.telemetry, method);
        let answer = async {
            match direct {
                Some(direct) => match direct.send(discover, &self.protocol).await {
                    Ok(Answered::Result) => Ok(()),
                    Ok(Answered::Error(e)) => Err(Refused::Error(e)),
                    Err(verdict) => Err(Refused::Verdict(verdict)),
                },
                None => {
                    let request = crate::transport::probe_wire::request(discover);
                    // Boxed: rmcp's request future is ~3.3 KB; inline, it made every probe's
                    // future that large, copied each time it moved (callgrind: a fifth of a
                    // direct legacy SSE probe's instructions were `memcpy`).
                    match Box::pin(self.link.send_request(request)).await {
                        Ok(_) => Ok(()),
                        Err(ServiceError::McpError(e)) => Err(Refused::Error(e)),
                        Err(e) => Err(Refused::Verdict(judge(&e))),
                    }
                }
            }
        };
        let mut silent = false;
        let verdict = match tokio::time::timeout(timeout, answer).await {
            Err(_) if self.activity.refusals() != refusals => {
                tracing::debug!(server = %self.server, generation = %self.generation, "probe unanswered after {timeout:?} while its refused token was being renewed: the server answered");
                Verdict::Alive
            }
            Err(_) if self.load(timeout).is_busy() => Verdict::Busy,
            Err(_) => {
                silent = true;
                Verdict::Suspect {
                    status: None,
                    detail: format!("unanswered after {timeout:?}"),
                }
            }
            Ok(Ok(())) => Verdict::Alive,
            Ok(Err(Refused::Error(e)))
                if e.code == ErrorCode::METHOD_NOT_FOUND
                    && !self.discover.swap(true, Ordering::Relaxed) =>
            {
                tracing::info!(server = %self.server, generation = %self.generation, "server has no ping; probing with server/discover");
                Verdict::Alive
            }
            Ok(Err(Refused::Error(_))) => Verdict::Alive,
            Ok(Err(Refused::Verdict(verdict))) => verdict,
        };
        op.end_probe(&verdict);
        (verdict, silent)
    }
}

/// One heartbeat probe in this many goes through rmcp's session (see [`Live::send_probe`]).
const THROUGH_SESSION: u64 = 10;

/// A probe not answered with a result.
enum Refused {
    /// A JSON-RPC error: the server answered.
    Error(rmcp::model::ErrorData),
    /// No answer; what that means.
    Verdict(Verdict),
}
