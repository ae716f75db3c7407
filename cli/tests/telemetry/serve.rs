//! The gateway's side of a trace (feature `serve`): every host request over Streamable HTTP is a
//! `SERVER` span that continues the context the host sent in `_meta`, and is counted in
//! `mcp.server.operation.duration` with `network.transport` `tcp`.

use crate::names;
use mcp_resilient_gateway::{http::Gateway, telemetry::names as server_names};
use opentelemetry::{
    Context,
    trace::{SpanKind, TraceContextExt, Tracer, TracerProvider as _},
};
use rmcp::{
    ServiceExt,
    model::{CallToolRequestParams, ReadResourceRequestParams, RequestMetaObject},
    transport::StreamableHttpClientTransport,
};
use tokio_util::sync::CancellationToken;

use crate::common::{self, LIMIT};
use crate::{sinks, spans_of, wait_recorded};

/// `_meta` carrying `cx`'s span as W3C trace context.
fn meta_of(cx: &Context) -> RequestMetaObject {
    let span = cx.span().span_context().clone();
    let mut meta = RequestMetaObject::new();
    meta.set_traceparent(format!("00-{}-{}-01", span.trace_id(), span.span_id()));
    meta
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_through_serve_is_a_server_span_in_the_hosts_trace() {
    let sinks = sinks();
    let gateway = Gateway::transparent(common::stdio_mock("tel-serve", &[])).expect("gateway");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("address"));
    let stop = CancellationToken::new();
    let serving = tokio::spawn(gateway.serve(listener, stop.clone()));
    let host = tokio::time::timeout(
        LIMIT,
        ().serve(StreamableHttpClientTransport::from_uri(url)),
    )
    .await
    .expect("initialize in time")
    .expect("initialize");

    let tracer = sinks.tracer.tracer("host");
    let host_cx = Context::current_with_span(tracer.start("host turn over http"));
    let trace = host_cx.span().span_context().trace_id();
    let host_span = host_cx.span().span_context().span_id();
    let mut call = CallToolRequestParams::new("echo");
    call.arguments = serde_json::json!({"text": "hi"}).as_object().cloned();
    call.meta = Some(meta_of(&host_cx));
    tokio::time::timeout(LIMIT, host.call_tool(call))
        .await
        .expect("answered in time")
        .expect("echo through serve");
    let mut read = ReadResourceRequestParams::new("mock://static/hello");
    read.meta = Some(meta_of(&host_cx));
    tokio::time::timeout(LIMIT, host.read_resource(read))
        .await
        .expect("answered in time")
        .expect("a resource through serve");
    let mut missing = ReadResourceRequestParams::new("mock://no/such/resource");
    missing.meta = Some(meta_of(&host_cx));
    let refused = tokio::time::timeout(LIMIT, host.read_resource(missing))
        .await
        .expect("answered in time");
    let code = match refused {
        Err(rmcp::ServiceError::McpError(error)) => error.code.0.to_string(),
        other => panic!("an unknown resource is a JSON-RPC error: {other:?}"),
    };
    host_cx.span().end();
    let _ = host.cancel().await;
    stop.cancel();
    let _ = tokio::time::timeout(LIMIT, serving).await;

    let spans = spans_of(trace);
    let served: Vec<_> = spans
        .iter()
        .filter(|s| s.span_kind == SpanKind::Server)
        .collect();
    let names_of = |name: &str| served.iter().filter(|s| s.name == name).count();
    assert_eq!(names_of("tools/call"), 1, "{spans:#?}");
    assert_eq!(names_of("resources/read"), 2, "{spans:#?}");
    for span in &served {
        assert_eq!(span.parent_span_id, host_span, "{span:#?}");
        let transport = span
            .attributes
            .iter()
            .find(|kv| kv.key.as_str() == names::NETWORK_TRANSPORT)
            .map(|kv| kv.value.to_string());
        assert_eq!(transport.as_deref(), Some("tcp"), "{span:#?}");
    }
    let error_types: Vec<String> = served
        .iter()
        .filter(|s| s.name == "resources/read")
        .filter_map(|s| {
            s.attributes
                .iter()
                .find(|kv| kv.key.as_str() == names::ERROR_TYPE)
                .map(|kv| kv.value.to_string())
        })
        .collect();
    assert_eq!(
        error_types,
        std::slice::from_ref(&code),
        "the upstream's refusal, once"
    );
    let upstream = spans
        .iter()
        .find(|s| s.span_kind == SpanKind::Client && s.name == "tools/call")
        .unwrap_or_else(|| panic!("the upstream client span in {spans:#?}"));
    let call_span = served
        .iter()
        .find(|s| s.name == "tools/call")
        .expect("call");
    assert_eq!(upstream.parent_span_id, call_span.span_context.span_id());

    let read_over_tcp = [
        (names::METHOD, "resources/read"),
        (names::NETWORK_TRANSPORT, "tcp"),
    ];
    wait_recorded(server_names::SERVER_OPERATION_DURATION, "", &read_over_tcp).await;
    let refused_read = [
        (names::METHOD, "resources/read"),
        (names::ERROR_TYPE, code.as_str()),
    ];
    wait_recorded(server_names::SERVER_OPERATION_DURATION, "", &refused_read).await;
    wait_recorded(
        server_names::SERVER_SESSION_DURATION,
        "",
        &[(names::NETWORK_TRANSPORT, "tcp")],
    )
    .await;
}
