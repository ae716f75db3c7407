//! Responses nobody asked for: a response to an id never sent, or a second response to one.
//!
//! rmcp drops such a response silently once a session runs (no request waits for it), but
//! during the handshake it fails the attempt on it ("conflict initialized response id"). Its
//! verdict is *alive*: the server answered something, and it still counts as activity; the
//! transport drops it before rmcp sees it. And it is seen: the first one of a generation is
//! logged at warn, the rest at debug with a running count, so a sloppy server is visible
//! without flooding the log.
//!
//! A late answer to a `server/discover` that rmcp's `Auto` gave up waiting for is no stray: it
//! answers a request sent and not yet answered. It is dropped below rmcp all the same, by
//! [`super::refusal::DiscoverRefusals`], since it too would fail the `initialize` that followed.
//!
//! # Invariants
//!
//! 1. Memory is bounded: at most [`TRACKED`] ids are remembered; past that the oldest is
//!    forgotten (a response to it would then be counted as stray: a miscount, never a leak).
//! 2. Only our own requests are tracked; the server's requests to us and their ids are not ours
//!    to judge.
//! 3. A response is stray only if no request sent and not yet answered has its id, matched as
//!    rmcp matches ids; so nothing a waiting request needs is ever dropped (short of invariant
//!    1's thousand unanswered requests).

use std::{collections::VecDeque, sync::Arc};

use rmcp::{
    RoleClient,
    model::{JsonRpcMessage, RequestId},
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
};

use crate::state::Generation;

/// The most request ids remembered at once (see invariant 1). A request whose answer never comes
/// (it timed out, or was cancelled) stays until then.
const TRACKED: usize = 1024;

/// The requests of one generation still waiting for their response, and how many responses came
/// for none of them.
#[derive(Debug)]
pub(in crate::transport) struct Outstanding {
    server: Arc<str>,
    generation: Generation,
    ids: VecDeque<RequestId>,
    strays: u64,
}

impl Outstanding {
    pub(crate) fn new(server: Arc<str>, generation: Generation) -> Self {
        Self {
            server,
            generation,
            ids: VecDeque::new(),
            strays: 0,
        }
    }

    /// Notes a request we are sending.
    pub(in crate::transport) fn sent(&mut self, message: &TxJsonRpcMessage<RoleClient>) {
        if let JsonRpcMessage::Request(request) = message {
            if self.ids.len() == TRACKED {
                self.ids.pop_front();
            }
            self.ids.push_back(request.id.clone());
        }
    }

    /// Notes a message received; true when it is a response nobody waits for (then counted and
    /// said, see the module docs).
    pub(in crate::transport) fn received(
        &mut self,
        message: &RxJsonRpcMessage<RoleClient>,
    ) -> bool {
        let id = match message {
            JsonRpcMessage::Response(response) => &response.id,
            JsonRpcMessage::Error(error) => match &error.id {
                Some(id) => id,
                // An error without an id answers nothing in particular (a parse error).
                None => return false,
            },
            _ => return false,
        };
        if let Some(at) = self.ids.iter().position(|sent| same(sent, id)) {
            self.ids.remove(at);
            return false;
        }
        self.strays += 1;
        crate::telemetry::stray(&self.server);
        let (server, generation, strays) = (&*self.server, self.generation, self.strays);
        if strays == 1 {
            tracing::warn!(server, %generation, %id, "ignored a response to a request never sent (or answered already); further ones are counted at debug level");
        } else {
            tracing::debug!(server, %generation, %id, strays, "ignored another response to a request never sent (or answered already)");
        }
        true
    }

    /// How many responses came for no request.
    #[cfg(test)]
    pub(in crate::transport) fn strays(&self) -> u64 {
        self.strays
    }
}

/// The id we sent and the id answered are the same, as rmcp matches them: equal, or a number
/// answered as its decimal string.
fn same(sent: &RequestId, answered: &RequestId) -> bool {
    sent == answered
        || matches!((sent, answered), (RequestId::Number(n), RequestId::String(s)) if s.parse::<i64>() == Ok(*n))
}

#[cfg(test)]
mod tests {
    use rmcp::model::{
        ClientRequest, EmptyResult, JsonRpcRequest, JsonRpcResponse, JsonRpcVersion2_0,
        PingRequest, ServerResult,
    };

    use super::*;

    fn request(id: i64) -> TxJsonRpcMessage<RoleClient> {
        JsonRpcMessage::Request(JsonRpcRequest::new(
            RequestId::Number(id),
            ClientRequest::PingRequest(PingRequest::default()),
        ))
    }

    fn response(id: RequestId) -> RxJsonRpcMessage<RoleClient> {
        JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id,
            result: ServerResult::EmptyResult(EmptyResult {}),
        })
    }

    #[test]
    fn a_response_nobody_waits_for_is_counted_once_per_response() {
        let mut outstanding = Outstanding::new("s".into(), Generation::FIRST);
        outstanding.sent(&request(1));
        outstanding.sent(&request(2));
        assert!(!outstanding.received(&response(RequestId::Number(1))));
        assert!(
            outstanding.received(&response(RequestId::Number(1))),
            "a duplicate"
        );
        assert!(outstanding.received(&response(RequestId::String("never".into()))));
        assert!(
            !outstanding.received(&response(RequestId::String("2".into()))),
            "as rmcp"
        );
        assert_eq!(outstanding.strays(), 2);
    }

    #[test]
    fn memory_is_bounded_by_the_oldest_forgotten() {
        let mut outstanding = Outstanding::new("s".into(), Generation::FIRST);
        for id in 0..(TRACKED as i64 + 10) {
            outstanding.sent(&request(id));
        }
        assert_eq!(outstanding.ids.len(), TRACKED);
        assert!(
            outstanding.received(&response(RequestId::Number(0))),
            "forgotten"
        );
        assert!(!outstanding.received(&response(RequestId::Number(20))));
    }
}
