//! The one queue toward the host: everything the proxy writes to the host's stdout goes through
//! it, in order, and one writer ([`writer`]) drains it.
//!
//! A host that reads slowly, or not at all, must not grow the proxy. So the queue has a bound
//! for what may be lost, and no bound for what may not:
//!
//! - responses, errors and requests (elicitation, sampling, roots) are never dropped: there is
//!   one per host request or upstream request, so the host's own pace bounds them;
//! - `notifications/*/list_changed` is never dropped either, but a second one while the first is
//!   still queued says nothing new: it is coalesced into it;
//! - log messages (`notifications/message`) and progress may be dropped: past
//!   [`NotificationBuffer`]'s count or bytes, a new one is dropped and counted, and the counts
//!   are reported in one warning at most every [`REPORT_EVERY`];
//! - `notifications/resources/updated` is coalesced per URI (the host reads the resource again
//!   anyway), and counts against the same bounds: a server may name endless URIs.
//!
//! Upstream notifications that arrive before the host has sent `notifications/initialized` are
//! held (with the same bounds) and queued when it has: nothing reaches the host before its
//! `initialize` answer.
//!
//! # Invariants
//!
//! 1. Messages reach the host in the order they were queued; coalescing keeps the first one's
//!    place.
//! 2. The bounded messages (log, progress, resource updates) held or queued never exceed either
//!    bound of [`NotificationBuffer`]; every one dropped is counted exactly once, and every count
//!    is reported (at the latest by [`Outbox::report_rest`]).
//! 3. Queueing never waits: it is called from rmcp's send path and from upstream notification
//!    handlers, which must not hold a task per message.

use std::{
    collections::{HashSet, VecDeque},
    sync::{Arc, Mutex, MutexGuard, PoisonError},
};

use rmcp::model::{ServerJsonRpcMessage, ServerNotification};
use tokio::{sync::Notify, time::Instant};

mod buffer;
mod kind;
mod report;
pub(super) mod writer;

pub(crate) use buffer::NotificationBuffer;
use kind::Kind;
use report::{Dropped, REPORT_EVERY, report};

/// One message, as the line the host will read.
#[derive(Debug)]
struct Entry {
    line: Vec<u8>,
    kind: Kind,
}

/// The queue's state; changed only under [`Inner::state`]'s lock, which is never held across an
/// await.
#[derive(Debug, Default)]
struct State {
    /// In the order the writer takes them.
    queue: VecDeque<Entry>,
    /// Upstream notifications that arrived before the host's `notifications/initialized`.
    held: VecDeque<Entry>,
    /// The host has sent `notifications/initialized`.
    open: bool,
    /// No more messages are taken (the session is closing, or the host's stdout broke).
    closed: bool,
    /// Bounded entries in `queue` and `held`, and their bytes.
    bounded: usize,
    bounded_bytes: usize,
    /// Keys of the coalesced entries in `queue` and `held`.
    once: HashSet<Kind>,
    /// Dropped since the last report.
    unreported: Dropped,
    last_report: Option<Instant>,
}

#[derive(Debug)]
struct Inner {
    limits: NotificationBuffer,
    state: Mutex<State>,
    /// Wakes the writer: a message was queued, or the queue closed.
    wake: Notify,
}

/// The sending side of the queue. Cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct Outbox {
    inner: Arc<Inner>,
}

impl Outbox {
    pub(super) fn new(limits: NotificationBuffer) -> Self {
        Self {
            inner: Arc::new(Inner {
                limits,
                state: Mutex::new(State::default()),
                wake: Notify::new(),
            }),
        }
    }

    /// Queues what rmcp sends: answers, the proxy's own requests and notifications.
    pub(super) fn send(&self, message: &ServerJsonRpcMessage) {
        self.push(message, true);
    }

    /// Queues an upstream's notification for the host (held until the host has initialized).
    pub(super) fn notify(&self, notification: ServerNotification) {
        self.push(&ServerJsonRpcMessage::notification(notification), false);
    }

    /// Queues a line already encoded (rmcp's answer to a malformed host message).
    pub(super) fn send_line(&self, line: Vec<u8>) {
        let entry = Entry {
            line,
            kind: Kind::Keep,
        };
        self.queue(entry, true);
    }

