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
//! One outbox serves one host, whatever its front: the stdio front's writer ([`writer`]) takes
//! encoded lines ([`Form::Lines`]), the HTTP front's takes the messages themselves
//! ([`Form::Messages`]) and hands them to rmcp's session for that host.
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
    borrow::Cow,
    collections::{HashSet, VecDeque},
    sync::{Arc, Mutex, MutexGuard, PoisonError},
};

use rmcp::model::{ServerJsonRpcMessage, ServerNotification};
use tokio::{sync::Notify, time::Instant};

mod buffer;
mod entry;
mod kind;
mod report;
pub(crate) mod sink;
mod take;
pub(super) mod writer;

pub(crate) use buffer::NotificationBuffer;
pub(crate) use entry::{Form, Payload};
pub(in crate::outbox) use take::Taken;

use entry::Entry;
use kind::Kind;
use report::{Dropped, REPORT_EVERY, report};

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
    /// Entries that ever entered `queue` (a mark for [`Outbox::flushed`]).
    queued_total: u64,
    /// Dropped since the last report.
    unreported: Dropped,
    last_report: Option<Instant>,
}

#[derive(Debug)]
struct Inner {
    limits: NotificationBuffer,
    form: Form,
    state: Mutex<State>,
    /// Wakes the writer: a message was queued, or the queue closed.
    wake: Notify,
    /// Entries a writer handed on; waited for by [`Outbox::flushed`].
    sent: std::sync::atomic::AtomicU64,
    sent_wake: Notify,
}

/// The sending side of the queue. Cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct Outbox {
    inner: Arc<Inner>,
}

impl Outbox {
    /// An outbox of encoded lines (the stdio front).
    pub(crate) fn new(limits: NotificationBuffer) -> Self {
        Self::with_form(limits, Form::Lines)
    }

    /// An outbox that keeps `form`.
    pub(crate) fn with_form(limits: NotificationBuffer, form: Form) -> Self {
        Self {
            inner: Arc::new(Inner {
                limits,
                form,
                state: Mutex::new(State::default()),
                wake: Notify::new(),
                sent: Default::default(),
                sent_wake: Notify::new(),
            }),
        }
    }

    /// Queues what rmcp sends: answers, the proxy's own requests and notifications.
    pub(crate) fn send(&self, message: &ServerJsonRpcMessage) {
        self.push(Cow::Borrowed(message), true);
    }

    /// Queues an upstream's notification for the host (held until the host has initialized).
    pub(crate) fn notify(&self, notification: ServerNotification) {
        let message = ServerJsonRpcMessage::notification(notification);
        self.push(Cow::Owned(message), false);
    }

    /// Queues a line already encoded (rmcp's answer to a malformed host message).
    pub(super) fn send_line(&self, line: Vec<u8>) {
        let entry = Entry {
            payload: Payload::Line(line),
            bytes: 0,
            kind: Kind::Keep,
        };
        self.queue(entry, true);
    }

    /// The host has sent `notifications/initialized`: what was held goes out now.
    pub(crate) fn open(&self) {
        let mut state = self.lock();
        if state.open {
            return;
        }
        state.open = true;
        let held = std::mem::take(&mut state.held);
        state.queued_total += held.len() as u64;
        state.queue.extend(held);
        drop(state);
        self.inner.wake.notify_one();
    }

    /// Takes no more messages; the writer ends once it has written what is queued.
    pub(crate) fn close(&self) {
        self.lock().closed = true;
        self.inner.wake.notify_one();
        self.inner.sent_wake.notify_waiters();
    }

    /// Reports what was dropped and not reported yet (the end of the session).
    pub(crate) fn report_rest(&self) {
        let mut state = self.lock();
        let rest = std::mem::take(&mut state.unreported);
        drop(state);
        report(rest);
    }

    fn push(&self, message: Cow<'_, ServerJsonRpcMessage>, from_rmcp: bool) {
        let kind = Kind::of(&message);
        // Full by count already: dropped before it costs an encoding.
        if kind.bounded() {
            let state = self.lock();
            if state.closed || state.bounded >= self.inner.limits.max_buffered_notifications {
                self.refuse(state, &kind);
                return;
            }
        }
        if let Some(entry) = Entry::of(message, kind, self.inner.form) {
            self.queue(entry, from_rmcp);
        }
    }

    fn queue(&self, entry: Entry, from_rmcp: bool) {
        let limits = self.inner.limits;
        let mut state = self.lock();
        if entry.kind.coalesced() && state.once.contains(&entry.kind) {
            return;
        }
        let bounded = entry.kind.bounded();
        let full = state.bounded >= limits.max_buffered_notifications
            || state.bounded_bytes + entry.bytes > limits.max_buffered_notification_bytes;
        if state.closed || (bounded && full) {
            match bounded {
                true => self.refuse(state, &entry.kind),
                false => tracing::debug!("a message for the host came after the close; dropped"),
            }
            return;
        }
        if bounded {
            state.bounded += 1;
            state.bounded_bytes += entry.bytes;
        }
        if entry.kind.coalesced() {
            state.once.insert(entry.kind.clone());
        }
        match from_rmcp || state.open {
            true => {
                state.queued_total += 1;
                state.queue.push_back(entry);
            }
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

    /// Waits until something may have been queued or the outbox closed.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: a wake-up it did not take stays for the next call.
    pub(in crate::outbox) async fn woken(&self) {
        self.inner.wake.notified().await;
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.inner
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests;
