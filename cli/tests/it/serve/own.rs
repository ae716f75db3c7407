//! The gateway's own front (`--front own`), as plain HTTP sees it: a request answered as one
//! JSON body, a notification taken with `202`, `DELETE` with `204`, an unknown session `404`,
//! the body bound, the protocol version header, one host's requests reaching only its session,
//! and requests without a session still served (by rmcp's front behind it).

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{
    gateway::{FAST, Gateway},
    raw::{Raw, answer, messages},
};
use crate::common::mock_binary;

/// A gateway on the own front before a stdio mock, with `extra` options.
async fn own(extra: &[&str]) -> Gateway {
    let mut args: Vec<&str> = FAST.to_vec();
    args.extend(["--front", "own"]);
    args.extend_from_slice(extra);
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

fn call(id: u64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}})
}

/// The first text of a tool result.
fn text_of(result: &Value) -> Option<String> {
    result["content"][0]["text"].as_str().map(str::to_owned)
}

/// The text of the tool result answering `id` in `response`.
async fn result_text(response: reqwest::Response, id: u64) -> String {
    let reply = answer(response, id).await;
    text_of(&reply["result"]).unwrap_or_else(|| panic!("a tool result: {reply}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_is_answered_as_one_json_body_and_a_notification_with_202() {
    let gateway = own(&[]).await;
    let raw = Raw::new(&gateway.url());
    // `session` asserts the 202 of `notifications/initialized`.
    let id = raw.session().await;
    let headers = raw.in_session(&id);
    // A call is one JSON body when answered within the grace (else a stream: `own_resume.rs`).
    let response = raw
        .post(&call(2, "echo", json!({"text": "hi"})), &headers)
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(result_text(response, 2).await, "hi");
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
    let listed = raw.post(&list, &headers).await;
    let kind = listed.headers().get("content-type").cloned();
    assert_eq!(
        kind.as_ref().and_then(|v| v.to_str().ok()),
        Some("application/json")
    );
    let listed = answer(listed, 3).await;
    let tools = listed["result"]["tools"].as_array().expect("a tool list");
    assert!(tools.iter().any(|tool| tool["name"] == "echo"), "{listed}");
    let ping = json!({"jsonrpc": "2.0", "id": 4, "method": "ping"});
    assert_eq!(
        answer(raw.post(&ping, &headers).await, 4).await["result"],
        json!({})
    );
    let note = json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"});
    assert_eq!(
        raw.post(&note, &headers).await.status(),
        StatusCode::ACCEPTED
    );
    let status = gateway.stop().await;
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_ends_a_session_with_204_and_an_unknown_session_is_404() {
    let gateway = own(&[]).await;
    let raw = Raw::new(&gateway.url());
    let id = raw.session().await;
    assert_eq!(raw.delete(&id).await.status(), StatusCode::NO_CONTENT);
    let after = raw
        .post(&call(2, "echo", json!({"text": "x"})), &raw.in_session(&id))
        .await;
    assert_eq!(
        after.status(),
        StatusCode::NOT_FOUND,
        "the ended session is gone"
    );
    assert_eq!(raw.delete(&id).await.status(), StatusCode::NOT_FOUND);
    let never = "0123456789abcdef0123456789abcdef";
    let unknown = raw
        .post(
            &call(3, "echo", json!({"text": "x"})),
            &raw.in_session(never),
        )
        .await;
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    assert_eq!(raw.standalone(never).await.status(), StatusCode::NOT_FOUND);
    let status = gateway.stop().await;
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hosts_requests_reach_only_its_own_session() {
    // One upstream session per host session: what one host's calls change, the other never sees.
    let gateway = own(&["--per-host", "mock"]).await;
    let raw = Raw::new(&gateway.url());
    let (a, b) = (raw.session().await, raw.session().await);
    assert_ne!(a, b);
    let bump = |id| call(id, "bump", json!({}));
    assert_eq!(
        result_text(raw.post(&bump(2), &raw.in_session(&a)).await, 2).await,
        "1"
    );
    assert_eq!(
        result_text(raw.post(&bump(3), &raw.in_session(&a)).await, 3).await,
        "2"
    );
    assert_eq!(
        result_text(raw.post(&bump(2), &raw.in_session(&b)).await, 2).await,
        "1"
    );
    // The same request id in two sessions: each answered by its own.
    assert_eq!(
        result_text(raw.post(&bump(4), &raw.in_session(&b)).await, 4).await,
        "2"
    );
    assert_eq!(
        result_text(raw.post(&bump(4), &raw.in_session(&a)).await, 4).await,
        "3"
    );
    // One host's end is not the other's.
    assert_eq!(raw.delete(&a).await.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        result_text(raw.post(&bump(5), &raw.in_session(&b)).await, 5).await,
        "3"
    );
    let status = gateway.stop().await;
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_past_the_bound_is_refused_with_413_and_the_session_goes_on() {
    let gateway = own(&["--max-body", "2048"]).await;
    let raw = Raw::new(&gateway.url());
    let id = raw.session().await;
    let big = call(2, "echo", json!({"text": "x".repeat(4096)}));
    let refused = raw.post(&big, &raw.in_session(&id)).await;
    assert_eq!(refused.status(), StatusCode::PAYLOAD_TOO_LARGE);
    // Without a length declared (chunked), the bound holds as the body is read.
    let chunks = futures::stream::iter(
        (0..8).map(|_| Ok::<_, std::io::Error>(bytes::Bytes::from(vec![b' '; 1024]))),
    );
    let streamed = raw
        .http
        .post(&raw.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &id)
        .body(reqwest::Body::wrap_stream(chunks))
        .send()
        .await
        .expect("answered");
    assert_eq!(streamed.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let fresh = raw.post(&big, &[]).await;
    assert_eq!(
        fresh.status(),
        StatusCode::PAYLOAD_TOO_LARGE,
        "no session either"
    );
    let small = raw
        .post(
            &call(3, "echo", json!({"text": "ok"})),
            &raw.in_session(&id),
        )
        .await;
    assert_eq!(result_text(small, 3).await, "ok");
    let status = gateway.stop().await;
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headers_are_checked_and_requests_without_a_session_are_still_served() {
    let gateway = own(&[]).await;
    let raw = Raw::new(&gateway.url());
    let id = raw.session().await;
    let echo = call(2, "echo", json!({"text": "x"}));
    let unknown = raw
        .post(
            &echo,
            &[
                ("mcp-session-id", &id),
                ("mcp-protocol-version", "1999-01-01"),
            ],
        )
        .await;
    assert_eq!(unknown.status(), StatusCode::BAD_REQUEST);
    let json_only = raw
        .http
        .post(&raw.url)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .header("mcp-session-id", &id)
        .body(echo.to_string())
        .send()
        .await
        .expect("answered");
    assert_eq!(json_only.status(), StatusCode::NOT_ACCEPTABLE);
    let rebinding = raw
        .post(
            &echo,
            &[("mcp-session-id", &id), ("origin", "http://evil.example")],
        )
        .await;
    assert_eq!(rebinding.status(), StatusCode::FORBIDDEN);
    // A 2026-07-28 host has no session: served as before.
    let modern = raw
        .modern(
            3,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "m"}}),
        )
        .await;
    assert_eq!(modern.status(), StatusCode::OK);
    let reply = messages(modern).await;
    let reply = reply
        .iter()
        .find(|m| m["id"] == json!(3))
        .expect("an answer");
    assert_eq!(text_of(&reply["result"]).as_deref(), Some("m"));
    let status = gateway.stop().await;
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_asks_for_progress_gets_it_on_its_own_response_before_its_answer() {
    let gateway = own(&[]).await;
    let raw = Raw::new(&gateway.url());
    let id = raw.session().await;
    // With and without the standalone stream open: the progress is the request's either way.
    for (round, standalone) in [(2, false), (3, true)] {
        let stream = match standalone {
            true => Some(raw.standalone(&id).await),
            false => None,
        };
        let progress = json!({"jsonrpc": "2.0", "id": round, "method": "tools/call",
            "params": {"name": "progress", "arguments": {"steps": 3, "ms": 1},
                       "_meta": {"progressToken": format!("p-{round}")}}});
        let response = raw.post(&progress, &raw.in_session(&id)).await;
        let kind = response.headers().get("content-type").cloned();
        assert_eq!(
            kind.as_ref().and_then(|v| v.to_str().ok()),
            Some("text/event-stream")
        );
        let received = messages(response).await;
        let told: Vec<&Value> = received
            .iter()
            .filter(|m| m["method"] == json!("notifications/progress"))
            .collect();
        assert_eq!(told.len(), 3, "{received:?}");
        assert!(
            told.iter()
                .all(|m| m["params"]["progressToken"] == json!(format!("p-{round}")))
        );
        let last = received.last().expect("an answer");
        assert_eq!(
            last["id"],
            json!(round),
            "the answer comes last: {received:?}"
        );
        drop(stream);
    }
    let status = gateway.stop().await;
    assert!(status.success(), "{status}");
}
