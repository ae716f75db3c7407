//! The attempt budget of one web origin: what lets many sessions to one restarted server come
//! back as a bounded stream and not as a herd. Every attempt to a web origin waits its turn
//! here ([`admit`]): a supervisor's first (many started at once are a herd too), and every
//! reconnect, whatever ended its backoff (the backoff itself, or the origin watch of the
//! parent module). A `restart()` asked for by the host does not wait.
//!
//! Per origin and rate `r` (`reconnect.origin_attempts_per_second`), one task releases waiting
//! attempts from a token bucket refilled at `r` per second and holding at most
//! `c = max(1, r × tick)` tokens, `tick = max(10 ms, 1 s / r)`. So in any window `w` at most
//! `c + r × w` attempts start: 220 in any 100 ms at the default 2,000 per second. A stall of the
//! process does not save up tokens: the bucket never holds more than `c`.
//!
//! # Invariants
//!
//! 1. At most one budget task per origin and rate. It ends only with its queue empty and its
//!    bucket full, leaving the map under its lock, so the next one (starting full) grants
//!    nothing the last would not have.
//! 2. A budget task dropped without ending (its runtime shut down) leaves the map and drops its
//!    queue: its waiters go ahead rather than wait forever (the budget must never become the
//!    failure).

use std::{
    collections::{HashMap, VecDeque},
    sync::{Arc, LazyLock, Mutex, MutexGuard, PoisonError},
    time::Duration,
};

use tokio::sync::oneshot;

/// The shortest pause between two releases of an origin's budget.
const TICK: Duration = Duration::from_millis(10);

/// Resolves when `origin`'s attempt budget at `rate` per second lets one more attempt start
/// (see the module docs); at once when the budget has tokens and nobody waits before it, else
/// after about `waiters ahead / rate` (the waiters are this process's supervisors of the origin,
/// one attempt each at a time). The budget's task belongs to its map entry: it ends by itself a
/// tick after its last waiter, or with its runtime (invariants 1, 2).
///
/// # Cancel safety
///
/// Cancel-safe: a waiter dropped before its turn is skipped and uses no token.
pub(in crate::supervisor) async fn admit(origin: &str, rate: u32) {
    let (sender, turn) = oneshot::channel();
    {
        let mut map = budgets();
        let key = (origin.to_owned(), rate.max(1));
        match map.get(&key) {
            Some(budget) => lock(&budget.queue).push_back(sender),
            None => {
                let budget = Arc::new(Budget {
                    queue: Mutex::new(VecDeque::from([sender])),
                });
                map.insert(key.clone(), budget.clone());
                tokio::spawn(release(key, budget));
            }
        }
    }
    // An error is a budget task dropped with its runtime: go ahead (invariant 2).
    let _ = turn.await;
}

/// The attempts waiting on one origin's budget, first come first served.
struct Budget {
    queue: Mutex<VecDeque<oneshot::Sender<()>>>,
}

type Key = (String, u32);
type Budgets = Mutex<HashMap<Key, Arc<Budget>>>;

/// The budget of every origin (and rate) an attempt waits on (invariant 1).
static BUDGETS: LazyLock<Budgets> = LazyLock::new(Budgets::default);

fn budgets() -> MutexGuard<'static, HashMap<Key, Arc<Budget>>> {
    lock(&BUDGETS)
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Takes its budget out of the map, if still there, and drops its queue, when the task ends or
/// is dropped: no waiter is left behind (invariant 2).
struct Leave(Key, Arc<Budget>);

impl Drop for Leave {
    fn drop(&mut self) {
        let mut map = budgets();
        if map.get(&self.0).is_some_and(|b| Arc::ptr_eq(b, &self.1)) {
            map.remove(&self.0);
        }
        lock(&self.1.queue).clear();
    }
}

