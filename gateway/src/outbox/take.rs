//! The writer's side of the queue: taking what is queued, the drop reports that come due while
//! the host is idle, and a host that can no longer be written to.

use std::{sync::atomic::Ordering, time::Duration};

use tokio::time::Instant;

use super::{Outbox, Payload, REPORT_EVERY, State, report};

/// What [`Outbox::take`] found.
#[derive(Debug, PartialEq, Eq)]
pub(in crate::outbox) enum Taken {
    /// Something was taken.
    Lines,
    /// Nothing is queued now.
    Nothing,
    /// Nothing is queued and nothing more will be.
    Closed,
}

impl Outbox {
    /// Takes queued lines up to about `max` bytes (at least one line), for one write. A
    /// message kept as such ([`Form::Messages`](super::Form::Messages)) is encoded here.
    pub(in crate::outbox) fn take(&self, max: usize, into: &mut Vec<u8>) -> Taken {
        self.take_with(
            |payload, into: &mut Vec<u8>| {
                let line = match payload {
                    Payload::Line(line) => line,
                    Payload::Message(message) => {
                        let mut line = serde_json::to_vec(&*message).unwrap_or_default();
                        line.push(b'\n');
                        line
                    }
                };
                if !into.is_empty() && into.len() + line.len() > max {
                    return Err(Payload::Line(line));
                }
                into.extend_from_slice(&line);
                Ok(())
            },
            into,
        )
    }

    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    /// Takes up to `max` queued payloads, in order.
    pub(in crate::outbox) fn take_payloads(&self, max: usize, into: &mut Vec<Payload>) -> Taken {
        self.take_with(
            |payload, into: &mut Vec<Payload>| {
                if into.len() >= max.max(1) {
                    return Err(payload);
                }
                into.push(payload);
                Ok(())
            },
            into,
        )
    }

    /// Moves entries from the front of the queue into `into` while `put` accepts them; an entry
    /// `put` gives back stays at the front.
    fn take_with<T>(
        &self,
        mut put: impl FnMut(Payload, &mut T) -> Result<(), Payload>,
        into: &mut T,
    ) -> Taken {
        let mut state = self.lock();
        let state = &mut *state;
        if state.queue.is_empty() {
            return match state.closed {
                true => Taken::Closed,
                false => Taken::Nothing,
            };
        }
        while let Some(mut entry) = state.queue.pop_front() {
            match put(entry.payload, into) {
                Ok(()) => {}
                Err(back) => {
                    entry.payload = back;
                    state.queue.push_front(entry);
                    break;
                }
            }
            if entry.kind.bounded() {
                state.bounded -= 1;
                state.bounded_bytes -= entry.bytes;
            }
            if entry.kind.coalesced() {
                state.once.remove(&entry.kind);
            }
        }
        Taken::Lines
    }

    /// A writer handed `count` more entries on (in the order it took them).
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub(in crate::outbox) fn sent(&self, count: u64) {
        self.inner.sent.fetch_add(count, Ordering::AcqRel);
        self.inner.sent_wake.notify_waiters();
    }

    /// Everything queued so far, as a mark for [`flushed`](Self::flushed).
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub(crate) fn mark(&self) -> u64 {
        self.lock().queued_total
    }

    /// Waits until a writer has handed on everything queued up to `mark`, the outbox closed,
    /// or `limit` passed.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: it only waits.
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub(crate) async fn flushed(&self, mark: u64, limit: Duration) {
        let wait = async {
            loop {
                let notified = self.inner.sent_wake.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                if self.inner.sent.load(Ordering::Acquire) >= mark || self.lock().closed {
                    return;
                }
                notified.await;
            }
        };
        let _ = tokio::time::timeout(limit, wait).await;
    }

    /// When the drops not reported yet are due to be, if there are any.
    pub(in crate::outbox) fn report_due(&self) -> Option<Instant> {
        let state = self.lock();
        if state.unreported.is_empty() {
            return None;
        }
        Some(
            state
                .last_report
                .map_or_else(Instant::now, |at| at + REPORT_EVERY),
        )
    }

    /// Reports the drops not reported yet, if they are due.
    pub(in crate::outbox) fn report_if_due(&self) {
        let mut state = self.lock();
        let due = state
            .last_report
            .is_none_or(|at| at.elapsed() >= REPORT_EVERY);
        if due && !state.unreported.is_empty() {
            state.last_report = Some(Instant::now());
            let dropped = std::mem::take(&mut state.unreported);
            drop(state);
            report(dropped);
        }
    }

    /// The host cannot be written to any more: nothing more can reach it.
    pub(in crate::outbox) fn broken(&self) {
        let mut state = self.lock();
        *state = State {
            closed: true,
            unreported: state.unreported,
            last_report: state.last_report,
            open: state.open,
            ..State::default()
        };
        drop(state);
        self.inner.sent_wake.notify_waiters();
    }
}
