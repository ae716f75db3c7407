//! Clock arithmetic that never panics.
//!
//! `Instant + Duration` panics when the sum overflows ("overflow when adding duration to
//! instant"), and a duration reaches it from a user (a per-call timeout, a library host's own
//! numbers) or a server (`Retry-After`, `retry:`, `ttlMs`, `expires_in`). Every deadline in the
//! crate is computed here instead: a sum past what the clock can hold is "far in the future",
//! which is what such a duration means. (`tokio::time::sleep` and `timeout` already saturate;
//! `sleep_until`/`timeout_at` take the deadline made here.)

use std::time::Duration;

use tokio::time::Instant;

/// About 30 years: the deadline of a wait that never ends in practice (tokio's own choice for
/// a sleep whose deadline overflows).
const FAR: Duration = Duration::from_secs(86_400 * 365 * 30);

/// `start + wait`, or a deadline far in the future when that overflows.
pub(crate) fn after(start: Instant, wait: Duration) -> Instant {
    start
        .checked_add(wait)
        .or_else(|| start.checked_add(FAR))
        .unwrap_or(start)
}

/// `now + wait`, or a deadline far in the future when that overflows.
pub(crate) fn deadline_in(wait: Duration) -> Instant {
    after(Instant::now(), wait)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_deadline_past_the_clock_is_far_in_the_future_not_a_panic() {
        let now = Instant::now();
        let far = after(now, Duration::MAX);
        assert!(far >= now + Duration::from_secs(86_400 * 365));
        assert_eq!(
            after(now, Duration::from_secs(5)),
            now + Duration::from_secs(5)
        );
        assert!(deadline_in(Duration::from_secs(u64::MAX)) > now);
    }
}
