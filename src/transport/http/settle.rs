//! [`Standalone`]: where one transport's standalone `GET` stream is, shared by the transport
//! (which opens it, [`super::standalone`]) and the connect (which waits for it).
//!
//! The connect waits, briefly and boundedly ([`Standalone::settled`]), for the first `GET` to be
//! answered before it lists the tools: until the server has that stream, a change it announces
//! has nowhere to go, and servers drop it.

use std::sync::Arc;

use tokio::{sync::watch, time::Instant};

/// Where the standalone stream of one transport is, for the connect to wait on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    /// No `initialize` with a session id seen: no standalone stream will be opened.
    NotExpected,
    /// The server gave a session id: the stream will be opened.
    Expected,
    /// The `GET` was answered (a stream, or an error).
    Answered,
}

/// Shared by the transport (which opens the stream) and the connect (which waits).
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

    /// The first `GET` of the standalone stream was answered.
    pub(super) fn answered(&self) {
        if *self.0.borrow() != Stream::Answered {
            self.0.send_replace(Stream::Answered);
        }
    }

    /// Waits until the expected stream was answered, or `until`. True when nothing is left to
    /// wait for; false when `until` came first (the connect goes on: a server that holds the
    /// `GET`'s headers back must not block it).
    pub(crate) async fn settled(&self, until: Instant) -> bool {
        let mut state = self.0.subscribe();
        let waited = tokio::time::timeout_at(until, state.wait_for(|s| *s != Stream::Expected));
        matches!(waited.await, Ok(Ok(_)))
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
