//! What the outcome of a POST says about the delivery of the request it carried (see
//! [`crate::transport::ledger`]).

use rmcp::transport::streamable_http_client::StreamableHttpError;

use crate::transport::ledger::Sent;

/// What a POST's `result` says about the delivery of its request (see
/// [`crate::transport::ledger`]): refused before a connection was made, it never reached the
/// server; answered with an error status, the status says whether it ran; cut off after it was
/// sent, it may have run.
pub(super) fn of<T>(result: &Result<T, StreamableHttpError<reqwest::Error>>) -> Sent {
    match result {
        Ok(_) => Sent::Delivered,
        Err(StreamableHttpError::Client(e)) if e.is_connect() => Sent::Failed,
        Err(
            StreamableHttpError::HttpStatus(_)
            | StreamableHttpError::SessionExpired
            | StreamableHttpError::AuthRequired(_)
            | StreamableHttpError::InsufficientScope(_)
            | StreamableHttpError::UnexpectedServerResponse(_),
        ) => Sent::Refused,
        Err(_) => Sent::Delivered,
    }
}
