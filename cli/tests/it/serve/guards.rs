//! Bad input from hosts: each gets its status or JSON-RPC error, and a good host calling all
//! the while is not affected (its calls are counted, not assumed).

use std::sync::{
    Arc,
    atomic::{AtomicBool, AtomicU64, Ordering},
};

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{
    gateway::{FAST, Gateway, HttpHost, refused},
    raw::{Raw, initialize},
};
use crate::common::{LIMIT, process::MockProcess};

const GOOD: &str = "good-token-0123456789";
const OTHER: &str = "other-token-9876543210";
const MAX_BODY: usize = 64 * 1024;

/// A gateway in front of an HTTP mock, requiring one of two tokens, with small bounds.
async fn guarded(mock: &MockProcess, dir: &tempfile::TempDir) -> Gateway {
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, format!("# hosts\n{GOOD}\n{OTHER}\n")).expect("token file");
    let (url, tokens) = (mock.url(), tokens.display().to_string());
    let max_body = MAX_BODY.to_string();
    let mut args: Vec<&str> = FAST.to_vec();
    args.extend(["--auth-token-file", &tokens, "--max-body", &max_body]);
    args.extend([
        "--max-sessions-per-token",
        "2",
        "--max-requests-per-session",
        "2",
    ]);
    args.extend(["--name", "mock", "--protocol", "2025-11-25", "--url", &url]);
    Gateway::start(&args).await
}

