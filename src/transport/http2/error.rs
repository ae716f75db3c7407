//! [`Http2Error`]: why a request over an origin's HTTP/2 connections got no answer, and whether
//! it may have reached the server; and which of hyper's errors say that a request was not
//! processed, so that it may go again on another connection.

use std::error::Error as StdError;

/// Why a request over the origin's HTTP/2 connections got no answer. Carried as the source of
/// an `io::Error` in rmcp's `StreamableHttpError::Io` (see `crate::transport::http::errors`).
///
/// `Connect` and `Unprocessed` are transient and say the request never ran; `Request` may have
/// run.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Http2Error {
    /// No connection could be opened (TCP, TLS, or the HTTP/2 handshake): the request never left.
    #[error("connect")]
    Connect(#[source] std::io::Error),
    /// Every attempt was refused unprocessed (`REFUSED_STREAM`, a `GOAWAY` above its stream, a
    /// connection that closed before taking it): the server did not run it.
    #[error("{attempts} attempts refused before the server processed them")]
    Unprocessed {
        /// How many attempts were made.
        attempts: u32,
        #[source]
        source: hyper::Error,
    },
    /// The request failed after it reached the server: it may have run.
    #[error("request")]
    Request(#[source] hyper::Error),
}

impl Http2Error {
    /// True when the request provably never reached the server's processing.
    pub(crate) fn never_ran(&self) -> bool {
        matches!(
            self,
            Http2Error::Connect(_) | Http2Error::Unprocessed { .. }
        )
    }
}

/// What a failed send on one connection says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Failure {
    /// Not processed, and the connection takes no new streams (`GOAWAY`, or it closed before
    /// taking the request): try another connection.
    Drained,
    /// Not processed (`REFUSED_STREAM`), the connection is still good: try again.
    Refused,
    /// It may have been processed.
    Other,
}

/// Judges `error`; `returned` is true when hyper gave the request back (it was never written).
pub(super) fn failure(error: &hyper::Error, returned: bool) -> Failure {
    if returned {
        return Failure::Drained;
    }
    let mut source: Option<&(dyn StdError + 'static)> = Some(error);
    while let Some(error) = source {
        if let Some(h2) = error.downcast_ref::<h2::Error>() {
            return match h2.reason() {
                Some(h2::Reason::REFUSED_STREAM) if h2.is_remote() => Failure::Refused,
                // A graceful `GOAWAY` fails only the streams above its last id, and the ones
                // opened after it: none was processed (RFC 9113 § 6.8). One with an error code
                // may also end streams that were.
                Some(h2::Reason::NO_ERROR) if h2.is_go_away() && h2.is_remote() => Failure::Drained,
                _ => Failure::Other,
            };
        }
        source = error.source();
    }
    Failure::Other
}
