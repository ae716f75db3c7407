//! A host's tool call: routed to its upstream, its progress relayed under the host's token, a
//! host's cancellation passed on, and an outage answered with a tool error the model can read.

use rmcp::{
    ErrorData, RoleServer,
    model::{CallToolRequestParams, CallToolResult, ContentBlock, ProgressNotification},
    service::RequestContext,
};
use tokio::time::Instant;

use crate::telemetry::Served;
use mcp_resilient::{CallError, call::CallOptions};

use super::{forward, handler::ProxyHandler, outage, upstream::Upstream};

impl ProxyHandler {
    /// Calls `name` for the host: waits for the next generation during an outage (up to
    /// `call_wait`), forwards progress with the host's token, abandons the call (cancelling it
    /// upstream) when the host cancels, and turns an outage into a plain-language tool error.
    pub(super) async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        // A host's `inputResponses` answer rounds this gateway never asks of it (it answers an
        // upstream's `input_required` itself, through the host handlers): they are not passed
        // on, but a malformed one is refused, as SEP-2322 asks of a server.
        if let Some(responses) = &request.input_responses
            && let Some((key, _)) = responses.iter().find(|(_, value)| !value.is_object())
        {
            let message = format!("inputResponses['{key}'] must be an object");
            return Err(ErrorData::invalid_params(message, None));
        }
        self.start_inline().await?;
        let (upstream, raw) = self.shared.route_tool(&request.name)?;
        if let Some(front) = &self.front
            && !front.sees(&context, upstream.name(), &raw)
        {
            // Never forwarded: the host's list did not show it either.
            let message = format!("tool '{}' is not one this caller may use", request.name);
            return Err(ErrorData::invalid_params(message, None));
        }
        let metas = [request.meta.as_ref(), Some(&context.meta)];
        let served = Served::start(
            "tools/call",
            self.shared.link.transport,
            &metas,
            Some(raw.as_str()),
        );
        let mut params = CallToolRequestParams::new(raw);
        params.arguments = request.arguments;
        let mut meta = request.meta;
        let host_token = meta
            .as_ref()
            .and_then(|m| m.get_progress_token())
            .or_else(|| context.meta.get_progress_token());
        if let Some(meta) = meta.as_mut() {
            meta.remove("progressToken");
        }
        // A 2026-07-28 server has no logging/setLevel: the host's level goes with each call,
        // the one this call asks for (a 2026-07-28 host's `_meta`) or the session's.
        let level = (context.meta.log_level()).or_else(|| self.shared.link.level());
        if let Some(level) = level
            && upstream.per_request_levels()
        {
            meta.get_or_insert_with(Default::default)
                .set_log_level(level);
        }
        params.meta = meta.filter(|m| !m.is_empty());
        let mut options = CallOptions::default();
        if let Some(token) = host_token {
            // Queued at once, in order: progress sent before the result reaches the host first.
            let outbox = self.shared.link.outbox.clone();
            options = options.on_progress(move |mut progress| {
                progress.progress_token = token.clone();
                outbox.notify(ProgressNotification::new(progress).into());
            });
        }
        // Listed while it runs: what the upstream asks meanwhile goes to this host.
        let _calling = upstream
            .callers
            .enter(&self.shared.link, context.id.clone());
        let waited = Instant::now();
        let work = served.within(self.call_through_revival(&upstream, params, options, waited));
        let work = match &self.front {
            Some(front) => front.call(&self.shared, &context, Box::pin(work)),
            None => Box::pin(work),
        };
        let outcome = tokio::select! {
            outcome = work => outcome,
            _ = context.ct.cancelled() => {
                served.end(Some("cancelled"));
                // Dropping the call abandons it; the upstream is told.
                return Err(ErrorData::new(
                    rmcp::model::ErrorCode(-32800),
                    "request cancelled by the host",
                    None,
                ));
            }
        };
        served.end(crate::telemetry::served_error(&outcome));
        let failed = match &outcome {
            Ok(result) => result.is_error == Some(true),
            Err(_) => true,
        };
        crate::calls::record(&request.name, waited.elapsed(), failed);
        match outcome {
            Ok(result) => Ok(result),
            Err(CallError::Server(error)) => Err(error),
            Err(error) => {
                if error.may_have_run() {
                    crate::calls::may_have_run();
                }
                let text = outage::explain(upstream.name(), &error, &forward::standing(&upstream));
                tracing::info!(server = %upstream.name(), %error, "call answered with a tool error");
                Ok(CallToolResult::error(vec![ContentBlock::text(text)]))
            }
        }
    }

    /// Calls through the supervisor; a server that gave up (and that the keeper will start again)
    /// is waited for within the call wait that is left, once, like any other outage.
    async fn call_through_revival(
        &self,
        upstream: &Upstream,
        params: CallToolRequestParams,
        options: CallOptions,
        waited: Instant,
    ) -> Result<CallToolResult, CallError> {
        let outcome = upstream
            .supervisor
            .call(params.clone(), options.clone())
            .await;
        let left = upstream.call_wait.saturating_sub(waited.elapsed());
        // Only a call the server provably did not run may go again (the `CallError` table);
        // a server that gave up is not transient by itself, but the keeper revives it.
        let unrun = outcome.as_ref().is_err_and(|error| !error.may_have_run());
        if !unrun || left.is_zero() || !Upstream::reviving(&upstream.supervisor.status().state) {
            return outcome;
        }
        if upstream.wait_ready(left).await {
            upstream.supervisor.call(params, options).await
        } else {
            Err(CallError::Unavailable {
                server: upstream.name().to_owned(),
                state: upstream.supervisor.status().state,
            })
        }
    }
}