    /// The host has sent `notifications/initialized`: what was held goes out now.
    pub(super) fn open(&self) {
        let mut state = self.lock();
        if state.open {
            return;
        }
        state.open = true;
        let held = std::mem::take(&mut state.held);
        state.queue.extend(held);
        drop(state);
        self.inner.wake.notify_one();
    }

    /// Takes no more messages; the writer ends once it has written what is queued.
    pub(super) fn close(&self) {
        self.lock().closed = true;
        self.inner.wake.notify_one();
    }

    /// Reports what was dropped and not reported yet (the end of the session).
    pub(crate) fn report_rest(&self) {
        let mut state = self.lock();
        let rest = std::mem::take(&mut state.unreported);
        drop(state);
        report(rest);
    }

    fn push(&self, message: &ServerJsonRpcMessage, from_rmcp: bool) {
        let kind = Kind::of(message);
        // Full by count already: dropped before it costs an encoding.
        if kind.bounded() {
            let state = self.lock();
            if state.closed || state.bounded >= self.inner.limits.max_buffered_notifications {
                self.refuse(state, &kind);
                return;
            }
        }
        let mut line = match serde_json::to_vec(message) {
            Ok(line) => line,
            Err(error) => {
                tracing::warn!(%error, "a message for the host could not be encoded; dropped");
                return;
            }
        };
        line.push(b'\n');
        self.queue(Entry { line, kind }, from_rmcp);
    }

    fn queue(&self, entry: Entry, from_rmcp: bool) {
        let limits = self.inner.limits;
        let mut state = self.lock();
        if entry.kind.coalesced() && state.once.contains(&entry.kind) {
            return;
        }
        let bounded = entry.kind.bounded();
        let full = state.bounded >= limits.max_buffered_notifications
            || state.bounded_bytes + entry.line.len() > limits.max_buffered_notification_bytes;
        if state.closed || (bounded && full) {
            match bounded {
                true => self.refuse(state, &entry.kind),
                false => tracing::debug!("a message for the host came after the close; dropped"),
            }
            return;
        }
        if bounded {
            state.bounded += 1;
            state.bounded_bytes += entry.line.len();
        }
        if entry.kind.coalesced() {
            state.once.insert(entry.kind.clone());
        }
        match from_rmcp || state.open {
            true => state.queue.push_back(entry),
            false => state.held.push_back(entry),
        }
        drop(state);
        self.inner.wake.notify_one();
    }

    /// Counts a bounded message as dropped, and reports the drops if a report is due.
    fn refuse(&self, mut state: MutexGuard<'_, State>, kind: &Kind) {
        crate::telemetry::notification_dropped(kind.method());
        state.unreported.add(kind);
        let due = !state.closed
            && state
                .last_report
                .is_none_or(|at| at.elapsed() >= REPORT_EVERY);
        if due {
            state.last_report = Some(Instant::now());
            let dropped = std::mem::take(&mut state.unreported);
            drop(state);
            report(dropped);
        }
    }

    /// Takes queued lines up to about `max` bytes (at least one line), for one write.
    fn take(&self, max: usize, into: &mut Vec<u8>) -> Taken {
        let mut state = self.lock();
        let state = &mut *state;
        if state.queue.is_empty() {
            return match state.closed {
                true => Taken::Closed,
                false => Taken::Nothing,
            };
        }
        while let Some(entry) = state.queue.front() {
            if !into.is_empty() && into.len() + entry.line.len() > max {
                break;
            }
            let Some(entry) = state.queue.pop_front() else {
                break;
            };
            if entry.kind.bounded() {
                state.bounded -= 1;
                state.bounded_bytes -= entry.line.len();
            }
            if entry.kind.coalesced() {
                state.once.remove(&entry.kind);
            }
            into.extend_from_slice(&entry.line);
        }
        Taken::Lines
    }

    /// When the drops not reported yet are due to be, if there are any.
    fn report_due(&self) -> Option<Instant> {
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
    fn report_if_due(&self) {
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

    /// The host's stdout broke: nothing more can reach it.
    fn broken(&self) {
        let mut state = self.lock();
        state.closed = true;
        state.queue.clear();
        state.held.clear();
        state.bounded = 0;
        state.bounded_bytes = 0;
        state.once.clear();
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.inner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// What [`Outbox::take`] found.
#[derive(Debug, PartialEq, Eq)]
enum Taken {
    Lines,
    Nothing,
    Closed,
}

#[cfg(test)]
mod tests;
