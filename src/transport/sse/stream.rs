//! The byte stream of a legacy SSE session: its events (through [`Parser`]), the `endpoint`
//! event, and the reader task that feeds the transport's channel (see the parent module's
//! invariants).

use std::{collections::VecDeque, sync::Arc};

use bytes::Bytes;
use futures::{StreamExt, stream::BoxStream};
use rmcp::model::ServerJsonRpcMessage;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use url::Url;

use super::{
    parse::{Event, Parser, SseError},
    probe::Waiting,
};
use crate::{
    state::{Cause, Death},
    transport::{Activity, DeathSlot, decode, ledger::Ledger},
};

/// Why the stream stopped being read.
#[derive(Debug)]
pub(super) enum ReadError {
    /// The body failed.
    Http(reqwest::Error),
    /// The bytes broke the format or a bound.
    Sse(SseError),
}

/// The parsed events of one stream.
pub(super) struct Events {
    body: BoxStream<'static, reqwest::Result<Bytes>>,
    parser: Parser,
    /// Events parsed from the last chunk and not yet taken (at most one chunk's worth).
    ready: VecDeque<Event>,
    /// What ends the stream once `ready` is drained.
    failed: Option<ReadError>,
    ended: bool,
    /// Stamped with every chunk: bytes that are not yet (or never) a message, such as comments.
    activity: Arc<Activity>,
}

/// The events of `response`, bounded to `max_event` bytes each and lines to `max_line`; every
/// chunk that arrives is stamped on `activity`.
pub(super) fn events(
    response: reqwest::Response,
    max_event: usize,
    max_line: usize,
    activity: Arc<Activity>,
) -> Events {
    Events {
        activity,
        body: response.bytes_stream().boxed(),
        parser: Parser::new(max_event, max_line),
        ready: VecDeque::new(),
        failed: None,
        ended: false,
    }
}

impl Events {
    /// The next event; `None` once the body has ended cleanly.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: it only awaits the body's next chunk, which is parsed in full before any
    /// other await; an event is either returned or stays queued.
    pub(super) async fn next(&mut self) -> Option<Result<Event, ReadError>> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Some(Ok(event));
            }
            if let Some(failed) = self.failed.take() {
                self.ended = true;
                return Some(Err(failed));
            }
            if self.ended {
                return None;
            }
            self.failed = match self.body.next().await {
                Some(Ok(chunk)) => {
                    self.activity.bytes_arrived();
                    self.parser
                        .push(&chunk, &mut self.ready)
                        .err()
                        .map(ReadError::Sse)
                }
                Some(Err(e)) => Some(ReadError::Http(e)),
                None => {
                    self.ended = true;
                    self.parser.finish().err().map(ReadError::Sse)
                }
            };
        }
    }
}

/// Reads until the `endpoint` event and resolves it against `base` (invariant 1).
pub(super) async fn endpoint(events: &mut Events, base: &Url) -> Result<Url, String> {
    loop {
        let event = match events.next().await {
            Some(Ok(event)) => event,
            Some(Err(ReadError::Http(e))) => {
                let why = crate::transport::innermost(&e);
                return Err(format!("SSE stream failed before `endpoint`: {why}"));
            }
            Some(Err(ReadError::Sse(e))) => {
                return Err(format!("SSE stream closed before `endpoint`: {e}"));
            }
            None => return Err("SSE stream ended before `endpoint`".to_owned()),
        };
        if event.event != "endpoint" {
            tracing::warn!(event = %event.event, "legacy SSE: event before `endpoint` ignored");
            continue;
        }
        return resolve_endpoint(&event.data, base);
    }
}

/// The URL an `endpoint` event's data names, resolved against the SSE URL `base`; one on
/// another origin is refused (invariant 1).
#[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
pub fn resolve_endpoint(data: &str, base: &Url) -> Result<Url, String> {
    let endpoint = base.join(data.trim()).map_err(|e| {
        let data = crate::text::redact(data);
        format!("invalid endpoint `{data}`: {e}")
    })?;
    if endpoint.origin() != base.origin() {
        return Err(format!(
            "refused endpoint `{}`: not on the SSE URL's origin {}",
            crate::text::redact_url(&endpoint),
            base.origin().ascii_serialization()
        ));
    }
    Ok(endpoint)
}

