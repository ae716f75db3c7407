//! The proxy's side of a trace: the `SERVER` span of one host request, whose parent is the
//! context the host sent in `_meta`, and what it says went wrong.

use opentelemetry::{
    Context, KeyValue,
    trace::{SpanKind, Status, TraceContextExt, Tracer},
};
use rmcp::model::RequestMetaObject;

use mcp_resilient::{CallError, telemetry};
use opentelemetry::{global, propagation::Extractor};
use rmcp::model::JsonObject;

use super::names;

/// What a proxied call's server span says went wrong, if anything.
pub(crate) fn served_error(
    outcome: &Result<rmcp::model::CallToolResult, CallError>,
) -> Option<&'static str> {
    match outcome {
        Ok(result) if result.is_error == Some(true) => Some("tool_error"),
        Ok(_) => None,
        Err(error) => Some(error.kind()),
    }
}

/// The proxy serving one host request: a `SERVER` span whose parent is the context the host
/// sent in `_meta` (or none), and in which the upstream call runs.
#[derive(Debug)]
pub(crate) struct Served {
    cx: Context,
    started: std::time::Instant,
    method: &'static str,
    transport: &'static str,
    tool: Option<String>,
}

impl Served {
    /// `metas`: where the host's `_meta` may be (rmcp keeps it in the params or the request
    /// context); the first that carries a `traceparent` is the parent.
    pub(crate) fn start(
        method: &'static str,
        transport: &'static str,
        metas: &[Option<&RequestMetaObject>],
        tool: Option<&str>,
    ) -> Served {
        let tracer = telemetry::tracer();
        let meta = metas
            .iter()
            .flatten()
            .find(|meta| meta.get_traceparent().is_some());
        let parent = extract(meta.copied());
        let tool = tool.filter(|_| telemetry::tool_names());
        let name = match tool {
            Some(tool) => format!("{method} {tool}"),
            None => method.to_owned(),
        };
        let mut attributes = vec![
            KeyValue::new(names::METHOD, method),
            KeyValue::new(names::NETWORK_TRANSPORT, transport),
        ];
        if method == "tools/call" {
            attributes.push(KeyValue::new(names::OPERATION_NAME, "execute_tool"));
        }
        if let Some(tool) = tool {
            attributes.push(KeyValue::new(names::TOOL_NAME, tool.to_owned()));
        }
        let span = tracer
            .span_builder(name)
            .with_kind(SpanKind::Server)
            .with_attributes(attributes)
            .start_with_context(tracer, &parent);
        Served {
            cx: parent.with_span(span),
            started: std::time::Instant::now(),
            method,
            transport,
            tool: tool.map(str::to_owned),
        }
    }

    /// Runs `work` inside this span.
    pub(crate) fn within<F: std::future::Future>(
        &self,
        work: F,
    ) -> opentelemetry::context::WithContext<F> {
        opentelemetry::context::FutureExt::with_context(work, self.cx.clone())
    }

    /// Ends the span, with `error` as `error.type` when the request failed, and records the
    /// request's duration.
    pub(crate) fn end(self, error: Option<&'static str>) {
        let took = self.started.elapsed();
        super::server::operation(
            took,
            self.method,
            self.transport,
            self.tool.as_deref(),
            error,
        );
        let span = self.cx.span();
        if let Some(error) = error {
            span.set_attribute(KeyValue::new(names::ERROR_TYPE, error));
            span.set_status(Status::error(error));
        }
        span.end();
    }
}

/// The context a request's `_meta` carries (the host's trace, read through the global text map
/// propagator), or the current one.
fn extract(meta: Option<&RequestMetaObject>) -> Context {
    match meta {
        Some(meta) => {
            global::get_text_map_propagator(|propagator| propagator.extract(&Fields(&meta.0.0)))
        }
        None => Context::current(),
    }
}

/// A `_meta` object's string fields, as the propagator reads them (`traceparent`, …).
struct Fields<'a>(&'a JsonObject);

impl Extractor for Fields<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(serde_json::Value::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}