/// Calls `echo` in a loop until `stop`, counting answers and failures.
fn keep_calling(
    host: HttpHost,
    stop: Arc<AtomicBool>,
) -> tokio::task::JoinHandle<(u64, Vec<String>)> {
    tokio::spawn(async move {
        let (ok, failed) = (AtomicU64::new(0), std::sync::Mutex::new(Vec::new()));
        while !stop.load(Ordering::SeqCst) {
            match host.try_call("echo", json!({"text": "steady"})).await {
                Ok(result) if result.is_error != Some(true) => {
                    ok.fetch_add(1, Ordering::SeqCst);
                }
                other => failed.lock().expect("lock").push(format!("{other:?}")),
            }
        }
        host.close().await;
        (ok.into_inner(), failed.into_inner().expect("lock"))
    })
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

async fn status_of(raw: &Raw, body: &Value, headers: &[(&str, &str)]) -> StatusCode {
    raw.post(body, headers).await.status()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_its_status_and_a_good_host_calling_meanwhile_is_not_affected() {
    let mock = MockProcess::start("http").await;
    let dir = tempfile::tempdir().expect("temp dir");
    let gateway = guarded(&mock, &dir).await;
    let good = HttpHost::connect(&gateway.url(), Some(GOOD)).await;
    let stop = Arc::new(AtomicBool::new(false));
    let steady = keep_calling(good, stop.clone());
    let raw = Raw::new(&gateway.url());
    let (good_auth, other_auth) = (bearer(GOOD), bearer(OTHER));
    let init = initialize(1);

    // No token, a wrong one: 401 with a challenge.
    let none = raw.post(&init, &[]).await;
    assert_eq!(none.status(), StatusCode::UNAUTHORIZED);
    let challenge = none.headers().get("www-authenticate").cloned();
    assert!(challenge.is_some_and(|c| c.to_str().unwrap_or("").starts_with("Bearer")));
    let wrong = raw.post(&init, &[("authorization", "Bearer nope")]).await;
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    let challenge = wrong.headers().get("www-authenticate").cloned();
    assert!(challenge.is_some_and(|c| c.to_str().unwrap_or("").contains("invalid_token")));
    // Another origin (DNS rebinding), even with a good token: 403.
    let evil = [
        ("authorization", good_auth.as_str()),
        ("origin", "http://evil.example"),
    ];
    assert_eq!(status_of(&raw, &init, &evil).await, StatusCode::FORBIDDEN);
    let evil_host = [
        ("authorization", good_auth.as_str()),
        ("host", "evil.example"),
    ];
    assert_eq!(
        status_of(&raw, &init, &evil_host).await,
        StatusCode::FORBIDDEN
    );
    // A body past the bound: 413; malformed JSON: 415.
    let huge = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "pad": "x".repeat(MAX_BODY)}});
    let auth = [("authorization", good_auth.as_str())];
    assert_eq!(
        status_of(&raw, &huge, &auth).await,
        StatusCode::PAYLOAD_TOO_LARGE
    );
    let malformed = raw
        .post_bytes(b"{\"jsonrpc\": \"2.0\", \"id\": ".to_vec(), &auth)
        .await;
    // rmcp's answer to a body that is not JSON-RPC: 415, saying what did not parse.
    assert_eq!(malformed.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let why = malformed.text().await.expect("a body");
    assert!(why.contains("deserialize"), "{why}");
    // An unknown session: 404.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "x"}}});
    let unknown = [
        ("authorization", good_auth.as_str()),
        ("mcp-session-id", "no-such-session"),
    ];
    assert_eq!(
        status_of(&raw, &call, &unknown).await,
        StatusCode::NOT_FOUND
    );
    // Too many sessions for one token: the third gets 429; the good token is not affected.
    let other = vec![("authorization", other_auth.as_str())];
    let first = raw.session_with(&other).await;
    let _second = raw.session_with(&other).await;
    assert_eq!(
        status_of(&raw, &init, &other).await,
        StatusCode::TOO_MANY_REQUESTS
    );
    // Too many requests in flight in one session: the third gets 429 while two are held. (They
    // ask for progress, so that either front answers with a stream whose head comes first.)
    let mut in_session = other.clone();
    in_session.extend(raw.in_session(&first));
    let block = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "sleep", "arguments": {"ms": 1500}, "_meta": {"progressToken": id}}})
    };
    let held = futures::future::join(
        raw.post(&block(10), &in_session),
        raw.post(&block(11), &in_session),
    )
    .await;
    assert_eq!(
        (held.0.status(), held.1.status()),
        (StatusCode::OK, StatusCode::OK)
    );
    assert_eq!(
        status_of(&raw, &call, &in_session).await,
        StatusCode::TOO_MANY_REQUESTS
    );
    drop(held);

    stop.store(true, Ordering::SeqCst);
    let (ok, failed) = tokio::time::timeout(LIMIT, steady)
        .await
        .expect("the good host stops in time")
        .expect("the good host's task");
    assert!(
        failed.is_empty(),
        "the good host's calls failed: {failed:?}"
    );
    assert!(ok > 0, "the good host made no call");
    eprintln!("the good host made {ok} calls meanwhile, none failed");
    gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosts_token_never_reaches_the_upstream() {
    let mock = MockProcess::start("http").await;
    let dir = tempfile::tempdir().expect("temp dir");
    let gateway = guarded(&mock, &dir).await;
    let host = HttpHost::connect(&gateway.url(), Some(GOOD)).await;
    host.call("echo", json!({"text": "with a token"})).await;
    let seen = mock.admin_get("requests").await.to_string();
    assert!(
        seen.contains("with a token"),
        "the call reached the upstream: {seen}"
    );
    assert!(!seen.contains(GOOD), "the host's token went upstream");
    gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_off_loopback_without_tokens_refuses_to_start_before_listening() {
    let output = refused(&["--listen", "0.0.0.0:0", "--stdio", "--", "true"]).await;
    assert_eq!(output.status.code(), Some(2), "a usage error");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("not a loopback address"), "{stderr}");
    assert!(
        !stderr.contains("serving MCP"),
        "it never listened: {stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_session_is_closed_and_its_host_then_gets_404() {
    let mock = MockProcess::start("http").await;
    let url = mock.url();
    let mut args: Vec<&str> = FAST.to_vec();
    args.extend(["--session-idle", "300ms", "--name", "mock", "--url", &url]);
    let gateway = Gateway::start(&args).await;
    let raw = Raw::new(&gateway.url());
    let id = raw.session().await;
    let readyz = format!("{}/readyz", gateway.base);
    let closed = tokio::time::timeout(LIMIT, async {
        loop {
            let ready: Value = raw
                .http
                .get(&readyz)
                .send()
                .await
                .expect("readyz")
                .json()
                .await
                .expect("json");
            if ready["sessions"] == json!(0) {
                return;
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "the idle session was never closed");
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    assert_eq!(
        status_of(&raw, &call, &raw.in_session(&id)).await,
        StatusCode::NOT_FOUND
    );
    gateway.stop().await;
}
