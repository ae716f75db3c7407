//! A POST's response stream carries that request's answer (and requests or notifications about
//! it), never the answer to another request. A response to another id on it is dropped here.
//!
//! Why here and not only in [`Observed`](crate::transport::Observed), which drops responses
//! nobody waits for: rmcp reads the stream of the session's first request (`initialize`, or
//! `server/discover`) itself and takes its *first* response as the answer — a stray one first
//! would fail the handshake, or, dropped later, leave it waiting for an answer rmcp already
//! threw away.

use futures::{StreamExt, future::ready};
use rmcp::model::{NumberOrString, RequestId};
use serde::{Deserialize, de::IgnoredAny};

use rmcp::transport::common::client_side_sse::BoxedSseResponse as SseStream;

/// Just enough of a message to tell a response and its id, read without building the rest.
#[derive(Deserialize)]
struct Head {
    id: Option<RequestId>,
    result: Option<IgnoredAny>,
    error: Option<IgnoredAny>,
}

/// `stream` without the responses whose id is not `request`'s.
pub(super) fn only_own_answers(stream: SseStream, request: RequestId) -> SseStream {
    stream
        .filter(move |event| {
            let Ok(event) = event else {
                return ready(true);
            };
            let other = event
                .data
                .as_deref()
                .and_then(|data| serde_json::from_str::<Head>(data).ok())
                .filter(|head| head.result.is_some() || head.error.is_some())
                .and_then(|head| head.id)
                .is_some_and(|id| !same(&request, &id));
            if other {
                tracing::debug!(%request, "dropped a response to another request from a POST's stream");
            }
            ready(!other)
        })
        .boxed()
}

/// The ids match as rmcp matches them: equal, or a number answered as its decimal string.
fn same(sent: &RequestId, answered: &RequestId) -> bool {
    sent == answered
        || matches!((sent, answered), (NumberOrString::Number(n), NumberOrString::String(s)) if s.parse::<i64>() == Ok(*n))
}
