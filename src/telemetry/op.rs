//! One request, as the conventions see it: `mcp.client.operation.duration` and a `CLIENT` span,
//! with the span's W3C trace context carried in the request's `params._meta`.

use std::{borrow::Cow, time::Instant};

use opentelemetry::{
    Context, KeyValue,
    trace::{SpanKind, Status, TraceContextExt, Tracer},
};
use rmcp::model::{ClientRequest, RequestId};

use super::{
    Outcome,
    labels::{Labels, operation_attributes},
    names, propagate,
    recorder::recorder,
};
use crate::verdict::Verdict;

/// One request in flight. Dropped without [`end`](Self::end) (the caller went away), it records
/// `error.type` = `cancelled`.
#[derive(Debug)]
pub(crate) struct Op {
    labels: Labels,
    method: &'static str,
    tool: Option<String>,
    started: Instant,
    /// The client span, as a context to inject and to attach; `None` when the request makes none.
    span: Option<Context>,
    ended: bool,
}

impl Op {
    /// A request made for a caller (a call, a proxied request): always a client span, a child
    /// of the caller's current context.
    pub(crate) fn request(labels: &Labels, request: &ClientRequest) -> Op {
        Op::start(labels, method(request), tool(request), true)
    }

    /// A request the supervisor makes itself (a probe, a list, the handshake): a span only when
    /// the current context has one to be the child of (a pre-call probe does; the heartbeat
    /// does not, so an idle server does not fill a trace backend with roots).
    pub(crate) fn internal(labels: &Labels, method: &'static str) -> Op {
        let parented = Context::map_current(|cx| cx.has_active_span());
        Op::start(labels, method, None, parented)
    }

    fn start(labels: &Labels, method: &'static str, tool: Option<&str>, span: bool) -> Op {
        let recorder = recorder();
        let tool = tool.filter(|_| recorder.tool_names).map(str::to_owned);
        let span = span.then(|| {
            let name: Cow<'static, str> = match &tool {
                Some(tool) => Cow::Owned(format!("{method} {tool}")),
                None => Cow::Borrowed(method),
            };
            let mut attributes = labels.attributes();
            attributes.push(KeyValue::new(names::METHOD, method));
            attributes.push(KeyValue::new(
                names::GENERATION,
                labels.generation().get() as i64,
            ));
            if method == "tools/call" {
                attributes.push(KeyValue::new(names::OPERATION_NAME, "execute_tool"));
            }
            if let Some(session) = labels.session() {
                attributes.push(KeyValue::new(names::SESSION_ID, session.clone()));
            }
            if let Some(tool) = &tool {
                attributes.push(KeyValue::new(names::TOOL_NAME, tool.clone()));
            }
            let parent = Context::current();
            let span = recorder
                .tracer
                .span_builder(name)
                .with_kind(SpanKind::Client)
                .with_attributes(attributes)
                .start_with_context(&recorder.tracer, &parent);
            parent.with_span(span)
        });
        Op {
            labels: labels.clone(),
            method,
            tool,
            started: Instant::now(),
            span,
            ended: false,
        }
    }

    /// Writes this request's trace context (`traceparent`, `tracestate`) into its `_meta`,
    /// through the global propagator; nothing when there is no valid span context.
    pub(crate) fn inject(&self, request: &mut ClientRequest) {
        let cx = match &self.span {
            Some(cx) => Cow::Borrowed(cx),
            None => Cow::Owned(Context::current()),
        };
        propagate::inject(&cx, request);
    }

    /// Runs `work` (the exchange) inside the client span, so [`request_id`] finds it.
    pub(crate) fn within<F: std::future::Future>(
        &self,
        work: F,
    ) -> opentelemetry::context::WithContext<F> {
        let cx = self.span.clone().unwrap_or_else(Context::current);
        opentelemetry::context::FutureExt::with_context(work, cx)
    }

    /// Ends a probe: its verdict, its round trip or its miss, its duration.
    pub(crate) fn end_probe(mut self, verdict: &Verdict) {
        if let (Verdict::Alive, None) = (verdict, &self.span)
            && let Some(alive) = self.labels.alive_probe(self.method)
        {
            // A healthy heartbeat records exactly this every interval: the same measurements
            // as below, with the attributes built once per generation.
            let rtt = self.started.elapsed();
            let instruments = &recorder().instruments;
            instruments.verdicts.add(1, &alive.verdict);
            super::events::probe(&self.labels, self.method, verdict, rtt);
            instruments
                .operation
                .record(rtt.as_secs_f64(), &alive.operation);
            self.ended = true;
            return;
        }
        self.verdict(verdict);
        let rtt = self.started.elapsed();
        super::events::probe(&self.labels, self.method, verdict, rtt);
        let outcome = match verdict {
            Verdict::Alive => Outcome::Ok,
            other => Outcome::Failed(super::labels::verdict(other)),
        };
        self.end(outcome);
    }

    /// Counts what the fault model made of a failed request.
    pub(crate) fn verdict(&self, verdict: &Verdict) {
        super::events::verdict(&self.labels, self.method, verdict);
    }

    /// Records the duration, ends the span.
    pub(crate) fn end(mut self, outcome: Outcome<'_>) {
        self.ended = true;
        self.finish(outcome);
    }

    fn finish(&mut self, outcome: Outcome<'_>) {
        let seconds = self.started.elapsed().as_secs_f64();
        let (error, status, message) = match outcome {
            Outcome::Ok => (None, None, None),
            Outcome::ToolError => (Some("tool_error"), None, None),
            Outcome::Rpc(e) => {
                let code = super::labels::rpc_error_type(e.code.0);
                (Some(code), Some(code), Some(e.message.to_string()))
            }
            Outcome::Failed(word) => (Some(word), None, None),
        };
        let attributes = operation_attributes(
            &self.labels,
            self.method,
            self.tool.as_deref(),
            error,
            status,
        );
        recorder()
            .instruments
            .operation
            .record(seconds, &attributes);
        let Some(cx) = self.span.take() else { return };
        let span = cx.span();
        if let Some(error) = error {
            span.set_attribute(KeyValue::new(names::ERROR_TYPE, error));
            if let Some(status) = status {
                span.set_attribute(KeyValue::new(names::RPC_STATUS, status));
            }
            span.set_status(Status::error(message.unwrap_or_else(|| error.to_owned())));
        }
        span.end();
    }
}