/// The task of one origin's budget (see the module docs).
async fn release(key: Key, budget: Arc<Budget>) {
    let rate = f64::from(key.1);
    let tick = TICK.max(Duration::from_secs_f64(1.0 / rate));
    let capacity = (rate * tick.as_secs_f64()).max(1.0);
    let leave = Leave(key, budget);
    let mut tokens = capacity;
    let mut last = tokio::time::Instant::now();
    let mut ticks = tokio::time::interval(tick);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let now = tokio::time::Instant::now();
        tokens = (tokens + rate * (now - last).as_secs_f64()).min(capacity);
        last = now;
        let mut map = budgets();
        let mut queue = lock(&leave.1.queue);
        while tokens >= 1.0 {
            let Some(waiter) = queue.pop_front() else {
                break;
            };
            if waiter.send(()).is_ok() {
                tokens -= 1.0;
            }
        }
        if queue.is_empty() && tokens >= capacity {
            // Leaves the map under its lock: nobody queues on a task that is ending.
            map.remove(&leave.0);
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The most starts of `times` (sorted) in any window of `window`.
    fn peak(times: &[tokio::time::Instant], window: Duration) -> usize {
        let mut best = 0;
        let mut start = 0;
        for end in 0..times.len() {
            while times[end] - times[start] >= window {
                start += 1;
            }
            best = best.max(end - start + 1);
        }
        best
    }

    /// Starts `n` waiters on `origin`'s budget at once; when each was let through.
    async fn admitted(origin: &str, rate: u32, n: usize) -> Vec<tokio::time::Instant> {
        let waiters: Vec<_> = (0..n)
            .map(|_| {
                let origin = origin.to_owned();
                tokio::spawn(async move {
                    admit(&origin, rate).await;
                    tokio::time::Instant::now()
                })
            })
            .collect();
        let mut times = Vec::new();
        for waiter in waiters {
            times.push(waiter.await.unwrap());
        }
        times.sort();
        times
    }

    #[tokio::test(start_paused = true)]
    async fn a_herd_on_one_origin_starts_within_the_budget() {
        // 2,000 a second: a bucket of 20, 220 in any 100 ms; 1,000 waiters take ~0.5 s.
        let times = admitted("budget.test:1", 2000, 1000).await;
        for (window, bound) in [(10, 40), (100, 220), (1000, 2020)] {
            let most = peak(&times, Duration::from_millis(window));
            assert!(
                most <= bound,
                "{most} started in {window} ms, bound {bound}"
            );
        }
        assert_eq!(
            peak(&times, Duration::from_millis(1)),
            20,
            "the bucket's burst"
        );
        // 20 a second: a bucket of one, one every 50 ms.
        let times = admitted("budget.test:2", 20, 30).await;
        assert!(peak(&times, Duration::from_millis(100)) <= 3);
        assert_eq!(times.len(), 30, "every waiter let through");
        // Once its bucket is full again (a tick at most), a budget nobody waits on is gone.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let left = budgets()
            .keys()
            .filter(|(o, _)| o == "budget.test:1" || o == "budget.test:2")
            .count();
        assert_eq!(left, 0, "idle budgets leave the map");
    }

    #[tokio::test(start_paused = true)]
    async fn a_waiter_dropped_before_its_turn_uses_no_token() {
        let origin = "budget.test:3";
        // Rate 10: one start every 100 ms. The first is let through at once; three wait.
        admit(origin, 10).await;
        let start = tokio::time::Instant::now();
        let dropped = tokio::spawn(admit(origin, 10));
        let kept: Vec<_> = (0..2)
            .map(|_| {
                tokio::spawn(async move {
                    admit(origin, 10).await;
                    tokio::time::Instant::now()
                })
            })
            .collect();
        tokio::task::yield_now().await;
        let waiting = budgets()
            .get(&(origin.to_owned(), 10))
            .map(|b| lock(&b.queue).len());
        assert_eq!(waiting, Some(3), "all three queued");
        dropped.abort();
        let mut times = Vec::new();
        for waiter in kept {
            times.push(waiter.await.unwrap() - start);
        }
        // Two turns, at 100 and 200 ms: the dropped waiter's turn went to the next.
        assert_eq!(
            times,
            [Duration::from_millis(100), Duration::from_millis(200)]
        );
    }

    #[test]
    fn a_budget_dropped_with_its_runtime_lets_its_waiters_go() {
        let origin = "budget.test:4";
        let first = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        // One a second: the second waiter would wait a second.
        first.block_on(admit(origin, 1));
        let other = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let waiter = other.spawn(admit(origin, 1));
        other.block_on(tokio::task::yield_now());
        drop(first);
        other
            .block_on(async { tokio::time::timeout(Duration::from_millis(500), waiter).await })
            .expect("let through when the budget's runtime went away")
            .unwrap();
    }
}
