//! The drain: what the gateway does between the stop and its end, so that a deploy is not a
//! crash.
//!
//! On the stop, `/readyz` answers 503 at once (the balancer and the orchestrator send no new
//! session here) and a request that would open a session is refused with 503; the requests of
//! the sessions held here go on being served (with [`DrainOptions::hand_off`], refused with 503
//! too, for the balancer to send to a replica that takes the session over). The drain ends once
//! no request is in flight and none has come for the quiet period, or at the limit; a request
//! still in flight then is answered as lost ("may have run", [`Unanswered`]) rather than cut.
//!
//! # Invariants
//!
//! 1. Only requests count as in flight (`POST`, `DELETE`); a `GET` stream (a host's standalone
//!    stream) never holds the drain up: it ends with the sessions.
//! 2. The drain ends at the limit at the latest; after the limit, a request answerable as lost
//!    gets that answer in its stream before the stream ends (on the own front, a request whose
//!    one JSON body is not written yet gets it as that body: `own/asks.rs`).

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, AtomicUsize, Ordering},
    },
    time::Duration,
};

use bytes::Bytes;
use futures::{Stream, StreamExt};
use tokio::{sync::Notify, time::Instant};
use tokio_util::sync::CancellationToken;

use super::{DrainOptions, lost::Unanswered};

/// The drain's state, shared by the guard (which counts requests) and the serve loop.
#[derive(Debug)]
pub(in crate::http) struct Drain {
    pub(in crate::http) options: DrainOptions,
    /// Cancelled by the stop: the drain has begun.
    pub(in crate::http) begun: CancellationToken,
    /// Cancelled when the drain is over: every request is refused.
    pub(in crate::http) over: CancellationToken,
    /// Cancelled when the limit passed: requests in flight are answered as lost.
    pub(in crate::http) cut: CancellationToken,
    in_flight: AtomicUsize,
    /// Milliseconds from `epoch` to the last request counted in (changed by the guard).
    last: AtomicU64,
    epoch: Instant,
    /// Woken when the last request in flight ends.
    idle: Notify,
}

/// How a drain ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::http) enum Ended {
    /// Nothing in flight, nothing come for the quiet period.
    Quiet,
    /// The limit passed with this many requests in flight.
    Limit(usize),
}

/// A request counted in flight until dropped (with its response's body).
pub(in crate::http) struct InFlight(Arc<Drain>);

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

impl Drain {
    /// Not begun; `begun` is the gateway's stop.
    pub(in crate::http) fn new(options: DrainOptions, begun: CancellationToken) -> Self {
        Self {
            options,
            begun,
            over: CancellationToken::new(),
            cut: CancellationToken::new(),
            in_flight: AtomicUsize::new(0),
            last: AtomicU64::new(0),
            epoch: Instant::now(),
            idle: Notify::new(),
        }
    }

    /// Counts a request in flight (invariant 1: the guard calls it for `POST` and `DELETE`).
    pub(in crate::http) fn arrived(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        let now = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last.fetch_max(now, Ordering::AcqRel);
        InFlight(self.clone())
    }

    /// Requests in flight now.
    pub(in crate::http) fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    /// Once the drain has begun: waits until nothing is in flight and nothing has come for the
    /// quiet period (counted from the start of the drain at the earliest), or until the limit.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: it only waits.
    pub(in crate::http) async fn settle(&self) -> Ended {
        let start = Instant::now();
        let deadline = start + self.options.limit;
        loop {
            let notified = self.idle.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let now = Instant::now();
            if now >= deadline {
                return match self.in_flight() {
                    0 => Ended::Quiet,
                    n => Ended::Limit(n),
                };
            }
            if self.in_flight() > 0 {
                tokio::select! {
                    () = notified => {}
                    () = tokio::time::sleep_until(deadline) => {}
                }
                continue;
            }
            let last = self.epoch + Duration::from_millis(self.last.load(Ordering::Acquire));
            let quiet_from = last.max(start) + self.options.quiet;
            if now >= quiet_from {
                return Ended::Quiet;
            }
            tokio::time::sleep_until(quiet_from.min(deadline)).await;
        }
    }

