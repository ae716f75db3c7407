//! The body of a response opened early: rmcp's answer as events of the stream already open, and
//! the pacing that marks a request's opening out once its first chunk was written.

use std::{
    pin::Pin,
    task::{Context, Poll, ready},
};

use axum::{
    http::{StatusCode, header},
    response::Response,
};
use bytes::Bytes;
use futures::{Stream, StreamExt};
use rmcp::model::NumberOrString;

/// The most of a non-stream answer read to pass it on as one event.
const ANSWER_LIMIT: usize = 4 << 20;

/// A body's bytes, as axum streams them.
pub(in crate::http) type Chunks = futures::stream::BoxStream<'static, Result<Bytes, axum::Error>>;

/// rmcp's answer as events of a stream already open (invariant 2).
pub(super) async fn events(response: Response, id: NumberOrString) -> Chunks {
    let stream = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let status = response.status();
    if stream && status == StatusCode::OK {
        return response.into_body().into_data_stream().boxed();
    }
    let text = axum::body::to_bytes(response.into_body(), ANSWER_LIMIT)
        .await
        .unwrap_or_default();
    let message = match serde_json::from_slice::<serde_json::Value>(&text) {
        Ok(mut message) if message.get("jsonrpc").is_some() => {
            if message.get("id").is_none_or(serde_json::Value::is_null) {
                message["id"] = serde_json::json!(id);
            }
            message
        }
        _ => serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {
                "code": -32603,
                "message": format!(
                    "the gateway answered this request with HTTP {status}: {}",
                    String::from_utf8_lossy(&text).trim()
                ),
            },
        }),
    };
    let event = Bytes::from(format!("data: {message}\n\n"));
    futures::stream::once(async move { Ok(event) }).boxed()
}

/// Where a body is in its opening.
enum Step {
    /// Its first chunk is not handed over yet.
    First,
    /// Handed over: the connection writes it out before the body is asked again.
    Flush,
    /// Out: the rest as it comes.
    Rest,
}

/// A response body that marks its opening out once its first chunk was written (invariant 1).
pub(in crate::http) struct Paced {
    chunks: Chunks,
    step: Step,
    /// Marks the opening out; called once, when the first chunk was written.
    out: Option<Box<dyn FnOnce() + Send>>,
    /// What lives as long as the body: the opening's guards, whose drop gives it back.
    _held: Box<dyn Send>,
}

impl Paced {
    pub(in crate::http) fn new(
        chunks: Chunks,
        out: impl FnOnce() + Send + 'static,
        held: impl Send + 'static,
    ) -> Self {
        Self {
            chunks,
            step: Step::First,
            out: Some(Box::new(out)),
            _held: Box::new(held),
        }
    }
}

impl Stream for Paced {
    type Item = Result<Bytes, axum::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        match this.step {
            Step::First => {
                let chunk = ready!(this.chunks.poll_next_unpin(cx));
                this.step = Step::Flush;
                Poll::Ready(chunk)
            }
            Step::Flush => {
                // hyper flushes what it holds when the body is not ready, then asks again: the
                // next poll comes after the head and the first chunk were written.
                this.step = Step::Rest;
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Step::Rest => {
                if let Some(out) = this.out.take() {
                    out();
                }
                this.chunks.poll_next_unpin(cx)
            }
        }
    }
}
