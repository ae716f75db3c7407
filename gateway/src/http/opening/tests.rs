use std::task::{Context, Poll};

use axum::{
    body::Body,
    http::{StatusCode, header},
    response::{IntoResponse, Response},
};
use bytes::Bytes;
use futures::{FutureExt, StreamExt};
use rmcp::model::NumberOrString;

use super::{
    Known, Opening, Openings, Tag,
    body::events,
    first_event, paced,
    stage::{Release, Stage},
};

fn stage(opening: &Opening) -> Stage {
    *opening.stage.borrow()
}

#[tokio::test]
async fn the_opening_is_out_only_when_the_body_is_asked_again_after_the_connection_could_flush() {
    let opening = Opening::new();
    let chunks = futures::stream::iter([
        Ok(Bytes::from_static(b"first")),
        Ok(Bytes::from_static(b"second")),
    ]);
    let mut body = paced(chunks.boxed(), Release(opening.clone()), None);
    let waker = futures::task::noop_waker();
    let mut cx = Context::from_waker(&waker);
    let first = body.poll_next_unpin(&mut cx);
    assert!(
        matches!(&first, Poll::Ready(Some(Ok(b))) if b == "first"),
        "{first:?}"
    );
    assert_ne!(
        stage(&opening),
        Stage::Out,
        "handed over is not written yet"
    );
    // Not ready once: hyper flushes what it holds, then asks again.
    assert!(body.poll_next_unpin(&mut cx).is_pending());
    assert_ne!(stage(&opening), Stage::Out);
    let second = body.poll_next_unpin(&mut cx);
    assert!(
        matches!(&second, Poll::Ready(Some(Ok(b))) if b == "second"),
        "{second:?}"
    );
    assert_eq!(stage(&opening), Stage::Out);
}

#[tokio::test]
async fn a_call_waiting_on_an_opening_whose_host_is_gone_goes_on_at_once() {
    let opening = Opening::new();
    let body = paced(
        futures::stream::pending().boxed(),
        Release(opening.clone()),
        None,
    );
    drop(body);
    assert_eq!(stage(&opening), Stage::Out);
    assert!(opening.open().now_or_never().is_some(), "open waited");
}

#[test]
fn a_session_taken_over_opens_every_request_waiting_on_it_and_a_finished_one_leaves_no_trace() {
    let openings = std::sync::Arc::new(Openings::default());
    let (one, two, other) = (Opening::new(), Opening::new(), Opening::new());
    let registered = [
        openings.register("s".into(), &one),
        openings.register("s".into(), &two),
        openings.register("t".into(), &other),
    ];
    openings.taken_over("s");
    assert_eq!(stage(&one), Stage::Asked);
    assert_eq!(stage(&two), Stage::Asked);
    assert_eq!(stage(&other), Stage::Waiting, "another session's request");
    drop(registered);
    assert!(openings.lock().is_empty());
}

#[test]
fn a_2025_request_opens_with_a_priming_event_answerable_as_lost_and_a_2026_one_with_a_comment() {
    let known = |session: Option<&str>| Known {
        openings: Default::default(),
        max_body: 1024,
        session: session.map(Into::into),
        stateless: session.is_none(),
    };
    let first = first_event(&known(Some("s")), "tools/call", &NumberOrString::Number(41))
        .expect("a first event");
    let text = std::str::from_utf8(&first).expect("text");
    assert!(text.ends_with("\n\n"), "{text:?}");
    assert!(text.contains("\nretry: 1000\n"), "{text:?}");
    let id = text
        .lines()
        .find_map(|line| line.strip_prefix("id: "))
        .expect("an id");
    let (rmcp, tag) = Tag::split(id);
    assert_eq!(
        rmcp, "early",
        "never an id rmcp could take for another stream's"
    );
    let tag = tag.expect("tagged");
    assert!(tag.here());
    let answer = serde_json::to_string(&tag.answer().message).expect("json");
    assert!(
        answer.contains("may have run") && answer.contains("41"),
        "{answer}"
    );
    // An id that cannot be carried gets no early event (and keeps rmcp's path).
    let long = NumberOrString::String("x".repeat(200).into());
    assert_eq!(first_event(&known(Some("s")), "tools/call", &long), None);
    let modern = first_event(&known(None), "tools/call", &NumberOrString::Number(1));
    assert_eq!(modern.as_deref(), Some(&b": opened\n\n"[..]));
}

async fn one_event(response: Response) -> serde_json::Value {
    let chunks: Vec<_> = events(response, NumberOrString::Number(41))
        .await
        .collect()
        .await;
    assert_eq!(chunks.len(), 1, "{chunks:?}");
    let chunk = chunks[0].as_ref().expect("a chunk");
    let text = std::str::from_utf8(chunk).expect("text");
    let data = text
        .strip_prefix("data: ")
        .and_then(|t| t.strip_suffix("\n\n"))
        .unwrap_or_else(|| panic!("one data event: {text:?}"));
    serde_json::from_str(data).expect("a JSON-RPC message")
}

#[tokio::test]
async fn an_answer_that_is_not_a_stream_reaches_the_open_stream_as_one_event_with_the_request_id() {
    let text = Response::builder()
        .status(StatusCode::INTERNAL_SERVER_ERROR)
        .body(Body::from("Internal Server Error: restore session"))
        .expect("a response");
    let message = one_event(text).await;
    assert_eq!(message["id"], 41);
    let said = message["error"]["message"].as_str().unwrap_or_default();
    assert!(
        said.contains("HTTP 500") && said.contains("restore session"),
        "{said}"
    );

    let json = (
        StatusCode::BAD_REQUEST,
        [(header::CONTENT_TYPE, "application/json")],
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad header"}}"#,
    )
        .into_response();
    let message = one_event(json).await;
    assert_eq!(message["id"], 41);
    assert_eq!(message["error"]["code"], -32600);

    let stream = (
        [(header::CONTENT_TYPE, "text/event-stream")],
        "id: 0/1\ndata:\n\n",
    )
        .into_response();
    let chunks: Vec<_> = events(stream, NumberOrString::Number(41))
        .await
        .collect()
        .await;
    let all: Vec<u8> = chunks
        .into_iter()
        .flat_map(|c| c.expect("a chunk").to_vec())
        .collect();
    assert_eq!(all, b"id: 0/1\ndata:\n\n", "a stream passes as it is");
}
