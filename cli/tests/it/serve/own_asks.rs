//! The own front (`--front own`) carrying an upstream's requests to the host, as plain HTTP
//! sees it: the question rides the response of the call that caused it (JSON until then, an
//! SSE stream from the question on), the host's answer goes back with a `POST` in its session
//! and only there, and the questions waiting per session are bounded.

use futures::StreamExt;
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{
    gateway::{FAST, Gateway},
    raw::{Raw, messages},
};
use crate::common::{LIMIT, mock_binary};

/// The most questions that wait per session (`gateway/src/http/own/asks.rs`).
const MAX_PENDING: usize = 8;

/// A gateway on the own front before a stdio mock of 2025-11-25 (it asks with
/// `elicitation/create`), one upstream per host session.
async fn own() -> Gateway {
    let mut args: Vec<&str> = FAST.to_vec();
    args.extend(["--front", "own", "--per-host", "mock", "--max-body", "4096"]);
    args.extend([
        "--name",
        "mock",
        "--protocol",
        "2025-11-25",
        "--stdio",
        "--",
    ]);
    args.extend([mock_binary(), "mock-server"]);
    args.extend(["--transport", "stdio"]);
    Gateway::start(&args).await
}

/// A session whose host declared it answers elicitations.
async fn session(raw: &Raw) -> String {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "raw", "version": "0"},
    }});
    let response = raw.post(&initialize, &[]).await;
    assert_eq!(response.status(), StatusCode::OK, "initialize");
    let id = (response.headers().get("mcp-session-id"))
        .and_then(|v| v.to_str().ok())
        .expect("a session id")
        .to_owned();
    let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let sent = raw.post(&done, &raw.in_session(&id)).await;
    assert_eq!(sent.status(), StatusCode::ACCEPTED);
    id
}

fn confirm(id: u64, question: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "confirm", "arguments": {"question": question}}})
}

/// An SSE response read one event at a time.
struct Events(
    futures::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    String,
);

impl Events {
    fn of(response: reqwest::Response) -> Events {
        let kind = response.headers().get("content-type").cloned();
        let kind = kind.as_ref().and_then(|v| v.to_str().ok());
        assert_eq!(kind, Some("text/event-stream"), "a stream");
        Events(response.bytes_stream().boxed(), String::new())
    }

    /// The next event's JSON-RPC message (within [`LIMIT`]).
    async fn next(&mut self) -> Value {
        let read = tokio::time::timeout(LIMIT, async {
            loop {
                if let Some(end) = self.1.find("\n\n") {
                    let event: String = self.1.drain(..end + 2).collect();
                    let data = event.lines().find_map(|l| l.strip_prefix("data:"));
                    // The priming event (an id and no data) carries no message.
                    if let Some(data) = data.filter(|data| !data.trim().is_empty()) {
                        return serde_json::from_str(data.trim()).expect("JSON in an event");
                    }
                    continue;
                }
                let chunk = self.0.next().await.expect("more events").expect("bytes");
                self.1.push_str(&String::from_utf8_lossy(&chunk));
            }
        });
        read.await.expect("an event in time")
    }
}

fn accepted(id: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id,
        "result": {"action": "accept", "content": {"confirmed": true, "note": "yes"}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_rides_its_calls_response_and_only_its_hosts_answer_reaches_it() {
    let gateway = own().await;
    let raw = Raw::new(&gateway.url());
    let (a, b) = (session(&raw).await, session(&raw).await);
    let mut events = Events::of(raw.post(&confirm(2, "a?"), &raw.in_session(&a)).await);
    let question = events.next().await;
    assert_eq!(question["method"], "elicitation/create", "{question}");
    let asked = question["id"].clone();
    // Another session answering that id, and an answer past the body bound: neither counts.
    let elsewhere = raw.post(&accepted(&asked), &raw.in_session(&b)).await;
    assert_eq!(elsewhere.status(), StatusCode::ACCEPTED);
    let mut big = accepted(&asked);
    big["result"]["content"]["note"] = json!("x".repeat(8192));
    let refused = raw.post(&big, &raw.in_session(&a)).await;
    assert_eq!(refused.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let answered = raw.post(&accepted(&asked), &raw.in_session(&a)).await;
    assert_eq!(answered.status(), StatusCode::ACCEPTED);
    let result = events.next().await;
    assert_eq!(result["id"], 2, "{result}");
    let text = result["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.starts_with("confirmed: true (yes)"), "{result}");
    // A call that asks nothing carries its answer alone.
    let echo = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "plain"}}});
    let plain = messages(raw.post(&echo, &raw.in_session(&b)).await).await;
    assert_eq!(plain.len(), 1, "{plain:?}");
    assert_eq!(plain[0]["id"], 3, "{plain:?}");
    let status = gateway.stop().await;
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn questions_waiting_past_the_bound_fail_at_once_and_the_others_are_answered() {
    let gateway = own().await;
    let raw = Raw::new(&gateway.url());
    let a = session(&raw).await;
    let mut standalone = Events::of(raw.standalone(&a).await);
    // The first call's question rides its response; while the host has several calls on the
    // upstream, nobody can tell which a question is for: it goes on the standalone stream.
    let mut first = Events::of(raw.post(&confirm(10, "first?"), &raw.in_session(&a)).await);
    let question = first.next().await;
    assert_eq!(question["method"], "elicitation/create", "{question}");
    let mut asked = vec![question["id"].clone()];
    let post = |id: u64| {
        let (url, session) = (gateway.url(), a.clone());
        tokio::spawn(async move {
            let raw = Raw::new(&url);
            let response = raw.post(&confirm(id, "?"), &raw.in_session(&session)).await;
            let body = tokio::time::timeout(LIMIT, response.text()).await;
            body.expect("in time").expect("a body")
        })
    };
    let mut calls = Vec::new();
    for id in 11..10 + MAX_PENDING as u64 {
        calls.push(post(id));
        let question = standalone.next().await;
        assert_eq!(question["method"], "elicitation/create", "{question}");
        asked.push(question["id"].clone());
    }
    // One more: the upstream's question is refused at once, and its call says so.
    let over = post(99).await.expect("the call ends");
    assert!(over.contains("questions to answer already"), "{over}");
    for id in &asked {
        let answered = raw.post(&accepted(id), &raw.in_session(&a)).await;
        assert_eq!(answered.status(), StatusCode::ACCEPTED);
    }
    let result = first.next().await;
    assert_eq!(result["id"], 10, "{result}");
    for call in calls {
        let text = call.await.expect("the call ends");
        assert!(text.contains("confirmed: true"), "{text}");
    }
    let status = gateway.stop().await;
    assert!(status.success(), "{status}");
}
