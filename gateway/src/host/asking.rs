//! How a host is asked what a server asks it: the request's marks, the errors an upstream gets,
//! and the [`Asker`] of a front that has no rmcp peer for its hosts.

use rmcp::{
    ServiceError,
    model::{ClientResult, ErrorData, Extensions, RequestId, ServerRequest},
    service::OriginatingRequestId,
};

/// How a front that has no rmcp peer for a host asks it a server's request (the own HTTP
/// front: `gateway/src/http/own/asks.rs`). The link bounds the wait.
#[cfg_attr(not(feature = "serve"), allow(dead_code))]
pub(crate) trait Asker: Send + Sync + std::fmt::Debug + 'static {
    /// Sends `request` to the host and waits for its answer.
    fn ask(
        &self,
        request: ServerRequest,
    ) -> futures::future::BoxFuture<'static, Result<ClientResult, ErrorData>>;
}

pub(super) fn extensions(origin: Option<RequestId>) -> Extensions {
    let mut extensions = Extensions::new();
    if let Some(origin) = origin {
        extensions.insert(OriginatingRequestId(origin));
    }
    extensions
}

pub(super) fn unexpected() -> ErrorData {
    ErrorData::internal_error("the host answered with the wrong kind of result", None)
}

/// The host's error as the upstream should see it: the host's own JSON-RPC error, or an
/// internal error that says the host could not be asked.
pub(super) fn host_error(error: ServiceError) -> ErrorData {
    match error {
        ServiceError::McpError(error) => error,
        other => ErrorData::internal_error(format!("the host did not answer: {other}"), None),
    }
}