    /// Once cut: waits up to `grace` for the requests in flight to have written their answers.
    pub(in crate::http) async fn answered(&self, grace: Duration) {
        let deadline = Instant::now() + grace;
        loop {
            let notified = self.idle.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.in_flight() == 0 {
                return;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return;
            }
        }
    }
}

/// `body`, ended by `cut` (invariant 2): with the lost request's answer first when it has one.
pub(in crate::http) fn until_cut<S>(
    body: S,
    cut: CancellationToken,
    unanswered: Option<Unanswered>,
) -> impl Stream<Item = Result<Bytes, axum::Error>> + Send + 'static
where
    S: Stream<Item = Result<Bytes, axum::Error>> + Send + Unpin + 'static,
{
    let state = Some((body, cut, unanswered));
    futures::stream::unfold(state, |state| async move {
        let (mut body, cut, unanswered) = state?;
        tokio::select! {
            biased;
            chunk = body.next() => chunk.map(|chunk| (chunk, Some((body, cut, unanswered)))),
            () = cut.cancelled() => unanswered.map(|lost| (Ok(lost.event()), None)),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(quiet_ms: u64, limit_ms: u64) -> Arc<Drain> {
        let options = DrainOptions {
            quiet: Duration::from_millis(quiet_ms),
            limit: Duration::from_millis(limit_ms),
            ..DrainOptions::default()
        };
        Arc::new(Drain::new(options, CancellationToken::new()))
    }

    #[tokio::test(start_paused = true)]
    async fn an_idle_drain_ends_after_the_quiet_period() {
        let drain = drain(1_000, 30_000);
        let start = Instant::now();
        assert_eq!(drain.settle().await, Ended::Quiet);
        assert_eq!(start.elapsed(), Duration::from_secs(1));
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_in_flight_holds_the_drain_until_it_ends_and_the_quiet_period_after() {
        let drain = drain(1_000, 30_000);
        let held = drain.arrived();
        let start = Instant::now();
        let release = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(5)).await;
            drop(held);
        });
        assert_eq!(drain.settle().await, Ended::Quiet);
        // Arrived at 0 s, ended at 5 s: quiet from 0 s + 1 s has passed, so the end is at 5 s.
        assert_eq!(start.elapsed(), Duration::from_secs(5));
        release.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_that_comes_during_the_quiet_period_starts_it_again() {
        let drain = drain(1_000, 30_000);
        let start = Instant::now();
        let arriving = drain.clone();
        let late = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(600)).await;
            drop(arriving.arrived());
        });
        assert_eq!(drain.settle().await, Ended::Quiet);
        assert_eq!(start.elapsed(), Duration::from_millis(1_600));
        late.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn the_limit_ends_a_drain_with_a_request_still_in_flight() {
        let drain = drain(1_000, 30_000);
        let _held = drain.arrived();
        let start = Instant::now();
        assert_eq!(drain.settle().await, Ended::Limit(1));
        assert_eq!(start.elapsed(), Duration::from_secs(30));
    }

    #[tokio::test]
    async fn a_cut_body_ends_with_the_lost_answer() {
        let cut = CancellationToken::new();
        let pending = futures::stream::pending::<Result<Bytes, axum::Error>>();
        let unanswered = Unanswered::new(true, rmcp::model::NumberOrString::Number(7));
        let body = until_cut(pending, cut.clone(), Some(unanswered));
        cut.cancel();
        let chunks: Vec<Bytes> = body.map(Result::unwrap).collect().await;
        assert_eq!(chunks.len(), 1);
        let text = String::from_utf8(chunks[0].to_vec()).unwrap();
        assert!(
            text.starts_with("data: {") && text.ends_with("\n\n"),
            "{text}"
        );
        assert!(
            text.contains(r#""id":7"#) && text.contains("may have run"),
            "{text}"
        );
    }
}
