//! Requests lost with the process that was answering them.
//!
//! A 2025 host whose request's SSE stream breaks asks for the rest with a `GET` carrying
//! `Last-Event-ID`. When the process that was answering is gone (a replica of a fleet killed, or
//! this gateway restarted with its sessions in a shared store), the process that now serves the
//! session has no such stream: rmcp answers an empty stream, the host asks again every few
//! seconds, and its request hangs until the host's own timeout (30 s and more in the official
//! SDKs). Here the request is answered instead, at once: "may have run".
//!
//! For that, the event ids of a request's stream carry, after rmcp's own id, which process made
//! them and which JSON-RPC request they answer: `{rmcp's id}~{process}{kind}{request id}`, where
//! `process` is 16 hex digits drawn when the process starts, `kind` is `c` for `tools/call` and
//! `r` for any other request, and the request id is `n` and a number or `s` and a short string.
//! A request whose id is a long or unusual string gets rmcp's ids unchanged (and no early
//! answer): what a host sends is never copied into a header beyond [`MAX_ID_CHARS`].
//!
//! # Invariants
//!
//! 1. rmcp only ever sees its own event ids: the tag is taken off before a resume reaches it.
//! 2. A resume tagged by another process is never given to rmcp (its request numbers are another
//!    process's, and could name a different request here): it is answered as lost.
//! 3. A resume tagged by this process that rmcp cannot serve is answered as lost, not emptied.

use std::{
    hash::{BuildHasher, Hasher},
    sync::LazyLock,
};

use rmcp::model::{
    CallToolResult, ClientJsonRpcMessage, ClientRequest, ContentBlock, ErrorData, NumberOrString,
    ServerJsonRpcMessage, ServerResult,
};
use rmcp::transport::streamable_http_server::session::ServerSseMessage;

/// The longest string request id that is carried in event ids.
pub(in crate::http) const MAX_ID_CHARS: usize = 64;

/// This process, as event ids name it: 16 hex digits, random per process (std's hasher keys are
/// drawn from the OS when a process first asks for them).
static PROCESS: LazyLock<String> = LazyLock::new(|| {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    format!("{:016x}", hasher.finish())
});

/// This process, as event ids name it.
pub(in crate::http) fn process() -> &'static str {
    PROCESS.as_str()
}

/// What a tag says: the request's kind and id, and whether this process made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::http) struct Tag {
    here: bool,
    call: bool,
    id: NumberOrString,
}

impl Tag {
    /// The tag for the stream that answers `message`, if it is a request whose id can be carried.
    pub(in crate::http) fn of(message: &ClientJsonRpcMessage) -> Option<String> {
        let ClientJsonRpcMessage::Request(request) = message else {
            return None;
        };
        let call = matches!(request.request, ClientRequest::CallToolRequest(_));
        Self::for_request(call, &request.id)
    }

    /// The tag for the stream that answers the request `id` (a `tools/call` if `call`), if its
    /// id can be carried.
    pub(in crate::http) fn for_request(call: bool, id: &NumberOrString) -> Option<String> {
        let kind = match call {
            true => 'c',
            false => 'r',
        };
        let id = match id {
            NumberOrString::Number(n) => format!("n{n}"),
            NumberOrString::String(s) if carried(s) => format!("s{s}"),
            NumberOrString::String(_) => return None,
        };
        Some(format!("{}{kind}{id}", *PROCESS))
    }

    /// Splits a `Last-Event-ID` into rmcp's id and the tag, if it has one that parses.
    pub(in crate::http) fn split(last_event_id: &str) -> (&str, Option<Tag>) {
        let Some((rmcp, tag)) = last_event_id.rsplit_once('~') else {
            return (last_event_id, None);
        };
        (rmcp, Self::parse(tag))
    }

    fn parse(tag: &str) -> Option<Tag> {
        let process = tag.get(..16)?;
        let mut rest = tag.get(16..)?.chars();
        let call = match rest.next()? {
            'c' => true,
            'r' => false,
            _ => return None,
        };
        let id = match rest.next()? {
            'n' => NumberOrString::Number(rest.as_str().parse().ok()?),
            's' if carried(rest.as_str()) => NumberOrString::String(rest.as_str().into()),
            _ => return None,
        };
        Some(Tag {
            here: process == PROCESS.as_str(),
            call,
            id,
        })
    }

    /// Whether this process made the tag.
    pub(in crate::http) fn here(&self) -> bool {
        self.here
    }

    /// The answer for the lost request: a tool result with `isError` for a call (what the
    /// gateway says of any call that may have run), a JSON-RPC error for anything else.
    pub(in crate::http) fn answer(&self) -> ServerSseMessage {
        const WHY: &str = "The gateway process that was answering this request stopped before it answered (another one serves the session now).";
        crate::calls::may_have_run();
        let message = may_have_run(self.call, &self.id, WHY);
        ServerSseMessage::from_message(message)
    }
}

/// A request in flight that can be answered as lost when the drain's limit passes
/// (`gateway/src/http/drain.rs`): its kind and id, put on its response by the opening.
#[derive(Debug, Clone)]
pub(in crate::http) struct Unanswered {
    call: bool,
    id: NumberOrString,
}

impl Unanswered {
    /// The request `id`, a `tools/call` if `call`.
    pub(in crate::http) fn new(call: bool, id: NumberOrString) -> Self {
        Self { call, id }
    }

    /// The tag of the stream that answers it, if its id can be carried.
    pub(in crate::http) fn tag(&self) -> Option<String> {
        Tag::for_request(self.call, &self.id)
    }

    /// The answer as one SSE event: a tool result with `isError` for a call, a JSON-RPC error
    /// for anything else, each saying it may have run (and counted so, for the status page).
    pub(in crate::http) fn event(&self) -> bytes::Bytes {
        let json = serde_json::to_string(&self.message()).unwrap_or_default();
        bytes::Bytes::from(format!("data: {json}\n\n"))
    }

    /// The answer as one JSON-RPC message (for a response not yet begun: one JSON body).
    pub(in crate::http) fn message(&self) -> ServerJsonRpcMessage {
        const WHY: &str = "The gateway stopped before it had the answer: its drain limit passed (a deploy or a restart).";
        crate::calls::may_have_run();
        may_have_run(self.call, &self.id, WHY)
    }
}

/// The answer to a request that may have run, saying `why`: a tool result with `isError` for
/// a call, a JSON-RPC error for anything else.
fn may_have_run(call: bool, id: &NumberOrString, why: &str) -> ServerJsonRpcMessage {
    match call {
        true => ServerJsonRpcMessage::response(
            ServerResult::CallToolResult(CallToolResult::error(vec![ContentBlock::text(format!(
                "{why} The call may have run on the MCP server; it is not sent again by the gateway."
            ))])),
            id.clone(),
        ),
        false => ServerJsonRpcMessage::error(
            ErrorData::internal_error(format!("{why} The request may have run."), None),
            Some(id.clone()),
        ),
    }
}

/// Whether a string id is carried in event ids: short, and only characters that need no care
/// in a header.
fn carried(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_ID_CHARS
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// `message` with `tag` after its event id (events without an id are left alone).
pub(in crate::http) fn tagged(
    mut message: ServerSseMessage,
    tag: Option<&str>,
) -> ServerSseMessage {
    if let (Some(id), Some(tag)) = (message.event_id.as_mut(), tag) {
        id.push('~');
        id.push_str(tag);
    }
    message
}

#[cfg(test)]
mod tests;
