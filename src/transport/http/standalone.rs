//! Whether a session's standalone `GET` stream is open yet.
//!
//! With a session (2025-era Streamable HTTP), rmcp opens the standalone `GET` stream in the
//! background once `notifications/initialized` is accepted. Until the server has that `GET`, a
//! message it sends outside a request's own stream (a `tools/list_changed`, an elicitation not
//! tied to a POST, a log line) has nowhere to go, and servers drop it. Our `tools/list` right
//! after the handshake often wins that race, so a change announced in between was lost, and a
//! server that asks something on the standalone stream during our first call asked into the void.
//!
//! So the connect waits, briefly and boundedly, for that `GET` to be answered (a stream, or a
//! refusal such as 405) before it lists the tools and calls the generation ready. A session the
//! server did not give an id opens no such stream, and nothing waits for it.

use std::sync::Arc;

use tokio::{sync::watch, time::Instant};

/// Where the standalone stream of one transport is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    /// No `initialize` with a session id seen: no standalone stream will be opened.
    NotExpected,
    /// The server gave a session id: rmcp will open the stream.
    Expected,
    /// The `GET` was answered (a stream, or an error).
    Answered,
}

/// Shared by the [`super::HttpClient`] (which sees the requests) and the connect (which waits).
#[derive(Debug, Clone)]
pub(crate) struct Standalone(Arc<watch::Sender<Stream>>);

impl Default for Standalone {
    fn default() -> Self {
        Standalone(Arc::new(watch::Sender::new(Stream::NotExpected)))
    }
}

impl Standalone {
    /// The answer to `initialize` carried a session id.
    pub(super) fn expect(&self) {
        self.0.send_if_modified(|s| {
            let changed = *s == Stream::NotExpected;
            if changed {
                *s = Stream::Expected;
            }
            changed
        });
    }

    /// A `GET` without `Last-Event-ID` (the standalone stream, not a resumption) was answered.
    pub(super) fn answered(&self) {
        self.0.send_replace(Stream::Answered);
    }

    /// Waits until the expected stream was answered, or `until`. True when nothing is left to
    /// wait for; false when `until` came first (the connect goes on: a server that holds the
    /// `GET`'s headers back must not block it).
    pub(crate) async fn settled(&self, until: Instant) -> bool {
        let mut state = self.0.subscribe();
        let started = Instant::now();
        let waited = tokio::time::timeout_at(until, state.wait_for(|s| *s != Stream::Expected));
        let settled = matches!(waited.await, Ok(Ok(_)));
        if settled && *state.borrow() == Stream::Answered {
            let waited_us = started.elapsed().as_micros() as u64;
            tracing::debug!(waited_us, "standalone GET stream answered");
        }
        settled
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    // Paused time: the bound of 20 ms below passes without waiting for the wall clock.
    #[tokio::test(start_paused = true)]
    async fn only_an_expected_stream_is_waited_for() {
        let soon = || Instant::now() + Duration::from_secs(5);
        let none = Standalone::default();
        assert!(
            none.settled(soon()).await,
            "no session: nothing to wait for"
        );

        let expected = Standalone::default();
        expected.expect();
        assert!(
            !expected
                .settled(Instant::now() + Duration::from_millis(20))
                .await,
            "not answered yet: the bound ends the wait"
        );
        let waiter = tokio::spawn({
            let expected = expected.clone();
            async move { expected.settled(soon()).await }
        });
        expected.answered();
        assert!(waiter.await.unwrap(), "answered: the wait ends");
        expected.expect();
        assert!(
            expected.settled(soon()).await,
            "a later expect changes nothing"
        );
    }
}
