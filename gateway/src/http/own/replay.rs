//! Resumption on the own front (`Last-Event-ID`): every SSE stream of a session (a request's
//! response that became a stream, and the standalone stream) writes its events through a
//! [`Log`], which numbers them and keeps the last ones, so that a host whose stream broke asks
//! for it again with a `GET` and gets what came after the last event it saw, then the rest as
//! it comes. A request's work goes on while its host is away (a broken stream is not a cancel).
//!
//! Event ids: `{stream}.{index}~{suffix}`: the stream's number in this process (0 is a
//! session's standalone stream), the event's number in its stream, and after the `~` the request's tag
//! (`gateway/src/http/lost/mod.rs`: this process, the request's kind and id), or this process
//! alone when the request's id cannot be carried or the stream is the standalone one.
//!
//! Bounds: a stream keeps its last [`MAX_EVENTS`] events and at most [`MAX_BYTES`] of them (the
//! last event is always kept: a request's answer is its last); a session keeps the logs of its
//! last [`MAX_STREAMS`] request streams (the standalone one besides). A reader that falls
//! behind what is kept (a host slow to read, or back late) goes on from the oldest event kept.
//!
//! # Invariants
//!
//! 1. A log belongs to one session and is only ever looked up in that session's table: a
//!    `Last-Event-ID` never reaches another session's events, whatever it says.
//! 2. An id this process did not write is never looked up (its numbers are another process's).

use std::{
    collections::VecDeque,
    sync::{
        Arc, Mutex, MutexGuard, PoisonError,
        atomic::{AtomicU64, Ordering},
    },
};

use bytes::Bytes;
use tokio::sync::Notify;

/// Events a stream keeps for a resumption.
pub(super) const MAX_EVENTS: usize = 64;
/// Bytes of events a stream keeps (its last event whatever its size).
pub(super) const MAX_BYTES: usize = 256 * 1024;
/// Request streams whose logs a session keeps.
pub(super) const MAX_STREAMS: usize = 8;
/// The standalone stream's number.
pub(super) const STANDALONE: u64 = 0;
/// Events the standalone stream's writer may be ahead of its reader (then it waits, and the
/// rest stays in the session's outbox).
const AHEAD: u64 = 8;
/// The longest `Last-Event-ID` read.
const MAX_ID_CHARS: usize = 256;

/// One stream's events.
pub(super) struct Log {
    stream: u64,
    /// After the `~` of each id.
    suffix: String,
    state: Mutex<State>,
    changed: Notify,
}

#[derive(Default)]
struct State {
    events: VecDeque<(u64, Bytes)>,
    next: u64,
    bytes: usize,
    ended: bool,
    /// The first event no reader has taken yet (the standalone writer waits on it).
    read: u64,
}

impl Log {
    pub(super) fn new(stream: u64, suffix: String) -> Arc<Self> {
        Arc::new(Self {
            stream,
            suffix,
            state: Mutex::default(),
            changed: Notify::new(),
        })
    }

    /// Adds `event` (an SSE event without its id), within the bounds.
    pub(super) fn push(&self, event: &[u8]) {
        let mut state = lock(&self.state);
        let index = state.next;
        let id = format!("id: {}.{index}~{}\n", self.stream, self.suffix);
        let whole = Bytes::from([id.as_bytes(), event].concat());
        state.bytes += whole.len();
        state.events.push_back((index, whole));
        state.next += 1;
        while state.events.len() > MAX_EVENTS || (state.bytes > MAX_BYTES && state.events.len() > 1)
        {
            if let Some((_, gone)) = state.events.pop_front() {
                state.bytes -= gone.len();
            }
        }
        drop(state);
        self.changed.notify_waiters();
    }

    /// Adds `event` once the reader is at most [`AHEAD`] events behind (the standalone stream).
    pub(super) async fn push_paced(&self, event: &[u8]) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            {
                let state = lock(&self.state);
                if state.next.saturating_sub(state.read) < AHEAD {
                    drop(state);
                    return self.push(event);
                }
            }
            changed.await;
        }
    }

    /// The priming event (an id and an empty `data`, with the host's wait before it asks again).
    pub(super) fn prime(&self, retry: std::time::Duration) {
        let event = format!("retry: {}\ndata: \n\n", retry.as_millis());
        self.push(event.as_bytes());
    }

    /// No event follows: readers end after the last.
    pub(super) fn end(&self) {
        lock(&self.state).ended = true;
        self.changed.notify_waiters();
    }

    /// The first event a new reader that saw none should get: the first no reader took.
    pub(super) fn unread(&self) -> u64 {
        lock(&self.state).read
    }

    /// The first kept event at `from` or after (moving `from` past it), waiting for one;
    /// `None` once the log has ended and nothing is left.
    pub(super) async fn next(&self, from: &mut u64) -> Option<Bytes> {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            {
                let mut state = lock(&self.state);
                let found = (state.events.iter()).find(|(index, _)| *index >= *from);
                if let Some((index, event)) = found.cloned() {
                    *from = index + 1;
                    state.read = state.read.max(index + 1);
                    drop(state);
                    self.changed.notify_waiters();
                    return Some(event);
                }
                if state.ended {
                    return None;
                }
            }
            changed.await;
        }
    }

    #[cfg(test)]
    fn kept(&self) -> (usize, usize) {
        let state = lock(&self.state);
        (state.events.len(), state.bytes)
    }
}

/// The next request stream's number, in this process (so that an id of one session names no
/// stream of another, even to look up).
static NEXT_STREAM: AtomicU64 = AtomicU64::new(STANDALONE + 1);

/// A session's request streams' logs, the last [`MAX_STREAMS`].
#[derive(Default)]
pub(super) struct Logs {
    logs: VecDeque<Arc<Log>>,
}

impl Logs {
    /// A new request stream's log (the oldest kept one forgotten past the bound).
    pub(super) fn open(&mut self, suffix: String) -> Arc<Log> {
        let log = Log::new(NEXT_STREAM.fetch_add(1, Ordering::Relaxed), suffix);
        if self.logs.len() >= MAX_STREAMS {
            self.logs.pop_front();
        }
        self.logs.push_back(log.clone());
        log
    }

    /// Request stream `stream`'s log, if kept.
    pub(super) fn get(&self, stream: u64) -> Option<Arc<Log>> {
        (self.logs.iter()).find(|log| log.stream == stream).cloned()
    }
}

/// What a `Last-Event-ID` written by this front says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Resume {
    pub(super) stream: u64,
    /// The first event the host has not seen.
    pub(super) from: u64,
}

/// Reads `{stream}.{index}` (the part before the `~` of an id this front wrote): `None` if it
/// is not that (rmcp's ids, or garbled).
pub(super) fn parse(local: &str) -> Option<Resume> {
    if local.len() > MAX_ID_CHARS {
        return None;
    }
    let (stream, index) = local.split_once('.')?;
    let number = |text: &str| {
        let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
        digits.then(|| text.parse::<u64>().ok()).flatten()
    };
    Some(Resume {
        stream: number(stream)?,
        from: number(index)?.checked_add(1)?,
    })
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
#[path = "replay_tests.rs"]
mod tests;
