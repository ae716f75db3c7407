//! Every host request other than a tool call inside its `SERVER` span: the span and
//! `mcp.server.operation.duration` for resources, prompts, completions, subscriptions and the
//! log level, as the tool call (`call`) has them. The span's parent is the context the host sent
//! in `_meta`; a JSON-RPC error answer is its `error.type`.

use std::future::Future;

use rmcp::{ErrorData, RoleServer, service::RequestContext};

use crate::telemetry::{Served, served_rpc_error};

use super::{handler::ProxyHandler, revision::ForHost};

impl ProxyHandler {
    /// Runs `work`, the answer to the host's `method`, inside the request's span, and shapes
    /// the answer for the host's revision ([`ForHost`]).
    ///
    /// The work is boxed before anything else: rmcp's Streamable HTTP server runs a session's
    /// `initialize` inside the task that then waits for the session to end, so the largest of
    /// this handler's request futures is kept for every idle host session (see
    /// `ProxyHandler::initialize`). An `async fn` would hold the unstarted work by value.
    pub(super) fn traced<'a, T: ForHost + 'a>(
        &'a self,
        method: &'static str,
        context: &'a RequestContext<RoleServer>,
        work: impl Future<Output = Result<T, ErrorData>> + Send + 'a,
    ) -> impl Future<Output = Result<T, ErrorData>> + Send + 'a {
        let work = Box::pin(work);
        async move {
            let served = Served::start(
                method,
                self.shared.link.transport,
                &[Some(&context.meta)],
                None,
            );
            let started = match self.starts_inline() {
                true => Box::pin(self.start_inline()).await,
                false => Ok(()),
            };
            let answer = match started {
                Ok(()) => served.within(work).await,
                Err(error) => Err(error),
            };
            served.end(answer.as_ref().err().map(served_rpc_error));
            answer.map(ForHost::for_host)
        }
    }
}
