//! [`Tracked`]: an answer's body that holds its stream's slot on the connection until the body
//! ends, fails or is dropped, so the set counts a long stream (a 2025 session's standalone
//! `GET`) for as long as it lasts.

use std::{
    pin::Pin,
    task::{Context, Poll},
};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;

use super::conn::Slot;

/// An answer's body and its stream's slot (see the module docs).
pub(super) struct Tracked {
    body: Incoming,
    /// Released at the body's end, its error, or its drop.
    slot: Option<Slot>,
}

impl Tracked {
    pub(super) fn new(body: Incoming, slot: Slot) -> Self {
        Self {
            body,
            slot: Some(slot),
        }
    }
}

impl Body for Tracked {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = self.get_mut();
        let frame = Pin::new(&mut this.body).poll_frame(cx);
        if matches!(frame, Poll::Ready(None | Some(Err(_)))) {
            this.slot = None;
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
