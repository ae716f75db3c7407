//! The drain on SIGTERM (`gateway/src/http/drain.rs`): a call in flight is answered with its
//! result, `/readyz` answers 503 at once, a new session is refused while the sessions held are
//! served, the hand-off refuses those too, a second signal ends the process at once; and the
//! exit is 0 with no child left. The drain limit's answer is in `operate.rs`.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{
    gateway::{FAST, Gateway, HttpHost},
    raw::{Raw, initialize},
};
use crate::common::{LIMIT, alive, mock_binary};
use mcp_mock_server::Whoami;

/// A call that stays in flight while the test looks at the drain: 20 progress steps of 250 ms.
fn long_call() -> Value {
    json!({"steps": 20, "ms": 250})
}

/// A gateway over the mock as a stdio child (so that its reaping can be seen), with `extra`.
async fn gateway(extra: &[&str]) -> Gateway {
    let mut args: Vec<&str> = FAST.to_vec();
    args.extend(extra);
    args.extend([
        "--name",
        "mock",
        "--stdio",
        "--",
        mock_binary(),
        "mock-server",
    ]);
    args.extend(["--transport", "stdio"]);
    Gateway::start(&args).await
}

fn signal(gateway: &Gateway, signal: nix::sys::signal::Signal) {
    let pid = gateway.child.id().expect("running") as i32;
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal).expect("signal");
}

/// Polls `/readyz` (at most [`LIMIT`]) until it answers 503; its body.
async fn readyz_unavailable(gateway: &Gateway) -> Value {
    let http = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client");
    let url = format!("{}/readyz", gateway.base);
    let waited = tokio::time::timeout(LIMIT, async {
        loop {
            let response = http.get(&url).send().await.expect("readyz answers");
            if response.status() == StatusCode::SERVICE_UNAVAILABLE {
                return response.json::<Value>().await.expect("json");
            }
        }
    })
    .await;
    waited.expect("/readyz answered 503 after SIGTERM")
}

/// The stdio upstream's process id, and a long call in flight (its first progress came back).
async fn call_in_flight(
    host: &HttpHost,
) -> (
    u32,
    impl Future<Output = Result<rmcp::model::CallToolResult, String>>,
) {
    let child = Whoami::from_result(&host.call("whoami", json!({})).await)
        .expect("whoami")
        .pid;
    (child, host.try_call("progress", long_call()))
}

async fn wait_progress(host: &HttpHost) {
    host.wait_told("progress", |t| !t.progress.is_empty()).await;
}

/// Polls (at most [`LIMIT`]) until `pid` is gone.
async fn gone(pid: u32) -> bool {
    tokio::time::timeout(LIMIT, async {
        while alive(pid) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .is_ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_in_flight_at_sigterm_gets_its_result_while_readyz_says_503_and_serve_exits_0() {
    let mut gateway = gateway(&[]).await;
    let host = gateway.host().await;
    let (child, held) = call_in_flight(&host).await;
    let during = async {
        wait_progress(&host).await;
        signal(&gateway, nix::sys::signal::Signal::SIGTERM);
        let body = readyz_unavailable(&gateway).await;
        assert_eq!(body["draining"], json!(true), "{body}");
        // A new session is refused (503, for a balancer to send elsewhere); the session held
        // here is still served.
        let refused = Raw::new(&gateway.url()).post(&initialize(1), &[]).await;
        assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(refused.headers().contains_key("retry-after"));
        let again = host.try_call("whoami", json!({})).await;
        assert!(
            again.is_ok_and(|r| r.is_error != Some(true)),
            "a new call of the session held was not served during the drain"
        );
    };
    let (held, ()) = tokio::join!(held, during);
    let held = held.expect("the call in flight at SIGTERM was answered");
    assert_ne!(held.is_error, Some(true), "{held:?}");
    let status = tokio::time::timeout(LIMIT, gateway.child.wait())
        .await
        .expect("serve exits once drained")
        .expect("wait");
    assert!(status.success(), "{status}");
    assert!(
        gone(child).await,
        "the stdio upstream {child} outlived serve"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_hand_off_a_new_request_of_a_session_held_is_refused_503_during_the_drain() {
    let mut gateway = gateway(&["--drain-hand-off"]).await;
    let host = gateway.host().await;
    let raw = Raw::new(&gateway.url());
    let session = raw.session().await;
    let (child, held) = call_in_flight(&host).await;
    let during = async {
        wait_progress(&host).await;
        signal(&gateway, nix::sys::signal::Signal::SIGTERM);
        readyz_unavailable(&gateway).await;
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                          "params": {"name": "whoami", "arguments": {}}});
        let refused = raw.post(&call, &raw.in_session(&session)).await;
        assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(refused.headers().contains_key("retry-after"));
    };
    let (held, ()) = tokio::join!(held, during);
    let held = held.expect("the call in flight at SIGTERM was answered");
    assert_ne!(held.is_error, Some(true), "{held:?}");
    let status = tokio::time::timeout(LIMIT, gateway.child.wait())
        .await
        .expect("serve exits once drained")
        .expect("wait");
    assert!(status.success(), "{status}");
    assert!(
        gone(child).await,
        "the stdio upstream {child} outlived serve"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_sigterm_during_the_drain_ends_serve_at_once() {
    let mut gateway = gateway(&[]).await;
    let host = gateway.host().await;
    let (child, held) = call_in_flight(&host).await;
    let during = async {
        wait_progress(&host).await;
        signal(&gateway, nix::sys::signal::Signal::SIGTERM);
        readyz_unavailable(&gateway).await;
        signal(&gateway, nix::sys::signal::Signal::SIGTERM);
        // Long before the call (5 s) or the drain limit (30 s) would end it.
        tokio::time::timeout(LIMIT, gateway.child.wait())
            .await
            .expect("serve exits at the second signal")
            .expect("wait")
    };
    let (held, status) = tokio::join!(held, during);
    assert_eq!(status.code(), Some(128 + 15), "{status}");
    assert!(
        !held.is_ok_and(|r| r.is_error != Some(true)),
        "the call ran to its end: the second signal did not end serve"
    );
    assert!(
        gone(child).await,
        "the stdio upstream {child} outlived serve"
    );
}
