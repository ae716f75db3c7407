//! One queued message, in the form its front writes it: an encoded line (stdio) or the message
//! itself (HTTP, where rmcp's session encodes it and reads its extensions to pick the stream).

use std::{borrow::Cow, io};

use rmcp::model::ServerJsonRpcMessage;

use super::kind::Kind;

/// How an outbox keeps what it queues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// Encoded at once, one JSON line each (the stdio front writes bytes).
    Lines,
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    /// Kept as messages (the HTTP front hands them to rmcp's session, which needs the
    /// message's extensions to choose the response stream).
    Messages,
}

/// What is queued: the line the host will read, or the message.
#[derive(Debug)]
pub(crate) enum Payload {
    /// One encoded JSON-RPC message, newline included.
    Line(Vec<u8>),
    /// The message itself.
    Message(Box<ServerJsonRpcMessage>),
}

/// One queued message.
#[derive(Debug)]
pub(super) struct Entry {
    pub(super) payload: Payload,
    /// Its encoded size (newline included) when it counts against the byte bound, else 0.
    pub(super) bytes: usize,
    pub(super) kind: Kind,
}

impl Entry {
    /// `message` in `form`; `None` if it cannot be encoded (never for rmcp's own types).
    pub(super) fn of(
        message: Cow<'_, ServerJsonRpcMessage>,
        kind: Kind,
        form: Form,
    ) -> Option<Entry> {
        match form {
            Form::Lines => {
                let mut line = match serde_json::to_vec(&*message) {
                    Ok(line) => line,
                    Err(error) => {
                        tracing::warn!(%error, "a message for the host could not be encoded; dropped");
                        return None;
                    }
                };
                line.push(b'\n');
                let bytes = if kind.bounded() { line.len() } else { 0 };
                Some(Entry {
                    payload: Payload::Line(line),
                    bytes,
                    kind,
                })
            }
            Form::Messages => {
                let bytes = if kind.bounded() {
                    encoded_len(&message)? + 1
                } else {
                    0
                };
                Some(Entry {
                    payload: Payload::Message(Box::new(message.into_owned())),
                    bytes,
                    kind,
                })
            }
        }
    }
}

/// The length of `message` as JSON, counted without building the text.
fn encoded_len(message: &ServerJsonRpcMessage) -> Option<usize> {
    let mut counter = Counter(0);
    match serde_json::to_writer(&mut counter, message) {
        Ok(()) => Some(counter.0),
        Err(error) => {
            tracing::warn!(%error, "a message for the host could not be encoded; dropped");
            None
        }
    }
}

struct Counter(usize);

impl io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
