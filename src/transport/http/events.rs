//! The events of one Streamable HTTP event stream (a `POST`'s answer or a `GET`), parsed as the
//! bytes arrive by the crate's bounded SSE parser ([`crate::transport::sse::Parser`]: one event
//! at most `limits.max_sse_event_bytes`, one line at most `limits.max_sse_line_bytes`, strict
//! UTF-8), with the last event id and `retry:` kept for a resumption.

use std::{borrow::Cow, collections::VecDeque};

use rmcp::{
    model::{GetExtensions, JsonRpcMessage, RequestId, ServerJsonRpcMessage},
    service::InboundStreamOrigin,
    transport::streamable_http_client::StreamableHttpError,
};

use super::{HttpError, core::Core, errors::redact_error};

use crate::{
    state::Death,
    transport::{
        Activity,
        sse::{Event, Parser, SseError},
    }};

/// Why a stream stopped before its clean end.
#[derive(Debug)]
pub(super) enum Broken {
    /// The body failed: the connection was reset or closed mid-body, or timed out.
    Http(reqwest::Error),
    /// The bytes broke the format or a bound.
    Sse(SseError),
}

impl Broken {
    /// What a broken stream means for the generation, if it ends it: a bound passed is a limit
    /// verdict, bytes that break the format a transport fault. A body that failed says no more
    /// than that this stream ended.
    pub(super) fn death(&self) -> Option<Death> {
        let Broken::Sse(error) = self else {
            return None;
        };
        let detail = format!("Streamable HTTP stream closed: {error}");
        Some(match error {
            SseError::InvalidUtf8 { .. } => Death::new(crate::state::Cause::TransportError, detail),
            SseError::LineTooLong { .. } | SseError::EventTooLarge { .. } => {
                crate::verdict::limit::exceeded(detail)
            }
        })
    }
}

impl Core {
    /// The error a request's answer stream broke with: a body that failed is the client's error
    /// (redacted); bytes that broke the format or a bound end the generation as well
    /// ([`Broken::death`]).
    pub(super) fn broken(&self, broken: Broken) -> HttpError {
        if let Broken::Http(e) = broken {
            return redact_error(StreamableHttpError::Client(e));
        }
        let death = broken.death();
        let detail = death.as_ref().map(|d| d.detail.clone()).unwrap_or_default();
        if let Some(death) = death {
            self.die(death);
        }
        StreamableHttpError::UnexpectedServerResponse(Cow::Owned(detail))
    }
}

/// One event stream being read.
pub(super) struct Events {
    response: reqwest::Response,
    parser: Parser,
    /// Events parsed from the last chunk and not yet taken (at most one chunk's worth).
    ready: VecDeque<Event>,
    /// What ends the stream once `ready` is drained.
    broken: Option<Broken>,
    ended: bool,
    /// Whether any event carried data (an answer, or anything that could be one).
    pub(super) carried: bool,
}

impl Events {
    pub(super) fn new(response: reqwest::Response, max_event: usize, max_line: usize) -> Self {
        Events {
            response,
            parser: Parser::new(max_event, max_line),
            ready: VecDeque::new(),
            broken: None,
            ended: false,
            carried: false,
        }
    }

    /// The next event: `Ok(None)` at the body's clean end. Every chunk is stamped on `activity`.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: it only awaits the body's next chunk, which is parsed in full before any
    /// other await; an event is either returned or stays queued.
    pub(super) async fn next(&mut self, activity: &Activity) -> Result<Option<Event>, Broken> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                self.carried |= !event.data.trim().is_empty();
                return Ok(Some(event));
            }
            if let Some(broken) = self.broken.take() {
                self.ended = true;
                return Err(broken);
            }
            if self.ended {
                return Ok(None);
            }
            self.broken = match self.response.chunk().await {
                Ok(Some(chunk)) => {
                    activity.bytes_arrived();
                    self.parser
                        .push(&chunk, &mut self.ready)
                        .err()
                        .map(Broken::Sse)
                }
                Ok(None) => {
                    self.ended = true;
                    self.parser.finish().err().map(Broken::Sse)
                }
                Err(e) => Some(Broken::Http(e)),
            };
        }
    }

    /// The last event id the stream set, for `Last-Event-ID`.
    pub(super) fn last_id(&self) -> Option<&str> {
        self.parser.last_id()
    }

    /// The reconnection time the stream asked for (`retry:`), in milliseconds.
    pub(super) fn retry(&self) -> Option<u64> {
        self.parser.retry()
    }

    /// Continues with `response`, the resumption of this stream: the last event id and
    /// `retry:` carry over until the new stream sets its own.
    pub(super) fn resume(
        &mut self,
        response: reqwest::Response,
        max_event: usize,
        max_line: usize,
    ) {
        let (id, retry) = (self.last_id().map(str::to_owned), self.retry());
        *self = Events {
            carried: self.carried,
            ..Events::new(response, max_event, max_line)
        };
        self.parser.carry(id, retry);
    }
}

/// Whether `message` is the response to request `id` (rmcp's rule: the same id, or the number
/// as a string).
pub(super) fn answers(message: &ServerJsonRpcMessage, id: &RequestId) -> bool {
    let answered = match message {
        JsonRpcMessage::Response(response) => &response.id,
        JsonRpcMessage::Error(error) => match &error.id {
            Some(answered) => answered,
            None => return false,
        },
        _ => return false,
    };
    answered == id
        || matches!((id, answered), (RequestId::Number(n), RequestId::String(s)) if s.parse::<i64>() == Ok(*n))
}

/// A message that arrived on request `id`'s stream and is not its answer: a request of the
/// server's is marked as made on behalf of `id` (SEP-2260); a response to another request
/// never belongs on this stream and is dropped.
pub(super) fn on_stream_of(
    mut message: ServerJsonRpcMessage,
    id: &RequestId,
) -> Option<ServerJsonRpcMessage> {
    match &mut message {
        JsonRpcMessage::Request(request) => {
            let origin = InboundStreamOrigin::OutboundRequest(id.clone());
            request.request.extensions_mut().insert(origin);
        }
        JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => {
            tracing::debug!(request = %id, "dropped a response to another request from a POST's stream");
            return None;
        }
        _ => {}
    }
    Some(message)
}
