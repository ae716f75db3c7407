//! What a session of the own front holds of the server's requests to its host (`asks.rs`):
//! the questions waiting for an answer (at most [`MAX_PENDING`]), the host's requests in
//! flight a question may ride, and the standalone stream.

use std::collections::HashMap;

use bytes::Bytes;
use rmcp::{
    ErrorData,
    model::{ClientJsonRpcMessage, RequestId},
};
use tokio::sync::{mpsc, oneshot};

/// Questions to the host waiting for its answer, per session.
pub(super) const MAX_PENDING: usize = 8;

/// A session's questions and the responses they may ride.
#[derive(Default)]
pub(super) struct Asks {
    next: u64,
    /// By the id each was sent with: where its answer goes.
    pending: HashMap<u64, oneshot::Sender<ClientJsonRpcMessage>>,
    /// The host's requests in flight whose response a question may ride, by their id.
    rides: HashMap<RequestId, mpsc::Sender<Bytes>>,
    /// The standalone stream, while it is open: for a question that names no request of the
    /// host's in flight (the host has several calls on that upstream).
    pub(super) standalone: Option<mpsc::Sender<Bytes>>,
}

/// A question just asked: its id, where it goes, and where its answer will come.
pub(super) type Asked = (
    u64,
    mpsc::Sender<Bytes>,
    oneshot::Receiver<ClientJsonRpcMessage>,
);

impl Asks {
    /// Questions for the host's request `id` go to `events`; false if another request in
    /// flight has that id (the first keeps it).
    pub(super) fn ride(&mut self, id: &RequestId, events: mpsc::Sender<Bytes>) -> bool {
        if self.rides.contains_key(id) {
            return false;
        }
        self.rides.insert(id.clone(), events);
        true
    }

    /// The host's request `id` is answered.
    pub(super) fn unride(&mut self, id: &RequestId) {
        self.rides.remove(id);
    }

    /// A question for the host's request `origin` (on its response; else on the standalone
    /// stream), within the bound; else why not.
    pub(super) fn ask(&mut self, origin: Option<&RequestId>) -> Result<Asked, ErrorData> {
        let events = origin.and_then(|origin| self.rides.get(origin).cloned());
        let Some(events) = events.or_else(|| self.standalone.clone()) else {
            return Err(ErrorData::internal_error(
                "the host cannot be asked: no request of its own carries the question and its stream is not open",
                None,
            ));
        };
        if self.pending.len() >= MAX_PENDING {
            return Err(ErrorData::internal_error(
                format!("the host has {MAX_PENDING} questions to answer already"),
                None,
            ));
        }
        self.next += 1;
        let (tx, rx) = oneshot::channel();
        self.pending.insert(self.next, tx);
        Ok((self.next, events, rx))
    }

    /// Question `id` is no longer waited for.
    pub(super) fn given_up(&mut self, id: u64) {
        self.pending.remove(&id);
    }

    /// Where the answer `message` goes, if it answers a question waiting.
    pub(super) fn waiting_for(
        &mut self,
        message: &ClientJsonRpcMessage,
    ) -> Option<oneshot::Sender<ClientJsonRpcMessage>> {
        let id = match message {
            ClientJsonRpcMessage::Response(response) => &response.id,
            ClientJsonRpcMessage::Error(error) => error.id.as_ref()?,
            _ => return None,
        };
        let RequestId::Number(number) = id else {
            return None;
        };
        self.pending.remove(&u64::try_from(*number).ok()?)
    }
}
