//! A replica's drain in a fleet behind nginx or HAProxy (`serve --drain-hand-off`): the call in
//! flight on it is answered there, a new request of its session goes through the balancer to
//! the other replica (the draining one answers 503, the balancer sends it on), the session's
//! state is in Redis when the replica exits, and the replica exits 0.

use serde_json::json;

use super::{
    front::{Balancer, Front},
    redis::Redis,
    replica::Replica,
    takeover::wait_records,
};
use crate::{
    common::{LIMIT, process::MockProcess},
    serve::raw::{Raw, answer},
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draining_replica_answers_its_call_in_flight_while_nginx_sends_its_session_to_the_other()
{
    draining_replica(Balancer::Nginx).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draining_replica_answers_its_call_in_flight_while_haproxy_sends_its_session_to_the_other()
 {
    draining_replica(Balancer::HaProxy).await;
}

async fn draining_replica(balancer: Balancer) {
    let dir = tempfile::tempdir().expect("temp dir");
    let redis = Redis::start(dir.path()).await;
    let mock = MockProcess::start("http").await;
    let hand_off = ["--drain-hand-off"];
    let mut a = Replica::start_with(&mock.url(), &redis.url(), &hand_off).await;
    let b = Replica::start_with(&mock.url(), &redis.url(), &hand_off).await;
    let front = Front::start(balancer, dir.path(), &[a.port, b.port]).await;

    // The session is opened on A, and a 3 s call is in flight there (its head is out).
    let on_a = Raw::new(&a.url());
    let id = on_a.session().await;
    wait_records(&redis, 1).await;
    let level = json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel",
        "params": {"level": "debug"}});
    let set = on_a.post(&level, &on_a.in_session(&id)).await;
    assert_eq!(set.status(), reqwest::StatusCode::OK);
    let _ = answer(set, 2).await;
    let slow = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "sleep", "arguments": {"ms": 3000}}});
    let in_flight = on_a.post(&slow, &on_a.in_session(&id)).await;
    assert_eq!(in_flight.status(), reqwest::StatusCode::OK);

    let drained = async {
        a.sigterm();
        let readyz = format!("http://127.0.0.1:{}/readyz", a.port);
        let http = reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("client");
        let draining =
            async { while http.get(&readyz).send().await.expect("readyz").status() != 503 {} };
        tokio::time::timeout(LIMIT, draining)
            .await
            .expect("/readyz of the draining replica says 503");
        // Through the balancer, whichever replica its hash names: A (draining) answers 503 and it
        // sends the request to B, which takes the session over.
        let through = Raw::new(&front.url());
        let echo = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "moved"}}});
        let response = through.post(&echo, &through.in_session(&id)).await;
        assert_eq!(response.status(), reqwest::StatusCode::OK);
        let moved = answer(response, 4).await;
        assert_eq!(moved["result"]["content"][0]["text"], "moved", "{moved}");
        a.exited().await
    };
    let (slow, status) = tokio::join!(answer(in_flight, 3), drained);
    assert_ne!(slow["result"]["isError"], json!(true), "{slow}");
    assert!(
        slow["result"].is_object(),
        "the call in flight got its result: {slow}"
    );
    assert!(status.success(), "the drained replica exited {status}");
    // What the host set on A is in the record B took over.
    let key = &redis.host_keys().await[0];
    let state = redis.command(&["HGET", key, "state"]).await;
    assert!(state.contains("debug"), "{state}");
    drop(b);
    front.stop().await;
}
