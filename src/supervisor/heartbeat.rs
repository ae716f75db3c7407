//! The heartbeat: an idle-only liveness probe per generation.
//!
//! Every `interval`, unless a message arrived within the last `interval`, send a probe (`ping`,
//! or `server/discover` for servers that have no ping) with `timeout`. After a miss the next
//! probe goes out at once, so `failures` consecutive misses are seen within
//! `interval + failures × timeout` of the last message. A probe the transport proves dead
//! reports at once. It is the only detector of a dead Streamable HTTP server or a half-open
//! TCP connection, and the one that catches a hung stdio child.

use std::{sync::Arc, sync::atomic::Ordering, time::Duration};

use tokio::sync::broadcast;

use super::generation::{Live, ProbeOutcome};
use crate::state::{Cause, Death, Event};

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
        loop {
            let idle = live.activity.idle();
            if idle < self.interval {
                live.misses.store(0, Ordering::Relaxed);
                tokio::select! {
                    _ = tokio::time::sleep(self.interval - idle) => continue,
                    _ = live.dead.cancelled() => return,
                }
            }
            let outcome = tokio::select! {
                outcome = live.probe(self.timeout) => outcome,
                _ = live.dead.cancelled() => return,
            };
            match outcome {
                ProbeOutcome::Answered => live.misses.store(0, Ordering::Relaxed),
                ProbeOutcome::Missed(detail) => {
                    if self.missed(&live, detail) {
                        return;
                    }
                }
                ProbeOutcome::Closed => return live.dead.cancelled().await,
                ProbeOutcome::Dead(death) => {
                    live.report_death(Death::new(
                        death.cause,
                        format!("heartbeat probe: {}", death.detail),
                    ));
                    return;
                }
            }
        }
    }

    /// Counts a miss; true when it was the last one allowed and death was reported.
    fn missed(&self, live: &Live, detail: String) -> bool {
        let misses = live.misses.fetch_add(1, Ordering::Relaxed) + 1;
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
