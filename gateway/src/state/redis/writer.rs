//! The store's one writer: takes what is pending, says it to Redis, and on a failure keeps it
//! pending, marks the store degraded and tries again after the retry time. When Redis answers
//! again, every held session is written again.
//!
//! # Invariants
//!
//! 1. Every operation on Redis ends within the options' `wait` (a timeout around each).
//! 2. The task ends when the store's stop token is cancelled (the store dropped), from any wait.

use std::sync::{Arc, atomic::Ordering};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::{Inner, scripts::Written, table::Op};

pub(super) async fn run(inner: Arc<Inner>, stop: CancellationToken) {
    // The Redis this store last reached (its run id): another one (restarted, empty) is
    // written everything again.
    let mut seen: Option<String> = None;
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = inner.wake.notified() => {}
            () = tokio::time::sleep(inner.options.retry) => inner.check(&mut seen).await,
        }
        loop {
            let batch = inner.lock().take();
            if batch.is_empty() {
                break;
            }
            let said = inner.say(batch).await;
            inner.said.send_modify(|n| *n += 1);
            if !said {
                // Redis did not answer: wait, then try what is pending again.
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(inner.options.retry) => {}
                }
            }
        }
    }
}

impl Inner {
    /// Says `batch` to Redis; false when an operation failed (the rest are pending again).
    async fn say(&self, batch: Vec<(String, Op)>) -> bool {
        let mut rest = batch.into_iter();
        while let Some((key, op)) = rest.next() {
            match tokio::time::timeout(self.options.wait, self.apply(&key, &op)).await {
                Ok(Ok(written)) => {
                    self.lock().landed(&key);
                    self.answered(&key, written);
                }
                Ok(Err(_)) | Err(_) => {
                    self.failed("write");
                    let mut table = self.lock();
                    table.put_back(key, op);
                    for (key, op) in rest {
                        table.put_back(key, op);
                    }
                    table.flying.clear();
                    return false;
                }
            }
        }
        true
    }

    async fn apply(&self, key: &str, op: &Op) -> redis::RedisResult<Written> {
        let mut conn = self.conn.clone();
        let ttl = self.ttl_ms();
        match op {
            Op::Forget => self.scripts.forget(&mut conn, key).await,
            Op::Touch => {
                let Some(owner) = self.owner_of(key) else {
                    return Ok(Written::Done);
                };
                self.scripts.touch(&mut conn, key, &owner, ttl).await
            }
            Op::Write => {
                let Some((owner, text)) = self.snapshot(key) else {
                    return Ok(Written::Done);
                };
                self.scripts.write(&mut conn, key, &owner, &text, ttl).await
            }
        }
    }

    /// Ends once nothing is to be said about `key` any more (its record written), or Redis
    /// failed, or the options' `wait` passed. `said` was subscribed before `key` was asked for.
    pub(super) async fn written(&self, key: &str, mut said: watch::Receiver<u64>) {
        let written = async {
            while self.lock().unsaid(key) && !self.degraded.load(Ordering::Acquire) {
                if said.changed().await.is_err() {
                    return;
                }
            }
        };
        let _ = tokio::time::timeout(self.options.wait, written).await;
    }

    /// Ends once nothing is left to say to Redis, or Redis failed, or the options' `wait`
    /// passed (the drain's last step: what is pending now is what other replicas would miss).
    pub(super) async fn all_written(&self) {
        let mut said = self.said.subscribe();
        self.wake.notify_one();
        let written = async {
            while self.lock().unsaid_count() > 0 && !self.degraded.load(Ordering::Acquire) {
                if said.changed().await.is_err() {
                    return;
                }
            }
        };
        let _ = tokio::time::timeout(self.options.wait, written).await;
    }

    /// Asks Redis who it is: unreachable makes the store degraded; a Redis other than the last
    /// one (restarted, so empty) or the first answer after an outage has everything written.
    async fn check(&self, seen: &mut Option<String>) {
        let mut conn = self.conn.clone();
        let mut command = redis::cmd("INFO");
        command.arg("server");
        let info = command.query_async::<String>(&mut conn);
        let Ok(Ok(info)) = tokio::time::timeout(self.options.wait, info).await else {
            self.failed("check");
            return;
        };
        let id = info
            .lines()
            .find_map(|line| line.strip_prefix("run_id:"))
            .map(|id| id.trim().to_owned());
        let other = seen.is_some() && *seen != id;
        *seen = id;
        if self.degraded.swap(false, Ordering::AcqRel) || other {
            tracing::info!("Redis answers: every held host session is written again");
            self.lock().write_all();
        }
    }

    /// Redis answered: the store is whole again, or a session was claimed away from us.
    fn answered(&self, key: &str, written: Written) {
        if self.degraded.swap(false, Ordering::AcqRel) {
            tracing::info!("Redis answers again: every held host session is written again");
            self.lock().write_all();
        }
        match written {
            Written::Done => {}
            Written::Missing => self.lock().ask(key, Op::Write),
            Written::Fenced => {
                if let Some(held) = self.lock().held.get_mut(key) {
                    held.lost = true;
                }
                self.fenced.fetch_add(1, Ordering::Relaxed);
                tracing::info!("another replica took over a host session this one held");
            }
        }
    }

    /// An operation on Redis failed or ran past the wait.
    pub(super) fn failed(&self, what: &'static str) {
        self.failures.fetch_add(1, Ordering::Relaxed);
        crate::telemetry::host_store_failure(what);
        if !self.degraded.swap(true, Ordering::AcqRel) {
            tracing::warn!(
                retry = ?self.options.retry,
                "Redis cannot be reached: host sessions are served from this replica's copy and written when it answers"
            );
        }
    }

    fn owner_of(&self, key: &str) -> Option<String> {
        let table = self.lock();
        let held = table.held.get(key).filter(|h| h.shared && !h.lost)?;
        Some(held.owner.clone())
    }

    /// The owner and the state as JSON, serialized outside the lock.
    fn snapshot(&self, key: &str) -> Option<(String, String)> {
        let (owner, state) = {
            let table = self.lock();
            let held = table.held.get(key).filter(|h| h.shared && !h.lost)?;
            (held.owner.clone(), held.state.clone())
        };
        let text = serde_json::to_string(&state).ok()?;
        Some((owner, text))
    }
}
