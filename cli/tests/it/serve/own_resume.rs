//! Resumption on the own front (`--front own`): a request's stream cut mid-call is asked for
//! again with `Last-Event-ID` and brings the rest (the call went on meanwhile); an id of another
//! session, another process, or garbled brings no other stream's events.

use futures::StreamExt;
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{
    gateway::{FAST, Gateway},
    raw::{Raw, messages},
};
use crate::common::{LIMIT, mock_binary};

async fn own() -> Gateway {
    let mut args: Vec<&str> = FAST.to_vec();
    args.extend(["--front", "own", "--name", "mock", "--stdio", "--"]);
    args.extend([mock_binary(), "mock-server", "--transport", "stdio"]);
    Gateway::start(&args).await
}

fn progress(id: u64, steps: u64, ms: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "progress", "arguments": {"steps": steps, "ms": ms},
                   "_meta": {"progressToken": format!("p-{id}")}}})
}

/// Reads `response`'s events until the first that carries a message; its id and message.
async fn first_message(response: reqwest::Response) -> (String, Value) {
    let mut body = response.bytes_stream();
    let mut seen = String::new();
    let read = async {
        loop {
            if let Some(end) = seen.find("\n\n") {
                let event: String = seen.drain(..end + 2).collect();
                let field = |name: &str| {
                    let found = event.lines().find_map(|l| l.strip_prefix(name));
                    found.map(|v| v.trim().to_owned())
                };
                if let (Some(id), Some(data)) = (field("id:"), field("data:"))
                    && !data.is_empty()
                {
                    return (id, serde_json::from_str(&data).expect("JSON in an event"));
                }
                continue;
            }
            let chunk = body.next().await.expect("more events").expect("bytes");
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
    };
    tokio::time::timeout(LIMIT, read)
        .await
        .expect("an event in time")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_mid_call_is_resumed_after_the_last_event_seen_and_the_call_went_on() {
    let gateway = own().await;
    let raw = Raw::new(&gateway.url());
    let id = raw.session().await;
    let response = raw.post(&progress(2, 4, 100), &raw.in_session(&id)).await;
    let (last, first) = first_message(response).await;
    assert_eq!(first["method"], "notifications/progress", "{first}");
    // The response was dropped: the host's connection is gone, the call is not.
    let resumed = raw.resume(&id, &last).await;
    assert_eq!(resumed.status(), StatusCode::OK);
    let rest = messages(resumed).await;
    let told: Vec<&Value> = (rest.iter())
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert_eq!(
        told.len(),
        3,
        "the progress after the last seen, once: {rest:?}"
    );
    assert!(!told.contains(&&first), "the event seen is not sent again");
    let answer = rest.last().expect("the answer");
    assert_eq!(answer["id"], 2, "the answer comes last: {rest:?}");
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    // Asked for again once it has ended: the same rest, and the stream ends.
    assert_eq!(messages(raw.resume(&id, &last).await).await, rest);
    let status = gateway.stop().await;
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_id_of_another_session_process_or_none_brings_no_other_streams_events() {
    let gateway = own().await;
    let raw = Raw::new(&gateway.url());
    let (a, b) = (raw.session().await, raw.session().await);
    let response = raw.post(&progress(5, 2, 1), &raw.in_session(&b)).await;
    let (b_id, _) = first_message(response).await;
    let (local, tag) = b_id.split_once('~').expect("a tagged id");
    // B's id in A: not A's stream; the request it names is answered as lost, nothing of B's.
    let in_a = messages(raw.resume(&a, &b_id).await).await;
    assert_eq!(in_a.len(), 1, "{in_a:?}");
    assert_eq!(in_a[0]["id"], 5);
    assert_eq!(in_a[0]["result"]["isError"], true, "{in_a:?}");
    // Another process's request (a replica gone, or this gateway before a restart): lost.
    let foreign = format!("{local}~0123456789abcdefcn9");
    let lost = messages(raw.resume(&b, &foreign).await).await;
    assert_eq!(lost.len(), 1, "{lost:?}");
    assert_eq!(lost[0]["id"], 9);
    let text = lost[0]["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("may have run"), "{text}");
    // A stream of B's no longer kept (or never made): its request answered as lost too.
    let unknown = messages(raw.resume(&b, &format!("999999.0~{tag}")).await).await;
    assert_eq!(unknown.len(), 1, "{unknown:?}");
    assert_eq!(unknown[0]["result"]["isError"], true, "{unknown:?}");
    // Garbled, rmcp's untagged ids, no request named: 200 and an empty stream that ends.
    for garbled in ["garbage", "3/4", "1.2", "1.2~", "x.y~zz", &"9".repeat(300)] {
        let answered = raw.resume(&b, garbled).await;
        assert_eq!(answered.status(), StatusCode::OK, "{garbled}");
        assert_eq!(messages(answered).await, Vec::<Value>::new(), "{garbled}");
    }
    let status = gateway.stop().await;
    assert!(status.success(), "{status}");
}

/// The first whole event of `response`'s stream (its lines), and the rest of the stream.
async fn first_event(
    response: reqwest::Response,
) -> (
    String,
    futures::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
) {
    let mut body = response.bytes_stream().boxed();
    let mut seen = String::new();
    let read = async {
        loop {
            if let Some(end) = seen.find("\n\n") {
                return seen[..end].to_owned();
            }
            let chunk = body.next().await.expect("an event").expect("bytes");
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
    };
    let event = tokio::time::timeout(LIMIT, read)
        .await
        .expect("an event in time");
    (event, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_not_answered_within_the_grace_gets_a_stream_primed_first_and_its_answer_after_a_resumption()
 {
    let gateway = own().await;
    let raw = Raw::new(&gateway.url());
    let id = raw.session().await;
    // `sleep` for ten minutes: it ends here only when its host cancels it (the release).
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "sleep", "arguments": {"ms": 600_000}}});
    let response = raw.post(&call, &raw.in_session(&id)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let kind = response.headers().get("content-type").cloned();
    assert_eq!(
        kind.as_ref().and_then(|v| v.to_str().ok()),
        Some("text/event-stream")
    );
    // The priming event first: an id tagged with the call, the host's wait, empty data.
    let (primed, body) = first_event(response).await;
    let field = |name: &str| {
        let found = primed.lines().find_map(|line| line.strip_prefix(name));
        found.map(|value| value.trim().to_owned())
    };
    let last = field("id:").unwrap_or_else(|| panic!("an event id: {primed}"));
    assert!(last.contains('~'), "a tagged id: {last}");
    assert_eq!(field("retry:").as_deref(), Some("1000"), "{primed}");
    assert_eq!(field("data:").as_deref(), Some(""), "{primed}");
    // The host's stream breaks; it asks for the rest, then releases the call.
    drop(body);
    let resumed = raw.resume(&id, &last).await;
    assert_eq!(resumed.status(), StatusCode::OK);
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 2, "reason": "released by the test"}});
    let sent = raw.post(&cancel, &raw.in_session(&id)).await;
    assert_eq!(sent.status(), StatusCode::ACCEPTED);
    let rest = messages(resumed).await;
    assert_eq!(rest.len(), 1, "the answer alone, once: {rest:?}");
    assert_eq!(rest[0]["id"], 2, "{rest:?}");
    let status = gateway.stop().await;
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_streaming_when_its_host_deletes_the_session_ends_with_it_upstream_too() {
    let gateway = own().await;
    let raw = Raw::new(&gateway.url());
    let (id, other) = (raw.session().await, raw.session().await);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "sleep", "arguments": {"ms": 600_000}}});
    let response = raw.post(&call, &raw.in_session(&id)).await;
    let (_, mut body) = first_event(response).await;
    assert_eq!(raw.delete(&id).await.status(), StatusCode::NO_CONTENT);
    // The call's stream ends, with no answer: the host ended the session itself.
    let rest = async {
        let mut seen = String::new();
        while let Some(chunk) = body.next().await {
            seen.push_str(&String::from_utf8_lossy(&chunk.expect("bytes")));
        }
        seen
    };
    let rest = tokio::time::timeout(LIMIT, rest)
        .await
        .expect("the stream ends in time");
    assert!(!rest.contains("\"id\":2"), "{rest}");
    // The upstream's call was cancelled (the mock counts it; asked through another session).
    let whoami = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "whoami", "arguments": {}}});
    let cancelled = async {
        loop {
            let reply = super::raw::answer(raw.post(&whoami, &raw.in_session(&other)).await, 3);
            let who = reply.await["result"]["structuredContent"].clone();
            if who["cancelled"] == 1 {
                return;
            }
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(LIMIT, cancelled)
        .await
        .expect("the upstream's call cancelled in time");
    let status = gateway.stop().await;
    assert!(status.success(), "{status}");
}
