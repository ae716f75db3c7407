//! Requests per second per caller: a token bucket each, and a bound on how many are kept.
//!
//! Why a bound: JWT callers are as many as the issuer names, so the table of buckets must not
//! grow with them. A bucket that has filled up again carries nothing a new one would not
//! (a full bucket is a fresh bucket), so past [`MAX_TRACKED`] the full ones make room; when none
//! is full, the newcomers share one overflow bucket until some are. A caller that is limited
//! is therefore never un-limited by the bound: at worst it shares its budget.

use std::{
    collections::HashMap,
    hash::Hash,
    sync::{Mutex, PoisonError},
    time::Duration,
};

use tokio::time::Instant;

use super::Rate;

/// The most callers whose buckets are kept.
pub(in crate::http) const MAX_TRACKED: usize = 10_000;

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Bucket {
    fn full(rate: Rate, now: Instant) -> Self {
        Self {
            tokens: rate.burst,
            at: now,
        }
    }

    fn refill(&mut self, rate: Rate, now: Instant) {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        self.tokens = (self.tokens + elapsed * rate.per_second).min(rate.burst);
        self.at = now;
    }

    /// Takes one token, or says how long until there is one.
    fn take(&mut self, rate: Rate, now: Instant) -> Result<(), Duration> {
        self.refill(rate, now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            return Ok(());
        }
        Err(Duration::from_secs_f64(
            (1.0 - self.tokens) / rate.per_second,
        ))
    }
}

#[derive(Debug)]
struct Table<K> {
    buckets: HashMap<K, Bucket>,
    overflow: Option<Bucket>,
}

/// Every limited caller's bucket, by the caller's key. Locked only by synchronous code.
#[derive(Debug)]
pub(in crate::http) struct Buckets<K> {
    max: usize,
    table: Mutex<Table<K>>,
}

impl<K: Hash + Eq + Clone> Default for Buckets<K> {
    fn default() -> Self {
        Self::new(MAX_TRACKED)
    }
}

impl<K: Hash + Eq + Clone> Buckets<K> {
    pub(in crate::http) fn new(max: usize) -> Self {
        Self {
            max,
            table: Mutex::new(Table {
                buckets: HashMap::new(),
                overflow: None,
            }),
        }
    }

    /// One request of `caller` at `rate`: let through, or how long to wait.
    pub(in crate::http) fn take(&self, caller: &K, rate: Rate) -> Result<(), Duration> {
        let now = Instant::now();
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(bucket) = table.buckets.get_mut(caller) {
            return bucket.take(rate, now);
        }
        if table.buckets.len() >= self.max {
            // Full buckets make room (a full bucket is a fresh one).
            table.buckets.retain(|_, bucket| {
                let mut refilled = *bucket;
                refilled.refill(rate, now);
                refilled.tokens < rate.burst
            });
        }
        if table.buckets.len() >= self.max {
            let overflow = table
                .overflow
                .get_or_insert_with(|| Bucket::full(rate, now));
            return overflow.take(rate, now);
        }
        let mut bucket = Bucket::full(rate, now);
        let taken = bucket.take(rate, now);
        table.buckets.insert(caller.clone(), bucket);
        taken
    }

    #[cfg(test)]
    fn tracked(&self) -> usize {
        self.table
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .buckets
            .len()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    const TWO_A_SECOND: Rate = Rate {
        per_second: 2.0,
        burst: 2.0,
    };

    #[tokio::test(start_paused = true)]
    async fn a_caller_past_its_burst_waits_for_the_next_token_and_others_are_not_affected() {
        let buckets = Buckets::new(10);
        let (alice, bob): (Arc<str>, Arc<str>) = ("alice".into(), "bob".into());
        assert_eq!(buckets.take(&alice, TWO_A_SECOND), Ok(()));
        assert_eq!(buckets.take(&alice, TWO_A_SECOND), Ok(()));
        let wait = buckets
            .take(&alice, TWO_A_SECOND)
            .expect_err("past the burst");
        assert_eq!(wait, Duration::from_millis(500));
        assert_eq!(buckets.take(&bob, TWO_A_SECOND), Ok(()), "bob has his own");
        tokio::time::advance(Duration::from_millis(500)).await;
        assert_eq!(buckets.take(&alice, TWO_A_SECOND), Ok(()));
    }

    #[tokio::test(start_paused = true)]
    async fn past_the_bound_full_buckets_make_room_and_newcomers_share_one_until_then() {
        let buckets = Buckets::new(2);
        let names: Vec<Arc<str>> = (0..4).map(|i| Arc::from(format!("c{i}"))).collect();
        buckets.take(&names[0], TWO_A_SECOND).expect("first");
        buckets.take(&names[1], TWO_A_SECOND).expect("second");
        // Neither is full: the third and fourth share the overflow bucket.
        buckets
            .take(&names[2], TWO_A_SECOND)
            .expect("overflow, first token");
        buckets
            .take(&names[3], TWO_A_SECOND)
            .expect("overflow, second token");
        assert!(buckets.take(&names[3], TWO_A_SECOND).is_err(), "shared");
        assert_eq!(buckets.tracked(), 2);
        // Once the first two are full again, they make room.
        tokio::time::advance(Duration::from_secs(1)).await;
        buckets.take(&names[2], TWO_A_SECOND).expect("tracked now");
        assert_eq!(buckets.tracked(), 1);
    }
}
