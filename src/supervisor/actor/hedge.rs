//! Hedging a stuck remote attempt.
//!
//! Why hedge: an attempt started while the path to a remote server is black-holed (a half-open
//! NAT entry, a partition) waits out its whole `connect_timeout` even after the path heals. So a
//! remote attempt that has had no answer at all for a hedge interval (`max(delay, 1 s)`, growing
//! like the backoff up to `max(max_delay, 1 s)`) gets a fresh attempt beside it. The stuck one may
//! still win; with two in flight, the next hedge abandons the older one — only if it is still
//! getting no answer — and that counts as a failed attempt. After a partition heals, a server is
//! ready again within one hedge interval. An attempt that is slow but answering (each handshake
//! step takes a while) is never hedged or abandoned: it has its `connect_timeout`; nor is one
//! waiting on the server's authorization server (discovery, a token exchange, a person), whose
//! time is not the server's silence and which a fresh attempt would wait on too (it asks the
//! same authorizer, after another unauthenticated request). Stdio attempts
//! are never hedged: that would mean two children. A hedge's look (and so its attempt) waits its
//! turn in the origin's attempt budget like any attempt (`crate::supervisor::reconnect::origin::budget`).

use std::time::Duration;

use super::{Actor, Outage};
use crate::{
    state::{Cause, ConnectionState, Death, Generation, Reason},
    supervisor::actor::transition::Note,
};

impl Actor {
    /// The hedge timer of the current remote attempt fired: if it has had no answer for a whole
    /// hedge interval, start a fresh attempt beside it (see the module docs).
    pub(super) fn on_hedge(&mut self) {
        let Some(delay) = self.attempts.hedge_delay else {
            return;
        };
        let Some(current) = &self.attempts.current else {
            return;
        };
        let quiet = current.activity.unanswered();
        if quiet < delay {
            // It is getting answers: slow, not stuck. Look again when it could be stuck.
            self.hedge = Some(self.paced(tokio::time::sleep(delay - quiet)));
            return;
        }
        if let Some(older) = &self.attempts.straggler
            && older.activity.unanswered() < delay
        {
            // The older one has started to answer: let both run, start no third.
            self.hedge = Some(self.paced(tokio::time::sleep(delay)));
            return;
        }
        let Some(stuck) = self.attempts.current.take() else {
            return;
        };
        let next = delay.mul_f64(self.attempts.multiplier);
        self.attempts.hedge_delay = Some(next.min(self.attempts.max_hedge));
        tracing::info!(server = %self.server(), generation = %stuck.generation, "no answer within {delay:?}; starting a fresh attempt beside it");
        if let Some(older) = self.attempts.straggler.replace(stuck) {
            let generation = older.generation;
            self.abandon(older);
            let death = Death::new(
                Cause::ConnectFailed,
                "no answer for two hedge intervals; abandoned for a fresh attempt",
            );
            if !self.count_abandoned(death, generation) {
                return;
            }
        }
        self.start_attempt(true);
    }

    /// The abandoned attempt `generation` counts as a failure; false when that spent the budget
    /// (the server is then `failed` and nothing is in flight any more).
    fn count_abandoned(&mut self, death: Death, generation: Generation) -> bool {
        if self.budget.fail().is_none() {
            self.give_up(Reason::ConnectionFailed, death, generation, false);
            return false;
        }
        let tries = self.tries(false);
        let attempt = self.outage.get_or_insert(Outage::new(tries)).tries + 1;
        let state = ConnectionState::Reconnecting {
            reason: Reason::ConnectionFailed,
            death,
            attempt,
            delay: Duration::ZERO,
        };
        self.transition(state, generation, Note::Plain);
        true
    }
}
