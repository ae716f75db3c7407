//! Operating the gateway: `/healthz` and `/readyz`, the metrics, the drain limit on SIGTERM, and its
//! worker threads.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::gateway::{FAST, Gateway, refused};
use crate::common::{LIMIT, alive, mock_binary, process::MockProcess};
use mcp_mock_server::Whoami;

async fn readyz(gateway: &Gateway, token: Option<&str>) -> (StatusCode, Value) {
    let http = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client");
    let mut request = http.get(format!("{}/readyz", gateway.base));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = tokio::time::timeout(LIMIT, request.send())
        .await
        .expect("in time")
        .expect("readyz");
    let status = response.status();
    (status, response.json().await.expect("json"))
}

/// Polls `/readyz` (at most [`LIMIT`]) until its status is `want`.
async fn wait_ready(gateway: &Gateway, want: StatusCode) -> Value {
    let waited = tokio::time::timeout(LIMIT, async {
        loop {
            let (status, body) = readyz(gateway, None).await;
            if status == want {
                return body;
            }
        }
    })
    .await;
    waited.unwrap_or_else(|_| panic!("/readyz never said {want}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_answers_and_readyz_follows_the_shared_upstream() {
    let mut mock = MockProcess::start("http").await;
    let url = mock.url();
    let mut args: Vec<&str> = FAST.to_vec();
    args.extend(["--name", "mock", "--url", &url]);
    let gateway = Gateway::start(&args).await;
    let http = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client");
    let health = http
        .get(format!("{}/healthz", gateway.base))
        .send()
        .await
        .expect("healthz");
    assert_eq!(health.status(), StatusCode::OK);
    let ready = wait_ready(&gateway, StatusCode::OK).await;
    assert_eq!(ready["servers"]["mock"], json!("ready"), "{ready}");
    mock.kill().await;
    let down = wait_ready(&gateway, StatusCode::SERVICE_UNAVAILABLE).await;
    assert_eq!(down["ready"], json!(false), "{down}");
    mock.restart().await;
    wait_ready(&gateway, StatusCode::OK).await;
    gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_names_the_servers_only_to_an_authenticated_request() {
    let mock = MockProcess::start("http").await;
    let url = mock.url();
    let mut args: Vec<&str> = FAST.to_vec();
    args.extend([
        "--auth-token-env",
        "GATEWAY_TOKEN",
        "--name",
        "mock",
        "--url",
        &url,
    ]);
    let gateway = Gateway::start_env(&args, &[("GATEWAY_TOKEN", "t0ken")]).await;
    let (_, anonymous) = readyz(&gateway, None).await;
    assert!(anonymous.get("servers").is_none(), "{anonymous}");
    let (_, known) = readyz(&gateway, Some("t0ken")).await;
    assert!(known["servers"].get("mock").is_some(), "{known}");
    gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_drain_limit_answers_a_call_still_in_flight_as_may_have_run_and_reaps_the_child() {
    let mut args: Vec<&str> = FAST.to_vec();
    args.extend([
        "--drain-limit",
        "300ms",
        "--name",
        "mock",
        "--stdio",
        "--",
        mock_binary(),
        "mock-server",
    ]);
    args.extend(["--transport", "stdio"]);
    let gateway = Gateway::start(&args).await;
    let host = gateway.host().await;
    let result = host.call("whoami", json!({})).await;
    let child = Whoami::from_result(&result).expect("whoami").pid;
    let held = host.try_call("progress", json!({"steps": 100, "ms": 300}));
    let stop = async {
        // The call is in flight once its first progress has come back.
        host.wait_told("progress", |t| !t.progress.is_empty()).await;
        let pid = gateway.child.id().expect("running") as i32;
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGTERM,
        )
        .expect("SIGTERM");
        let sent = tokio::time::Instant::now();
        let mut child_process = gateway.child;
        let status = tokio::time::timeout(LIMIT, child_process.wait()).await;
        (status, sent.elapsed())
    };
    let (held, (status, took)) = tokio::join!(held, stop);
    let status = status
        .unwrap_or_else(|_| panic!("serve still running {LIMIT:?} after SIGTERM"))
        .expect("wait");
    assert!(status.success(), "{status} after {took:?}");
    // Answered, not cut: a tool error that says it may have run.
    let held = held.expect("the call in flight at the drain limit was answered");
    assert_eq!(held.is_error, Some(true), "{held:?}");
    let text = serde_json::to_string(&held.content).expect("json");
    assert!(text.contains("may have run"), "{text}");
    assert!(!alive(child), "the stdio upstream {child} outlived serve");
}

/// The value of the first sample of `name` whose labels contain every one of `labels`.
fn sample(text: &str, name: &str, labels: &[&str]) -> Option<f64> {
    text.lines()
        .filter(|line| line.starts_with(name) && labels.iter().all(|l| line.contains(l)))
        .find_map(|line| line.rsplit(' ').next()?.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_show_served_operations_and_the_host_sessions() {
    let mock = MockProcess::start("http").await;
    let url = mock.url();
    let mut args: Vec<&str> = FAST.to_vec();
    args.extend(["--metrics", "127.0.0.1:0", "--name", "mock", "--url", &url]);
    let gateway = Gateway::start(&args).await;
    let line = gateway
        .log()
        .into_iter()
        .find(|l| l.contains("metrics at "))
        .expect("the metrics address");
    let metrics = line
        .split("metrics at ")
        .nth(1)
        .expect("a URL")
        .trim()
        .to_owned();
    let http = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client");
    let scrape = || async {
        let response = http.get(&metrics).send().await.expect("scrape");
        response.text().await.expect("text")
    };
    let host = gateway.host().await;
    host.call("echo", json!({"text": "counted"})).await;
    let text = scrape().await;
    let calls = sample(
        &text,
        "mcp_server_operation_duration_seconds_count",
        &[
            r#"mcp_method_name="tools/call""#,
            r#"network_transport="tcp""#,
        ],
    );
    assert_eq!(calls, Some(1.0), "{text}");
    let open = sample(
        &text,
        "mcp_server_resilience_host_sessions",
        &[r#"network_transport="tcp""#],
    );
    assert_eq!(open, Some(1.0), "{text}");
    host.close().await;
    let ended = tokio::time::timeout(LIMIT, async {
        loop {
            let text = scrape().await;
            let sessions = sample(&text, "mcp_server_session_duration_seconds_count", &[]);
            if sessions == Some(1.0) {
                return text;
            }
        }
    })
    .await
    .expect("the session's end was recorded");
    let open = sample(&ended, "mcp_server_resilience_host_sessions", &[]);
    assert_eq!(open, Some(0.0), "{ended}");
    gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_sets_the_runtimes_threads_and_zero_is_refused() {
    let mock = MockProcess::start("http").await;
    let url = mock.url();
    for (workers, said) in [("1", ", 1 worker thread)"), ("3", ", 3 worker threads)")] {
        let gateway = Gateway::start(&["--workers", workers, "--url", &url]).await;
        // The count is the runtime's own (tokio's metrics), not the flag read back.
        assert!(
            gateway.log().iter().any(|line| line.ends_with(said)),
            "--workers {workers}: {:?}",
            gateway.log()
        );
        let host = gateway.host().await;
        let answer = host.call("echo", json!({"text": "one thread"})).await;
        assert!(format!("{answer:?}").contains("one thread"), "{answer:?}");
        assert!(gateway.stop().await.success());
    }
    let zero = refused(&["--workers", "0", "--url", &url]).await;
    assert_eq!(zero.status.code(), Some(2), "a usage error");
    let stderr = String::from_utf8_lossy(&zero.stderr);
    assert!(stderr.contains("--workers"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_drain_limit_answers_an_own_front_call_in_flight_as_may_have_run_on_its_stream() {
    let mock = MockProcess::start("http").await;
    let url = mock.url();
    let mut args: Vec<&str> = FAST.to_vec();
    args.extend(["--front", "own", "--drain-limit", "300ms"]);
    args.extend(["--name", "mock", "--url", &url]);
    let gateway = Gateway::start(&args).await;
    let raw = super::raw::Raw::new(&gateway.url());
    let id = raw.session().await;
    // No progress asked for: past the grace the call's response is a stream, its answer a
    // minute from now.
    let call = json!({"jsonrpc": "2.0", "id": 41, "method": "tools/call",
        "params": {"name": "peek", "arguments": {"ms": 60_000}}});
    let headers = raw.in_session(&id);
    let posted = raw.post(&call, &headers);
    let stop = async {
        mock.wait_requests("tools/call", 1).await;
        let pid = gateway.child.id().expect("running") as i32;
        let term = nix::sys::signal::Signal::SIGTERM;
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), term).expect("SIGTERM");
    };
    let (response, ()) = tokio::join!(posted, stop);
    let kind = response.headers().get("content-type").cloned();
    assert_eq!(
        kind.as_ref().and_then(|v| v.to_str().ok()),
        Some("text/event-stream")
    );
    let answer = super::raw::answer(response, 41).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("may have run"), "{text}");
    let mut child = gateway.child;
    let status = tokio::time::timeout(LIMIT, child.wait()).await;
    let status = status.expect("serve exits in time").expect("wait");
    assert!(status.success(), "{status}");
}