/// The reader task: forwards `message` events until the stream ends, fails, or `stop`; an
/// answer to a waiting direct probe goes to that probe instead (see [`super::probe`]).
pub(super) async fn read(
    mut events: Events,
    tx: mpsc::Sender<Box<ServerJsonRpcMessage>>,
    probes: Arc<Waiting>,
    activity: Arc<Activity>,
    slot: DeathSlot,
    stop: CancellationToken,
) {
    let death = loop {
        let event = tokio::select! {
            event = events.next() => event,
            () = stop.cancelled() => return,
        };
        let event = match event {
            Some(Ok(event)) => event,
            Some(Err(ReadError::Sse(e))) => {
                let detail = format!("legacy SSE stream closed: {e}");
                // A bound passed is a limit verdict; bytes that break the format are a
                // transport fault.
                break match e {
                    SseError::InvalidUtf8 { .. } => Death::new(Cause::TransportError, detail),
                    SseError::LineTooLong { .. } | SseError::EventTooLarge { .. } => {
                        crate::verdict::limit::exceeded(detail)
                    }
                };
            }
            Some(Err(ReadError::Http(e))) => {
                let why = crate::transport::innermost(&e);
                let detail = format!("legacy SSE stream broke: {why}");
                break Death::new(Cause::StreamClosed, detail);
            }
            None => break Death::new(Cause::StreamClosed, "legacy SSE stream ended"),
        };
        if event.event != "message" || probes.take(&event.data) {
            continue;
        }
        let message = match decode(&event.data, &activity.ledger) {
            Ok(Some(message)) => message,
            Ok(None) => continue,
            Err(why) => {
                let detail = format!("legacy SSE stream closed: {why}");
                break Death::new(Cause::TransportError, detail);
            }
        };
        // A full channel must not keep `close()` waiting: stopping wins over sending.
        tokio::select! {
            sent = tx.send(Box::new(message)) => if sent.is_err() { return },
            () = stop.cancelled() => return,
        }
    };
    let _ = slot.set(death);
}

/// The JSON-RPC message of a `message` event. Blank data is skipped, as rmcp's Streamable
/// HTTP client does. Bytes that are not JSON, or JSON that is not a JSON-RPC message, break the
/// protocol: the stream ends (a lost response would otherwise leave its request waiting out
/// its timeout). One exception, as in rmcp's stdio transport: a notification (no `id`) that
/// does not decode is skipped, since nothing waits for it.
///
/// An answer to a request whose method `ledger` remembers is read as that method's result
/// ([`decode::message_for`]); what it means is what rmcp would make of it.
pub(in crate::transport) fn decode(
    data: &str,
    ledger: &Ledger,
) -> Result<Option<ServerJsonRpcMessage>, String> {
    if data.trim().is_empty() {
        return Ok(None);
    }
    let error = match decode::message_for(data.as_bytes(), |id| ledger.method(id)) {
        Ok(message) => return Ok(Some(message)),
        Err(e) => e,
    };
    if !matches!(error.classify(), serde_json::error::Category::Data) {
        return Err(format!("a `message` event is not JSON: {error}"));
    }
    let value = serde_json::from_str::<serde_json::Value>(data).unwrap_or_default();
    let notification = value.get("jsonrpc").is_some_and(|v| v == "2.0")
        && value
            .get("method")
            .is_some_and(serde_json::Value::is_string)
        && value.get("id").is_none();
    if notification {
        tracing::warn!("legacy SSE: a notification that does not decode was skipped: {error}");
        return Ok(None);
    }
    Err(format!(
        "a `message` event is not a JSON-RPC message: {error}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_that_breaks_the_protocol_is_an_error_and_a_strange_notification_is_not() {
        let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        assert!(matches!(decode(ping, &Ledger::default()), Ok(Some(_))));
        assert!(matches!(decode(" \n ", &Ledger::default()), Ok(None)));
        let odd = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":7}"#;
        assert!(matches!(decode(odd, &Ledger::default()), Ok(None)));
        for (data, why) in [
            (r#"{"jsonrpc":"2.0","#, "is not JSON"),
            ("hello", "is not JSON"),
            ("{}", "is not a JSON-RPC message"),
            ("[1, 2]", "is not a JSON-RPC message"),
            (r#"{"jsonrpc":"2.0","id":1}"#, "is not a JSON-RPC message"),
        ] {
            let error = decode(data, &Ledger::default()).expect_err(data);
            assert!(error.contains(why), "{data}: {error}");
        }
    }

    #[test]
    fn an_answer_to_a_remembered_call_reads_as_rmcp_reads_it() {
        let ledger = Ledger::default();
        let id = rmcp::model::RequestId::Number(7);
        ledger.handed(&id, "tools/call");
        let text = r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}],"isError":false}}"#;
        let ours = decode(text, &ledger).unwrap().unwrap();
        let theirs: ServerJsonRpcMessage = serde_json::from_str(text).unwrap();
        assert_eq!(
            serde_json::to_value(&ours).unwrap(),
            serde_json::to_value(&theirs).unwrap()
        );
        match ours {
            rmcp::model::JsonRpcMessage::Response(r) => {
                assert!(matches!(
                    r.result,
                    rmcp::model::ServerResult::CallToolResult(_)
                ));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_endpoint_resolves_on_the_sse_origin_only() {
        let base = Url::parse("http://127.0.0.1:8000/sse").unwrap();
        let same = resolve_endpoint(" /message?sessionId=1\n", &base).unwrap();
        assert_eq!(same.as_str(), "http://127.0.0.1:8000/message?sessionId=1");
        for other in [
            "http://127.0.0.1:8001/m",
            "https://127.0.0.1:8000/m",
            "//evil/m",
        ] {
            let error = resolve_endpoint(other, &base).unwrap_err();
            assert!(
                error.contains("not on the SSE URL's origin"),
                "{other}: {error}"
            );
        }
    }
}
