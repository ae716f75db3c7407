//! The heartbeat: an idle-only liveness probe per generation.
//!
//! Every `interval`, unless a message arrived within the last `interval`, send a probe (`ping`,
//! or `server/discover` for servers that have no ping) with `timeout`. After a miss the next
//! probe goes out at once, so `failures` consecutive misses are seen within
//! `interval + failures × timeout` of the last message. It is the only detector of a dead
//! Streamable HTTP server or a half-open TCP connection, and the one that catches a hung stdio
//! child. What a probe's outcome means is the verdict module's business
//! ([`crate::verdict::probe`]): a busy server is not a dead one, and an overloaded one is alive.

use std::{sync::Arc, time::Duration};

use tokio::{sync::broadcast, time::Instant};

use super::live::Live;
use crate::{
    state::{Cause, Death, Event},
    verdict::{Verdict, probe::Stretch},
};

/// One generation's heartbeat settings.
#[derive(Debug, Clone)]
pub(crate) struct Heartbeat {
    pub(crate) interval: Duration,
    pub(crate) timeout: Duration,
    pub(crate) failures: u32,
    pub(crate) events: broadcast::Sender<Event>,
}

impl Heartbeat {
    /// Runs until the generation is reported dead (by anyone) or the task is aborted.
    pub(crate) async fn run(self, live: Arc<Live>) {
        let mut stretch = Stretch::default();
        // The next probe goes out no earlier than this: an answer that is not a JSON-RPC message
        // (a 429, a 403) does not reset the idle clock, so without it the loop would spin.
        let mut not_before = Instant::now();
        loop {
            let interval = stretch.apply(self.interval);
            let idle = live.activity.idle();
            let now = Instant::now();
            if idle < interval || now < not_before {
                if idle < self.interval {
                    live.misses.clear();
                }
                let wait = interval.saturating_sub(idle).max(not_before - now);
                tokio::select! {
                    _ = tokio::time::sleep(wait) => continue,
                    _ = live.dead.cancelled() => return,
                }
            }
            let sent = Instant::now();
            let verdict = tokio::select! {
                verdict = live.probe(self.timeout) => verdict,
                _ = live.dead.cancelled() => return,
            };
            // After a miss the next probe goes out at once; after anything else, an interval later.
            not_before = crate::clock::deadline_in(interval);
            match verdict {
                Verdict::Alive | Verdict::Rejected { .. } => {
                    live.misses.clear();
                    stretch.clean();
                }
                Verdict::Overload { status, .. } => {
                    live.misses.clear();
                    stretch.overloaded();
                    not_before = crate::clock::deadline_in(stretch.apply(self.interval));
                    tracing::debug!(server = %live.server, generation = live.generation, status, "probe answered overloaded; probing less often");
                }
                // The server is working on a call inside its deadline: look again an interval later.
                Verdict::Busy => {}
                // No token to probe with: nothing learned about the server; an interval later.
                Verdict::AuthUnavailable { detail } => {
                    tracing::debug!(server = %live.server, generation = live.generation, "probe not sent: {detail}");
                }
                Verdict::Suspect { detail, .. } => {
                    not_before = Instant::now();
                    if self.missed(&live, sent, detail) {
                        return;
                    }
                }
                Verdict::Death(death) => {
                    live.report_unless_ended(Death::new(
                        death.cause,
                        format!("heartbeat probe: {}", death.detail),
                    ));
                    return live.dead.cancelled().await;
                }
                Verdict::Unauthorized { detail } => {
                    live.report_death(Death::new(
                        Cause::Unauthorized,
                        format!("heartbeat probe: {detail}"),
                    ));
                    return;
                }
            }
        }
    }

    /// Counts a miss; true when it was the last one allowed and death was reported.
    fn missed(&self, live: &Live, sent: Instant, detail: String) -> bool {
        let Some(misses) = live.misses.record(sent) else {
            return false;
        };
        tracing::warn!(server = %live.server, generation = live.generation, misses, "probe missed: {detail}");
        let _ = self.events.send(Event::ProbeMissed {
            server: live.server.clone(),
            generation: live.generation,
            misses,
        });
        if misses < self.failures {
            return false;
        }
        live.report_death(Death::new(
            Cause::HeartbeatTimeout,
            format!(
                "{misses} consecutive probes unanswered (timeout {:?})",
                self.timeout
            ),
        ));
        true
    }
}
