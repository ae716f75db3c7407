//! [`StreamCut`]: the HTTP proxy cutting one response stream part-way, as a load balancer, a
//! NAT or an idle-timeout that drops one connection does while the server behind it lives on.
//!
//! # Invariants
//!
//! 1. A cut is armed for `times` responses: each of the first `times` forwarded POSTs that
//!    match takes one (under the proxy's lock, so two POSTs never share one); every other
//!    request passes untouched.
//! 2. A cut response forwards its head and exactly `after_events` complete SSE events (an event
//!    ends at a blank line), never a byte more, then fails its body: hyper cannot end a chunked
//!    body it was not given, so it closes the client's connection mid-body. Before it fails, the
//!    body answers "not yet" once (and wakes itself at once): hyper flushes what it holds when
//!    a body has nothing ready, and drops it unsent when the body fails, so the client always
//!    gets the head and the events before the cut. The upstream body is dropped with it, which
//!    closes the upstream connection: the server sees its client leave.
//! 3. A response that is not an event stream, or that ends before its cut point, is forwarded
//!    whole and not counted as cut; the armed cut is spent all the same.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use hyper::Response;
use hyper::body::{Body as HttpBody, Frame, SizeHint};
use hyper::header;

/// Cut the response streams of the next `times` POSTs that match, after `after_events` events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamCut {
    /// JSON-RPC methods (e.g. `"tools/call"`) whose POST's response may be cut.
    ///
    /// # Default
    /// Empty: the next POST's, whatever its method.
    pub methods: Vec<String>,
    /// Complete SSE events forwarded before the cut (0: right after the response's head).
    pub after_events: usize,
    /// How many matching POSTs' responses are cut.
    ///
    /// # Default
    /// 1 (with [`StreamCut::after`]).
    pub times: u32,
}

impl StreamCut {
    /// Cuts the next `method` POST's response stream after `after_events` events.
    pub fn after(method: &str, after_events: usize) -> StreamCut {
        StreamCut {
            methods: vec![method.to_owned()],
            after_events,
            times: 1,
        }
    }

    /// The same cut for the next `times` matching POSTs.
    pub fn times(self, times: u32) -> StreamCut {
        StreamCut { times, ..self }
    }

    /// `response`, cut as this says when it is an event stream (invariants 2 and 3); `cuts`
    /// counts the streams actually cut.
    pub(super) fn apply(self, response: Response<Body>, cuts: Arc<AtomicU64>) -> Response<Body> {
        let events = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
        if !events {
            return response;
        }
        response.map(|inner| {
            Body::new(Cutting {
                inner,
                left: self.after_events,
                line_empty: true,
                after_cr: false,
                cut: Stage::Before,
                cuts,
            })
        })
    }
}

/// How far a cut body is from its failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Forwarding, before the cut point.
    Before,
    /// At the cut point: the next poll is the "not yet" that lets hyper flush.
    Flush,
    /// Flushed: the next poll fails the body.
    Fail,
}

/// A response body that ends in a failure after its `left` events (invariant 2).
struct Cutting {
    inner: Body,
    /// Events still to forward before the cut.
    left: usize,
    /// The line being scanned has no byte yet (an empty line ends an event).
    line_empty: bool,
    /// The last byte scanned was `\r` (a `\n` after it ends no second line).
    after_cr: bool,
    /// Where the body is in its cut (invariant 2).
    cut: Stage,
    cuts: Arc<AtomicU64>,
}

impl Cutting {
    /// How many bytes of `chunk` go out before the cut point, if the cut point is in it.
    fn cut_point(&mut self, chunk: &[u8]) -> Option<usize> {
        for (at, byte) in chunk.iter().enumerate() {
            let ends_line = match byte {
                b'\n' if self.after_cr => {
                    self.after_cr = false;
                    continue;
                }
                b'\n' => true,
                b'\r' => {
                    self.after_cr = true;
                    true
                }
                _ => false,
            };
            if *byte != b'\r' {
                self.after_cr = false;
            }
            if !ends_line {
                self.line_empty = false;
                continue;
            }
            if self.line_empty {
                self.left -= 1;
                if self.left == 0 {
                    // A `\r` that ends the event may still have its `\n`: send it too.
                    let end = match (byte, chunk.get(at + 1)) {
                        (b'\r', Some(b'\n')) => at + 2,
                        _ => at + 1,
                    };
                    return Some(end);
                }
            }
            self.line_empty = true;
        }
        None
    }

    fn fail(&mut self) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        self.cuts.fetch_add(1, Ordering::SeqCst);
        let cut = io::Error::new(io::ErrorKind::ConnectionAborted, "cut by the fault proxy");
        Poll::Ready(Some(Err(cut)))
    }
}

impl HttpBody for Cutting {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let this = self.get_mut();
        if this.left == 0 && this.cut == Stage::Before {
            this.cut = Stage::Flush;
        }
        match this.cut {
            Stage::Before => {}
            Stage::Flush => {
                this.cut = Stage::Fail;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            Stage::Fail => return this.fail(),
        }
        let frame = match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Ready(Some(Err(error))) => {
                return Poll::Ready(Some(Err(io::Error::other(error))));
            }
            Poll::Ready(Some(Ok(frame))) => frame,
        };
        let Some(data) = frame.data_ref() else {
            return Poll::Ready(Some(Ok(frame)));
        };
        match this.cut_point(data) {
            Some(end) => {
                this.cut = Stage::Flush;
                Poll::Ready(Some(Ok(Frame::data(data.slice(..end)))))
            }
            None => Poll::Ready(Some(Ok(frame))),
        }
    }

    fn is_end_stream(&self) -> bool {
        false
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cutting(left: usize) -> Cutting {
        Cutting {
            inner: Body::empty(),
            left,
            line_empty: true,
            after_cr: false,
            cut: Stage::Before,
            cuts: Arc::default(),
        }
    }

    #[test]
    fn the_cut_point_is_the_end_of_the_nth_event_whatever_the_line_ends() {
        let stream = b"id: 1\ndata: \n\ndata: {\"a\":1}\r\n\r\ndata: x\r\rrest";
        let mut one = cutting(1);
        assert_eq!(one.cut_point(stream), Some(14));
        let mut two = cutting(2);
        assert_eq!(two.cut_point(stream), Some(31));
        let mut three = cutting(3);
        assert_eq!(three.cut_point(stream), Some(40));
        let mut four = cutting(4);
        assert_eq!(four.cut_point(stream), None);
    }

    #[test]
    fn an_event_split_across_chunks_is_counted_once() {
        let mut two = cutting(2);
        assert_eq!(two.cut_point(b"data: a\r"), None);
        assert_eq!(two.cut_point(b"\n\r"), None);
        assert_eq!(two.cut_point(b"\ndata: b\n"), None);
        assert_eq!(two.cut_point(b"\nmore"), Some(1));
    }
}
