//! Ownership, with the store in this process and a real Redis: a claim is a compare-and-swap,
//! and a replica whose session was claimed can no longer write it.

#![allow(deprecated)]

use std::sync::Arc;

use mcp_resilient_gateway::state::{HostStore, RedisHostStore, RedisStoreOptions};
use rmcp::model::LoggingLevel;

use super::redis::Redis;
use crate::common::LIMIT;

fn store(redis: &Redis) -> Arc<RedisHostStore> {
    Arc::new(RedisHostStore::open(&redis.url(), RedisStoreOptions::default()).expect("store"))
}

/// Waits (bounded) until `check` holds.
async fn until(what: &str, mut check: impl FnMut() -> bool) {
    let wait = async {
        while !check() {
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(LIMIT, wait)
        .await
        .unwrap_or_else(|_| panic!("{what}: not within {LIMIT:?}"));
}

fn set(store: &RedisHostStore, key: &str, level: LoggingLevel) {
    store.update(key, &mut |state| {
        state.protocol = Some("2025-11-25".into());
        state.level = Some(level);
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_two_replicas_claiming_at_once_one_owns_the_session_and_the_others_writes_are_fenced() {
    let dir = tempfile::tempdir().expect("temp dir");
    let redis = Redis::start(dir.path()).await;
    let (first, b, c) = (store(&redis), store(&redis), store(&redis));
    set(&first, "s1", LoggingLevel::Info);
    // Once sharing ends, other replicas can find the session (the host's `initialize` is
    // answered only then, and its next request may reach any replica).
    first.share("s1").await;
    assert_eq!(redis.host_keys().await.len(), 1, "in Redis when share ends");

    let (got_b, got_c) = tokio::join!(b.claim("s1"), c.claim("s1"));
    let (got_b, got_c) = (
        got_b.expect("Redis answered b").expect("b read it"),
        got_c.expect("Redis answered c").expect("c read it"),
    );
    assert_eq!(got_b.level, Some(LoggingLevel::Info));
    assert_eq!(got_b, got_c, "both read the same record");

    // Each writes; exactly one write lands, the others are fenced (the first's included).
    set(&first, "s1", LoggingLevel::Error);
    set(&b, "s1", LoggingLevel::Warning);
    set(&c, "s1", LoggingLevel::Critical);
    let stores = [&first, &b, &c];
    until("every write answered", || {
        stores.iter().all(|s| s.status().pending == 0)
    })
    .await;
    let holders: Vec<_> = stores.iter().filter(|s| s.holds("s1")).collect();
    assert_eq!(holders.len(), 1, "one owner at a time");
    assert!(!first.holds("s1"), "the first owner was claimed away from");
    let fenced: u64 = stores.iter().map(|s| s.status().fenced).sum();
    assert_eq!(fenced, 2);

    // What Redis holds is the owner's write.
    let record = redis
        .command(&["HGET", &redis.host_keys().await[0], "state"])
        .await;
    let owner_level = holders[0].status();
    assert!(owner_level.claims == 1);
    let want = if b.holds("s1") { "warning" } else { "critical" };
    assert!(record.contains(want), "{record}");

    // A session nobody wrote is not found.
    assert_eq!(b.claim("never-seen").await, Ok(None));
}

/// A Redis too slow for a claim: the claim says it could not tell (the front answers 500 and the
/// host keeps its session), and once Redis answers again the next claim takes the session over,
/// whether the first claim's swap landed late or not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_redis_is_too_slow_for_says_so_and_the_next_claim_takes_the_session() {
    let dir = tempfile::tempdir().expect("temp dir");
    let redis = Redis::start(dir.path()).await;
    let first = store(&redis);
    set(&first, "s1", LoggingLevel::Info);
    first.share("s1").await;
    let mut options = RedisStoreOptions::default();
    options.wait = std::time::Duration::from_millis(200);
    let other = RedisHostStore::open(&redis.url(), options).expect("store");

    redis.stall(true);
    let claim = tokio::time::timeout(LIMIT, other.claim("s1")).await;
    redis.stall(false);
    let claim = claim.expect("the claim ended within its wait");
    assert!(claim.is_err(), "could not tell, not unknown: {claim:?}");

    // Redis answers again: the claims that follow succeed (the first may still find Redis's
    // connection being made again, and says so).
    let again = tokio::time::timeout(LIMIT, async {
        loop {
            if let Ok(found) = other.claim("s1").await {
                return found;
            }
        }
    })
    .await
    .expect("a claim succeeds once Redis answers");
    let state = again.expect("the session is found");
    assert_eq!(state.level, Some(LoggingLevel::Info));
    assert!(other.holds("s1"));
}