impl Drop for Op {
    fn drop(&mut self) {
        if !self.ended {
            self.finish(Outcome::Failed("cancelled"));
        }
    }
}

/// Puts the JSON-RPC id on the current client span (convention: `jsonrpc.request.id`).
pub(crate) fn request_id(id: &RequestId) {
    Context::map_current(|cx| {
        if cx.has_active_span() {
            cx.span()
                .set_attribute(KeyValue::new(names::REQUEST_ID, id.to_string()));
        }
    });
}

/// The method of a request, as a static word (the conventions' well-known values).
fn method(request: &ClientRequest) -> &'static str {
    match request {
        ClientRequest::PingRequest(_) => "ping",
        ClientRequest::InitializeRequest(_) => "initialize",
        ClientRequest::DiscoverRequest(_) => "server/discover",
        ClientRequest::CompleteRequest(_) => "completion/complete",
        ClientRequest::SetLevelRequest(_) => "logging/setLevel",
        ClientRequest::GetPromptRequest(_) => "prompts/get",
        ClientRequest::ListPromptsRequest(_) => "prompts/list",
        ClientRequest::ListResourcesRequest(_) => "resources/list",
        ClientRequest::ListResourceTemplatesRequest(_) => "resources/templates/list",
        ClientRequest::ReadResourceRequest(_) => "resources/read",
        ClientRequest::SubscriptionsListenRequest(_) => "subscriptions/listen",
        ClientRequest::SubscribeRequest(_) => "resources/subscribe",
        ClientRequest::UnsubscribeRequest(_) => "resources/unsubscribe",
        ClientRequest::CallToolRequest(_) => "tools/call",
        ClientRequest::ListToolsRequest(_) => "tools/list",
        _ => "_OTHER",
    }
}

fn tool(request: &ClientRequest) -> Option<&str> {
    match request {
        ClientRequest::CallToolRequest(call) => Some(&call.params.name),
        _ => None,
    }
}
