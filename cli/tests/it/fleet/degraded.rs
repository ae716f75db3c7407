//! Redis gone: a replica serves the sessions it holds and accepts new ones, warns, and writes
//! everything again when Redis is back.

use serde_json::json;

use super::{redis::Redis, replica::Replica, takeover::wait_records};
use crate::{
    common::{LIMIT, host::text, process::MockProcess},
    serve::gateway::HttpHost,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_redis_a_replica_serves_old_and_new_sessions_and_writes_them_when_it_returns() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut redis = Redis::start(dir.path()).await;
    let mock = MockProcess::start("http").await;
    let replica = Replica::start(&mock.url(), &redis.url()).await;
    let old = HttpHost::connect(&replica.url(), None).await;
    assert_eq!(text(&old.call("echo", json!({"text": "1"})).await), "1");
    wait_records(&redis, 1).await;

    redis.kill().await;
    for n in 0..20 {
        let said = format!("old {n}");
        assert_eq!(text(&old.call("echo", json!({"text": said})).await), said);
    }
    let new = HttpHost::connect(&replica.url(), None).await;
    assert_eq!(text(&new.call("echo", json!({"text": "new"})).await), "new");
    let warned = |log: &[String]| log.iter().any(|l| l.contains("Redis cannot be reached"));
    let wait = async {
        while !warned(&replica.log()) {
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(LIMIT, wait)
        .await
        .expect("the replica warned that Redis is gone");

    // Back, and empty: both sessions are written again.
    redis.restart().await;
    wait_records(&redis, 2).await;
    assert_eq!(
        text(&old.call("echo", json!({"text": "after"})).await),
        "after"
    );
    assert!(!old.session.is_closed() && !new.session.is_closed());
}
