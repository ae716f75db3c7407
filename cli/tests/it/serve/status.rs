//! The status page (`/status`, `/status.json`, `/status/events`) of a real `serve`: what it
//! says after an upstream dies and comes back, its guards (those of `/mcp`), that no secret
//! reaches it, and the bound on its event streams.

use std::time::Duration;

use futures::StreamExt;
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{
    gateway::{FAST, Gateway},
    raw::Raw,
};
use crate::common::{LIMIT, process::MockProcess};

const TOKEN: &str = "status-token-Zq81xK";

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client")
}

async fn get(gateway: &Gateway, path: &str, headers: &[(&str, &str)]) -> reqwest::Response {
    let mut request = client().get(format!("{}{path}", gateway.base));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.expect("GET")
}

async fn facts(gateway: &Gateway, token: Option<&str>) -> Value {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let headers: Vec<(&str, &str)> = bearer
        .iter()
        .map(|b| ("authorization", b.as_str()))
        .collect();
    let response = get(gateway, "/status.json", &headers).await;
    assert_eq!(response.status(), StatusCode::OK);
    response.json().await.expect("JSON")
}

/// Reads `/status.json` until `want` holds of it, within [`LIMIT`].
async fn wait_facts(gateway: &Gateway, what: &str, want: impl Fn(&Value) -> bool) -> Value {
    let waited = tokio::time::timeout(LIMIT, async {
        loop {
            let facts = facts(gateway, None).await;
            if want(&facts) {
                return facts;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    waited.unwrap_or_else(|_| panic!("/status.json never said {what}"))
}

/// The first event of `/status/events`, within [`LIMIT`]; the stream is kept open in `keep`.
async fn first_event(response: reqwest::Response) -> (String, impl Sized) {
    let mut stream = response.bytes_stream();
    let mut text = String::new();
    let read = tokio::time::timeout(LIMIT, async {
        while !text.contains("\n\n") {
            let chunk = stream.next().await.expect("an event").expect("bytes");
            text.push_str(&String::from_utf8_lossy(&chunk));
        }
    });
    read.await.expect("the first event in time");
    (text, stream)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_json_shows_an_upstream_dying_and_coming_back() {
    let mut mock = MockProcess::start("http").await;
    let url = mock.url();
    let mut args: Vec<&str> = FAST.to_vec();
    args.extend(["--name", "mock", "--url", &url]);
    let gateway = Gateway::start(&args).await;
    let host = gateway.host().await;
    host.call("echo", json!({"text": "hi"})).await;
    let up = wait_facts(&gateway, "ready", |f| f["upstreams"][0]["state"] == "ready").await;
    assert_eq!(up["upstreams"][0]["name"], "mock", "{up}");
    assert_eq!(up["upstreams"][0]["generation"], 1, "{up}");
    assert_eq!(up["sessions"]["total"], 1, "{up}");
    assert_eq!(up["sessions"]["by_revision"]["2025-11-25"], 1, "{up}");
    assert_eq!(up["sessions"]["by_token"]["anyone"], 1, "{up}");
    let echo = (up["tools"].as_array().expect("tools").iter())
        .find(|t| t["tool"] == "echo")
        .cloned()
        .unwrap_or_else(|| panic!("echo among the tools: {up}"));
    assert!(echo["calls"].as_u64() >= Some(1), "{up}");
    assert!(echo["p50_ms"].is_number(), "{up}");
    // The upstream is idle after the call: its heartbeat probes it, and the answer's round
    // trip is shown.
    let probed = wait_facts(&gateway, "a probe's round trip", |f| {
        f["upstreams"][0]["probe_rtt_ms"].is_number()
    })
    .await;
    assert!(
        probed["upstreams"][0]["probe_rtt_ms"].as_f64() >= Some(0.0),
        "{probed}"
    );
    assert_eq!(probed["answers"]["replays"], 0, "{probed}");

    mock.kill().await;
    let down = wait_facts(&gateway, "the death", |f| {
        f["upstreams"][0]["state"] != "ready" && f["upstreams"][0]["last_death"].is_object()
    })
    .await;
    let death = &down["upstreams"][0]["last_death"];
    assert!(
        death["cause"].is_string() && death["at_ms"].is_u64(),
        "{down}"
    );
    mock.restart().await;
    let back = wait_facts(&gateway, "ready again", |f| {
        f["upstreams"][0]["state"] == "ready" && f["upstreams"][0]["generation"].as_u64() > Some(1)
    })
    .await;
    let kinds: Vec<&str> = (back["upstreams"][0]["timeline"]
        .as_array()
        .expect("timeline"))
    .iter()
    .filter_map(|m| m["kind"].as_str())
    .collect();
    assert_eq!(kinds, ["ready", "died", "ready"], "{back}");
    assert_eq!(
        back["sessions"]["total"], 1,
        "the host session stayed: {back}"
    );
    host.close().await;
    gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_paths_have_the_guards_of_mcp() {
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
    let gateway = Gateway::start_env(&args, &[("GATEWAY_TOKEN", TOKEN)]).await;
    let bearer = format!("Bearer {TOKEN}");
    let good = ("authorization", bearer.as_str());
    for path in ["/status", "/status.json", "/status/events"] {
        let none = get(&gateway, path, &[]).await;
        assert_eq!(
            none.status(),
            StatusCode::UNAUTHORIZED,
            "{path} without a token"
        );
        assert!(none.headers().contains_key("www-authenticate"), "{path}");
        let wrong = get(&gateway, path, &[("authorization", "Bearer not-ours")]).await;
        assert_eq!(
            wrong.status(),
            StatusCode::UNAUTHORIZED,
            "{path} with a wrong token"
        );
        let origin = get(&gateway, path, &[good, ("origin", "http://evil.example")]).await;
        assert_eq!(
            origin.status(),
            StatusCode::FORBIDDEN,
            "{path} from another origin"
        );
        let host = get(&gateway, path, &[good, ("host", "evil.example")]).await;
        assert_eq!(
            host.status(),
            StatusCode::FORBIDDEN,
            "{path} under another host name"
        );
        let same = gateway.base.clone();
        let fine = get(&gateway, path, &[good, ("origin", same.as_str())]).await;
        assert_eq!(
            fine.status(),
            StatusCode::OK,
            "{path} with the token, same origin"
        );
    }
    let page = get(&gateway, "/status", &[good]).await;
    let policy = page.headers()["content-security-policy"]
        .to_str()
        .expect("ascii")
        .to_owned();
    assert!(policy.starts_with("default-src 'none';"), "{policy}");
    assert!(
        !policy.contains("unsafe-inline") && !policy.contains("http"),
        "{policy}"
    );
    let html = page.text().await.expect("page");
    assert!(
        html.contains("data-upstream=\"mock\""),
        "rendered on the server: {html}"
    );
    assert!(
        !html.contains(" src=") && !html.contains(" href="),
        "no external asset: {html}"
    );
    gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_token_session_id_or_credential_reaches_the_status_paths() {
    let mut mock = MockProcess::start("http").await;
    // A credential in the upstream's URL (userinfo and a query value) and a named token.
    let url = mock.url().replace("http://", "http://user:Upw-7Hq2@") + "?key=Qk-91xLm";
    let mut args: Vec<&str> = FAST.to_vec();
    args.extend([
        "--auth-token-env",
        "GATEWAY_TOKEN",
        "--name",
        "mock",
        "--url",
        &url,
    ]);
    let named = format!("ops:{TOKEN}");
    let gateway = Gateway::start_env(&args, &[("GATEWAY_TOKEN", named.as_str())]).await;
    let bearer = format!("Bearer {TOKEN}");
    let auth = [("authorization", bearer.as_str())];
    let raw = Raw::new(&gateway.url());
    let session = raw.session_with(&auth).await;
    // A death, so that its detail (which may name the URL) is on the page too.
    mock.kill().await;
    wait_facts_with(&gateway, &bearer, |f| {
        f["upstreams"][0]["last_death"].is_object()
    })
    .await;
    mock.restart().await;
    let mut seen = String::new();
    for path in ["/status", "/status.json"] {
        let response = get(&gateway, path, &auth).await;
        seen.push_str(&response.text().await.expect("body"));
    }
    let (event, _open) = first_event(get(&gateway, "/status/events", &auth).await).await;
    seen.push_str(&event);
    assert!(
        seen.contains("\"ops\"") || seen.contains(">ops<"),
        "the caller by name: {seen}"
    );
    for secret in [TOKEN, session.as_str(), "Upw-7Hq2", "Qk-91xLm"] {
        assert!(
            !seen.contains(secret),
            "{secret} reached the status paths: {seen}"
        );
    }
    gateway.stop().await;
}

async fn wait_facts_with(gateway: &Gateway, bearer: &str, want: impl Fn(&Value) -> bool) {
    let waited = tokio::time::timeout(LIMIT, async {
        loop {
            let response = get(gateway, "/status.json", &[("authorization", bearer)]).await;
            if want(&response.json().await.expect("JSON")) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    waited.await.expect("/status.json in time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_event_feed_takes_at_most_sixteen_watchers_and_frees_a_place_when_one_leaves() {
    let mock = MockProcess::start("http").await;
    let url = mock.url();
    let mut args: Vec<&str> = FAST.to_vec();
    args.extend(["--name", "mock", "--url", &url]);
    let gateway = Gateway::start(&args).await;
    let mut open = Vec::new();
    for _ in 0..16 {
        let response = get(&gateway, "/status/events", &[]).await;
        assert_eq!(response.status(), StatusCode::OK);
        let (event, stream) = first_event(response).await;
        assert!(event.starts_with("data: {"), "{event}");
        open.push(stream);
    }
    let over = get(&gateway, "/status/events", &[]).await;
    assert_eq!(over.status(), StatusCode::SERVICE_UNAVAILABLE);
    open.pop();
    // The place comes back when the server notices the stream is gone (its next write).
    let again = tokio::time::timeout(LIMIT, async {
        loop {
            let response = get(&gateway, "/status/events", &[]).await;
            if response.status() == StatusCode::OK {
                return response;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    let (event, _stream) = first_event(again.await.expect("a place again in time")).await;
    assert!(event.starts_with("data: {"), "{event}");
    gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_start_line_and_the_status_name_the_front() {
    let mock = MockProcess::start("http").await;
    let url = mock.url();
    for front in ["own", "rmcp"] {
        let gateway = Gateway::start(&["--front", front, "--url", &url]).await;
        let said = format!("(front {front}, ");
        assert!(
            gateway
                .log()
                .iter()
                .any(|line| line.contains("serving MCP at") && line.contains(&said)),
            "--front {front}: {:?}",
            gateway.log()
        );
        let facts = facts(&gateway, None).await;
        assert_eq!(facts["front"], front, "{facts}");
        let page = get(&gateway, "/status", &[])
            .await
            .text()
            .await
            .expect("the page");
        assert!(page.contains(&format!("· front {front}<")), "{page}");
        assert!(gateway.stop().await.success());
    }
}
