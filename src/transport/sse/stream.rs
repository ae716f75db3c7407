//! The byte stream of a legacy SSE session: bounded framing, the `endpoint` event, and the
//! reader task that feeds the transport's channel (see the parent module's invariants).

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures::{StreamExt, stream::BoxStream};
use rmcp::model::ServerJsonRpcMessage;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use url::Url;

use crate::{
    state::{Cause, Death},
    transport::DeathSlot,
};

/// The parsed events of one stream.
pub(super) type Events = BoxStream<'static, Result<Event, EventStreamError<ReadError>>>;

/// Why the byte stream stopped being read.
#[derive(Debug, thiserror::Error)]
pub(super) enum ReadError {
    #[error("{0}")]
    Http(reqwest::Error),
    #[error("an SSE event exceeded max_event_bytes ({0} bytes)")]
    TooLarge(usize),
}

/// The events of `response`, bounded to `max` bytes each (invariant 2).
pub(super) fn events(response: reqwest::Response, max: usize) -> Events {
    let mut framer = Framer::new(max);
    response
        .bytes_stream()
        .map(move |chunk| framer.push(&chunk.map_err(ReadError::Http)?))
        .eventsource()
        .boxed()
}

/// Reads until the `endpoint` event and resolves it against `base` (invariant 1).
pub(super) async fn endpoint(events: &mut Events, base: &Url) -> Result<Url, String> {
    loop {
        let event = match events.next().await {
            Some(Ok(event)) => event,
            Some(Err(e)) => {
                return Err(format!("SSE stream failed before `endpoint`: {e}"));
            }
            None => return Err("SSE stream ended before `endpoint`".to_owned()),
        };
        if event.event != "endpoint" {
            tracing::warn!(event = %event.event, "legacy SSE: event before `endpoint` ignored");
            continue;
        }
        let endpoint = base.join(event.data.trim()).map_err(|e| {
            let data = crate::text::redact(&event.data);
            format!("invalid endpoint `{data}`: {e}")
        })?;
        if endpoint.origin() != base.origin() {
            return Err(format!(
                "refused endpoint `{}`: not on the SSE URL's origin {}",
                crate::text::redact_url(&endpoint),
                base.origin().ascii_serialization()
            ));
        }
        return Ok(endpoint);
    }
}

/// The reader task: forwards `message` events until the stream ends, fails, or `stop`.
pub(super) async fn read(
    mut events: Events,
    tx: mpsc::Sender<Box<ServerJsonRpcMessage>>,
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
            Some(Err(EventStreamError::Transport(ReadError::TooLarge(max)))) => {
                let detail = format!(
                    "legacy SSE stream closed: an event exceeded max_event_bytes ({max} bytes)"
                );
                break Death::new(Cause::TransportError, detail);
            }
            Some(Err(EventStreamError::Transport(ReadError::Http(e)))) => {
                let why = crate::transport::innermost(&e);
                break Death::new(
                    Cause::StreamClosed,
                    format!("legacy SSE stream broke: {why}"),
                );
            }
            Some(Err(e)) => {
                break Death::new(
                    Cause::StreamClosed,
                    format!("legacy SSE stream failed: {e}"),
                );
            }
            None => break Death::new(Cause::StreamClosed, "legacy SSE stream ended"),
        };
        if !matches!(event.event.as_str(), "" | "message") {
            continue;
        }
        let message = match serde_json::from_str::<ServerJsonRpcMessage>(&event.data) {
            Ok(message) => message,
            Err(e) => {
                tracing::warn!("legacy SSE: unparsable message skipped: {e}");
                continue;
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

/// Cuts the byte stream after its last line end (the parser then never rescans a partial
/// line) and counts the bytes of the current event.
struct Framer {
    max: usize,
    /// Bytes since the last blank line (line ends excluded).
    event: usize,
    line: usize,
    after_cr: bool,
    /// The incomplete last line (at most `max` bytes).
    tail: Vec<u8>,
}

impl Framer {
    fn new(max: usize) -> Self {
        Framer {
            max,
            event: 0,
            line: 0,
            after_cr: false,
            tail: Vec::new(),
        }
    }

    /// The complete lines now available.
    fn push(&mut self, chunk: &[u8]) -> Result<Vec<u8>, ReadError> {
        for &byte in chunk {
            let crlf = self.after_cr && byte == b'\n';
            self.after_cr = byte == b'\r';
            if crlf {
                continue;
            }
            if matches!(byte, b'\n' | b'\r') {
                if self.line == 0 {
                    self.event = 0;
                }
                self.line = 0;
            } else {
                self.line += 1;
                self.event += 1;
                if self.event > self.max {
                    return Err(ReadError::TooLarge(self.max));
                }
            }
        }
        self.tail.extend_from_slice(chunk);
        match self.tail.iter().rposition(|b| matches!(b, b'\n' | b'\r')) {
            Some(end) => {
                let rest = self.tail.split_off(end + 1);
                Ok(std::mem::replace(&mut self.tail, rest))
            }
            None => Ok(Vec::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parser_only_gets_complete_lines() {
        let mut framer = Framer::new(1024);
        assert_eq!(
            framer.push(b"event: message\ndata: {\"a\"").unwrap(),
            b"event: message\n"
        );
        assert_eq!(
            framer.push(b":1}\r\n\r\n").unwrap(),
            b"data: {\"a\":1}\r\n\r\n"
        );
        assert!(framer.push(b"data: x").unwrap().is_empty());
    }

    #[test]
    fn one_event_is_bounded_across_its_lines_and_a_blank_line_resets_the_count() {
        let mut framer = Framer::new(16);
        assert!(framer.push(b"data: 0123456\n\n").is_ok());
        assert!(framer.push(b"data: 0123456\r\n\r\ndata: 0123456\n").is_ok());
        assert!(matches!(
            framer.push(b"data: 0"),
            Err(ReadError::TooLarge(16))
        ));
    }
}
