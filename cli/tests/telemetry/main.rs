//! Telemetry (feature `otel`): the metrics and spans a real outage leaves, read back from
//! in-memory exporters, and W3C trace context carried to the server in `params._meta`.
//!
//! One meter and tracer provider serve every test of this binary (the library's recorder is
//! process-wide), so they run in a binary of their own; each test uses its own server names and
//! trace ids, and looks only at those.

#![allow(unreachable_pub)]

#[path = "../it/common/mod.rs"]
mod common;
mod names;
mod serve;

use std::{collections::BTreeMap, sync::OnceLock};

use crate::common::{LIMIT, era_2025, fast, process::MockProcess, wait_state};
use mcp_resilient::{
    ConnectionState, ServerConfig, Supervisor, ToolRegistry, auth::Auth, call::CallOptions,
    config::Limits, state::Reason, telemetry::Telemetry,
};
use opentelemetry::{
    Context, KeyValue,
    context::FutureExt,
    trace::{SpanKind, TraceContextExt, Tracer, TracerProvider as _},
};
use opentelemetry_sdk::{
    metrics::{
        InMemoryMetricExporter, PeriodicReader, SdkMeterProvider,
        data::{AggregatedMetrics, MetricData},
    },
    propagation::TraceContextPropagator,
    trace::{InMemorySpanExporter, SdkTracerProvider, SpanData},
};
use rmcp::model::CallToolRequestParams;
use serde_json::json;

/// The providers and their exporters, installed once.
struct Sinks {
    meters: SdkMeterProvider,
    metrics: InMemoryMetricExporter,
    tracer: SdkTracerProvider,
    spans: InMemorySpanExporter,
}

fn sinks() -> &'static Sinks {
    static SINKS: OnceLock<Sinks> = OnceLock::new();
    SINKS.get_or_init(|| {
        let metrics = InMemoryMetricExporter::default();
        let meters = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(metrics.clone()).build())
            .build();
        let spans = InMemorySpanExporter::default();
        let tracer = SdkTracerProvider::builder()
            .with_simple_exporter(spans.clone())
            .build();
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        Telemetry::new()
            .meter_provider(&meters)
            .tracer_provider(&tracer)
            .install()
            .expect("the first install");
        Sinks {
            meters,
            metrics,
            tracer,
            spans,
        }
    })
}

/// One recorded series: its attributes and its value (a histogram's count).
#[derive(Debug, Clone)]
struct Point {
    attributes: BTreeMap<String, String>,
    value: f64,
}

impl Point {
    fn has(&self, key: &str, value: &str) -> bool {
        self.attributes.get(key).map(String::as_str) == Some(value)
    }
}

/// Every series recorded so far, by metric name (the latest cumulative export).
fn recorded() -> BTreeMap<String, Vec<Point>> {
    let sinks = sinks();
    sinks.meters.force_flush().expect("flush");
    let exports = sinks.metrics.get_finished_metrics().expect("metrics");
    let mut out: BTreeMap<String, Vec<Point>> = BTreeMap::new();
    let Some(last) = exports.last() else {
        return out;
    };
    for scope in last.scope_metrics() {
        for metric in scope.metrics() {
            let points = out.entry(metric.name().to_owned()).or_default();
            let attrs = |kvs: &mut dyn Iterator<Item = &KeyValue>| -> BTreeMap<String, String> {
                kvs.map(|kv| (kv.key.to_string(), kv.value.to_string()))
                    .collect()
            };
            macro_rules! flatten {
                ($data:expr) => {
                    match $data {
                        MetricData::Gauge(g) => {
                            for p in g.data_points() {
                                points.push(Point {
                                    attributes: attrs(&mut p.attributes()),
                                    value: p.value() as f64,
                                });
                            }
                        }
                        MetricData::Sum(s) => {
                            for p in s.data_points() {
                                points.push(Point {
                                    attributes: attrs(&mut p.attributes()),
                                    value: p.value() as f64,
                                });
                            }
                        }
                        MetricData::Histogram(h) => {
                            for p in h.data_points() {
                                points.push(Point {
                                    attributes: attrs(&mut p.attributes()),
                                    value: p.count() as f64,
                                });
                            }
                        }
                        MetricData::ExponentialHistogram(_) => {}
                    }
                };
            }
            match metric.data() {
                AggregatedMetrics::F64(data) => flatten!(data),
                AggregatedMetrics::U64(data) => flatten!(data),
                AggregatedMetrics::I64(data) => flatten!(data),
            }
        }
    }
    out
}

/// The points of `metric` for `server` that carry every `(key, value)` of `with`.
fn find<'a>(
    all: &'a BTreeMap<String, Vec<Point>>,
    metric: &str,
    server: &str,
    with: &[(&str, &str)],
) -> Vec<&'a Point> {
    all.get(metric)
        .map(|points| {
            points
                .iter()
                .filter(|p| p.has(names::SERVER, server) || server.is_empty())
                .filter(|p| with.iter().all(|(k, v)| p.has(k, v)))
                .collect()
        })
        .unwrap_or_default()
}

fn assert_some(
    all: &BTreeMap<String, Vec<Point>>,
    metric: &str,
    server: &str,
    with: &[(&str, &str)],
) {
    let found = find(all, metric, server, with);
    assert!(
        found.iter().any(|p| p.value > 0.0),
        "no {metric} for {server} with {with:?}; recorded: {:#?}",
        all.get(metric)
    );
}

/// Waits (at most [`LIMIT`]) until `metric` has a series for `server` with `with`.
async fn wait_recorded(metric: &str, server: &str, with: &[(&str, &str)]) {
    let deadline = tokio::time::Instant::now() + LIMIT;
    loop {
        let all = recorded();
        if find(&all, metric, server, with)
            .iter()
            .any(|p| p.value > 0.0)
        {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no {metric} for {server} with {with:?} within {LIMIT:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

const SECRET_ARG: &str = "sekrit-argument-4711";
const SECRET_QUERY: &str = "sekrit-query-0815";
/// The bearer token: the value of a variable cargo sets for every test run (this package's
/// folder), so the test needs no `set_var`.
const SECRET_TOKEN: &str = env!("CARGO_MANIFEST_DIR");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_and_failing_calls_leave_every_series_with_bounded_attributes() {
    let _ = sinks();
    let mut mock = MockProcess::start("http").await;
    let url = format!("{}?token={SECRET_QUERY}", mock.url());
    let config = era_2025(fast(ServerConfig::http("tel", &url)))
        .auth(Auth::bearer_env("CARGO_MANIFEST_DIR"))
        .call_wait(LIMIT);
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(config, &registry).expect("start");
    let mut state = server.watch();
    wait_state(&mut state, ConnectionState::is_ready).await;

    // An idle generation is probed; the answer is a verdict (alive) and a round trip.
    wait_recorded(names::PROBE_DURATION, "tel", &[(names::METHOD, "ping")]).await;

    // Calls: one answered, one tool error, one JSON-RPC error.
    let echo = registry.handle("mcp__tel__echo").expect("echo");
    echo.call(json!({ "text": SECRET_ARG }))
        .await
        .expect("echo");
    let failed = registry.handle("mcp__tel__fail").expect("fail");
    let result = failed
        .call(json!({}))
        .await
        .expect("a tool error is a result");
    assert_eq!(result.is_error, Some(true));
    let unknown = server
        .call(
            CallToolRequestParams::new("no_such_tool"),
            CallOptions::default(),
        )
        .await;
    assert!(unknown.is_err(), "{unknown:?}");

    // A 401 to a call: one renewal (a bearer token cannot be renewed: refused), and the server
    // goes `failed` (unauthorized) until its slow retry finds the fault cleared.
    mock.admin(
        "status-fault",
        json!({"status": 401, "www_authenticate": "Bearer realm=\"mock\"", "methods": ["tools/call"]}),
    )
    .await;
    let refused = echo.call(json!({ "text": SECRET_ARG })).await;
    assert!(refused.is_err(), "{refused:?}");
    mock.admin("status-fault/clear", json!({})).await;
    wait_state(
        &mut state,
        |s| matches!(s, ConnectionState::Ready { generation, .. } if generation.get() >= 2),
    )
    .await;

    // A hung server: probes miss until the heartbeat declares it dead.
    mock.admin("hang", json!({})).await;
    wait_state(&mut state, |s| !s.is_ready()).await;
    mock.admin("unhang", json!({})).await;
    wait_state(
        &mut state,
        |s| matches!(s, ConnectionState::Ready { generation, .. } if generation.get() >= 3),
    )
    .await;

    // Killed: the loss (the session's stream ends, and a call in flight fails: its verdict is
    // a death), attempts that fail, a call held by callWait, then the restart.
    let posts = |requests: &serde_json::Value| {
        let requests = requests.as_array().map(Vec::as_slice).unwrap_or_default();
        requests.iter().filter(|q| q["method"] == "POST").count()
    };
    let before = posts(&mock.admin_get("requests").await);
    let sleeper = registry.handle("mcp__tel__sleep").expect("sleep");
    let in_flight = tokio::spawn(async move { sleeper.call(json!({"ms": 10_000})).await });
    tokio::time::timeout(LIMIT, async {
        while posts(&mock.admin_get("requests").await) <= before {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the call reached the server");
    mock.kill().await;
    let lost = tokio::time::timeout(LIMIT, in_flight).await;
    assert!(
        lost.expect("the call ended in time")
            .expect("join")
            .is_err(),
        "the call in flight at the kill failed"
    );
    wait_state(&mut state, |s| {
        matches!(
            s,
            ConnectionState::Reconnecting {
                reason: Reason::ConnectionFailed,
                ..
            }
        )
    })
    .await;
    let held = tokio::spawn({
        let echo = echo.clone();
        async move { echo.call(json!({ "text": "held" })).await }
    });
    mock.restart().await;
    wait_state(&mut state, ConnectionState::is_ready).await;
    held.await
        .expect("join")
        .expect("the held call ran on the new generation");

    // A second server that exceeds a limit at connect.
    let limited =
        ServerConfig::http("tel-limit", mock.url()).limits(Limits::default().max_list_items(1));
    let limited = Supervisor::spawn(era_2025(fast(limited)), &registry).expect("start");
    let mut limited_state = limited.watch();
    wait_state(&mut limited_state, |s| {
        matches!(s, ConnectionState::Failed { .. })
    })
    .await;
    limited.shutdown().await;

    // A server that answers ids it was never sent.
    let stray = common::stdio_mock("tel-stray", &["--hostile", "stray-response"]);
    let stray = Supervisor::spawn(stray, &registry).expect("start");
    let mut stray_state = stray.watch();
    wait_state(&mut stray_state, ConnectionState::is_ready).await;
    let stray_echo = registry.handle("mcp__tel-stray__echo").expect("echo");
    stray_echo.call(json!({"text": "x"})).await.expect("echo");
    wait_recorded(names::STRAY_RESPONSES, "tel-stray", &[]).await;
    stray.shutdown().await;
    server.shutdown().await;
    mock.kill().await;

    let all = recorded();
    let op = names::OPERATION_DURATION;
    let http = [
        (names::TRANSPORT, "http"),
        (names::NETWORK_TRANSPORT, "tcp"),
    ];
    for method in ["initialize", "tools/list", "tools/call", "ping"] {
        let mut with = http.to_vec();
        with.push((names::METHOD, method));
        with.push((names::PROTOCOL_VERSION, "2025-11-25"));
        assert_some(&all, op, "tel", &with);
    }
    assert_some(
        &all,
        op,
        "tel",
        &[
            (names::METHOD, "tools/call"),
            (names::ERROR_TYPE, "tool_error"),
            (names::OPERATION_NAME, "execute_tool"),
        ],
    );
    assert!(
        find(&all, op, "tel", &[(names::METHOD, "tools/call")])
            .iter()
            .any(|p| p.attributes.contains_key(names::RPC_STATUS)),
        "a JSON-RPC error's code: {:#?}",
        all.get(op)
    );
    assert_some(
        &all,
        names::SESSION_DURATION,
        "tel",
        &[(names::ERROR_TYPE, "heartbeat_timeout")],
    );
    assert_some(&all, names::SESSION_DURATION, "tel", &http);
    assert_some(&all, names::STATE, "tel", &[(names::STATE_NAME, "stopped")]);
    let ready_now = find(&all, names::STATE, "tel", &[(names::STATE_NAME, "ready")]);
    assert!(
        ready_now.iter().all(|p| p.value == 0.0),
        "stopped, so not ready: {ready_now:?}"
    );
    assert!(
        find(&all, names::GENERATIONS, "tel", &http)
            .iter()
            .map(|p| p.value)
            .sum::<f64>()
            >= 4.0,
        "four ready generations: {:#?}",
        all.get(names::GENERATIONS)
    );
    for cause in ["unauthorized", "heartbeat_timeout", "transport_error"] {
        assert_some(
            &all,
            names::LOSSES,
            "tel",
            &[(names::CAUSE, cause), (names::TRANSPORT, "http")],
        );
    }
    assert_some(
        &all,
        names::CONNECT_FAILURES,
        "tel",
        &[(names::CAUSE, "connect_failed")],
    );
    assert_some(
        &all,
        names::CONNECT_FAILURES,
        "tel-limit",
        &[(names::CAUSE, "limit_exceeded")],
    );
    assert_some(
        &all,
        names::LIMITS_EXCEEDED,
        "tel-limit",
        &[(names::LIMIT, "max_list_items")],
    );
    for verdict in ["alive", "suspect", "death", "unauthorized"] {
        assert_some(&all, names::VERDICTS, "tel", &[(names::VERDICT, verdict)]);
    }
    // A probe answered alive records attributes built once per generation: the same as any
    // other verdict's (the generation's, the method) and no error.
    let mut alive = http.to_vec();
    alive.extend([
        (names::METHOD, "ping"),
        (names::PROTOCOL_VERSION, "2025-11-25"),
        (names::VERDICT, "alive"),
    ]);
    assert_some(&all, names::VERDICTS, "tel", &alive);
    assert!(
        find(&all, op, "tel", &[(names::METHOD, "ping")])
            .iter()
            .any(|p| !p.attributes.contains_key(names::ERROR_TYPE)
                && p.attributes.contains_key(names::NETWORK_PROTOCOL)),
        "an answered probe's duration, without error.type: {:#?}",
        all.get(op)
    );
    assert_some(
        &all,
        names::RECONNECT_ATTEMPTS,
        "tel",
        &[(names::REASON, "connection_lost")],
    );
    assert_some(
        &all,
        names::RECONNECT_ATTEMPTS,
        "tel",
        &[
            (names::REASON, "connection_failed"),
            (names::CAUSE, "connect_failed"),
        ],
    );
    assert_some(
        &all,
        names::RECONNECT_DELAY,
        "tel",
        &[(names::REASON, "connection_failed")],
    );
    assert_some(&all, names::OUTAGE_DURATION, "tel", &[]);
    assert_some(
        &all,
        names::PROBE_DURATION,
        "tel",
        &[(names::METHOD, "ping")],
    );
    assert_some(&all, names::PROBE_MISSES, "tel", &[(names::METHOD, "ping")]);
    assert!(
        find(&all, names::CALL_WAIT, "tel", &[])
            .iter()
            .any(|p| p.value > 0.0 && !p.attributes.contains_key(names::ERROR_TYPE)),
        "a held call that got its generation: {:#?}",
        all.get(names::CALL_WAIT)
    );
    assert_some(
        &all,
        names::CALL_FAILURES,
        "tel",
        &[
            (names::ERROR_TYPE, "server_error"),
            (names::MAY_HAVE_RUN, "false"),
        ],
    );
    assert_some(
        &all,
        names::CALL_FAILURES,
        "tel",
        &[(names::ERROR_TYPE, "rejected")],
    );
    assert_some(&all, names::TOOL_SWAPS, "tel", &[]);
    assert_some(
        &all,
        names::TOOL_CHANGES,
        "tel",
        &[(names::CHANGE, "added")],
    );
    assert_some(
        &all,
        names::TOOL_CHANGES,
        "tel",
        &[(names::CHANGE, "removed")],
    );
    assert!(
        find(&all, names::TOOLS, "tel", &[])
            .iter()
            .any(|p| p.value == 0.0),
        "unregistered at shutdown"
    );
    assert_some(
        &all,
        names::AUTH_RENEWALS,
        "tel",
        &[(names::ERROR_TYPE, "refused")],
    );
    assert_some(&all, names::AUTH_REFUSALS, "tel", &[]);

    // Bounded: no argument, token or URL query in any attribute value; no tool name by default.
    for (metric, points) in &all {
        for point in points {
            for (key, value) in &point.attributes {
                for secret in [
                    SECRET_ARG,
                    SECRET_QUERY,
                    SECRET_TOKEN,
                    "127.0.0.1",
                    "token=",
                ] {
                    assert!(!value.contains(secret), "{metric} {key}={value}");
                }
                assert_ne!(
                    key.as_str(),
                    names::TOOL_NAME,
                    "{metric}: tool names are opt-in"
                );
            }
        }
    }
}

/// The spans recorded so far in trace `trace`.
fn spans_of(trace: opentelemetry::trace::TraceId) -> Vec<SpanData> {
    sinks()
        .spans
        .get_finished_spans()
        .expect("spans")
        .into_iter()
        .filter(|s| s.span_context.trace_id() == trace)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_is_a_client_span_under_the_host_span_and_its_traceparent_reaches_the_server() {
    let sinks = sinks();
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(common::stdio_mock("tel-trace", &[]), &registry).expect("start");
    let mut state = server.watch();
    wait_state(&mut state, ConnectionState::is_ready).await;
    let whoami = registry.handle("mcp__tel-trace__whoami").expect("whoami");

    let tracer = sinks.tracer.tracer("host");
    let host = tracer.start("host work");
    let host_cx = Context::current_with_span(host);
    let trace = host_cx.span().span_context().trace_id();
    let host_span = host_cx.span().span_context().span_id();
    let result = whoami
        .call(json!({}))
        .with_context(host_cx.clone())
        .await
        .expect("whoami");
    host_cx.span().end();
    let who = mcp_mock_server::Whoami::from_result(&result).expect("whoami result");
    server.shutdown().await;

    let spans = spans_of(trace);
    let call = spans
        .iter()
        .find(|s| s.name == "tools/call")
        .unwrap_or_else(|| panic!("a tools/call span in {spans:#?}"));
    assert_eq!(call.span_kind, SpanKind::Client);
    assert_eq!(call.parent_span_id, host_span, "child of the host's span");
    let attribute = |key: &str| {
        call.attributes
            .iter()
            .find(|kv| kv.key.as_str() == key)
            .map(|kv| kv.value.to_string())
    };
    assert_eq!(attribute(names::METHOD).as_deref(), Some("tools/call"));
    assert_eq!(attribute(names::NETWORK_TRANSPORT).as_deref(), Some("pipe"));
    assert_eq!(
        attribute(names::OPERATION_NAME).as_deref(),
        Some("execute_tool")
    );
    assert!(
        attribute(names::REQUEST_ID).is_some(),
        "{:?}",
        call.attributes
    );
    let expected = format!("00-{}-{}-01", trace, call.span_context.span_id());
    assert_eq!(
        who.traceparent.as_deref(),
        Some(expected.as_str()),
        "the server got the client span's context"
    );
}

/// The `mcp.session.id` a span of a 2025-11-25 Streamable HTTP call carries: the server's
/// session id; none on 2026-07-28, which has no sessions.
async fn session_id_of_a_call(name: &str, modern: bool) -> Option<String> {
    let sinks = sinks();
    let mock = MockProcess::start("http").await;
    let config = fast(ServerConfig::http(name, mock.url()));
    let config = match modern {
        true => config.protocol(mcp_resilient::config::ProtocolChoice::V2026_07_28),
        false => era_2025(config),
    };
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(config, &registry).expect("start");
    let mut state = server.watch();
    wait_state(&mut state, ConnectionState::is_ready).await;
    let host = sinks.tracer.tracer("host").start("host work");
    let host_cx = Context::current_with_span(host);
    let trace = host_cx.span().span_context().trace_id();
    let echo = registry
        .handle(&format!("mcp__{name}__echo"))
        .expect("echo");
    echo.call(json!({"text": "x"}))
        .with_context(host_cx.clone())
        .await
        .expect("echo");
    host_cx.span().end();
    server.shutdown().await;
    let spans = spans_of(trace);
    let call = spans
        .iter()
        .find(|s| s.name == "tools/call")
        .unwrap_or_else(|| panic!("a tools/call span in {spans:#?}"));
    call.attributes
        .iter()
        .find(|kv| kv.key.as_str() == names::SESSION_ID)
        .map(|kv| kv.value.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_http_call_span_carries_the_session_id_and_a_2026_one_none() {
    let id = session_id_of_a_call("tel-session", false).await;
    assert!(id.is_some_and(|id| !id.is_empty()), "a 2025 session's id");
    assert_eq!(session_id_of_a_call("tel-modern", true).await, None);
}

// A current-thread runtime: the `tracing` subscriber is set for this thread, where every poll runs.
#[tokio::test]
async fn a_tracing_host_span_is_the_parent_through_tracing_opentelemetry() {
    use tracing::Instrument;
    use tracing_subscriber::layer::SubscriberExt;
    let sinks = sinks();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(sinks.tracer.tracer("tracing-host")));
    let _default = tracing::subscriber::set_default(subscriber);
    let registry = ToolRegistry::new();
    let server =
        Supervisor::spawn(common::stdio_mock("tel-tracing", &[]), &registry).expect("start");
    let mut state = server.watch();
    wait_state(&mut state, ConnectionState::is_ready).await;
    let echo = registry.handle("mcp__tel-tracing__echo").expect("echo");
    let step = tracing::info_span!("agent step");
    let call = echo.call(json!({"text": "hi"})).instrument(step.clone());
    tokio::time::timeout(LIMIT, call)
        .await
        .expect("in time")
        .expect("echo");
    drop(step);
    server.shutdown().await;

    let spans = sinks.spans.get_finished_spans().expect("spans");
    let parent = spans
        .iter()
        .find(|s| s.name == "agent step")
        .expect("the host's tracing span, exported");
    let child = spans
        .iter()
        .find(|s| s.name == "tools/call" && s.parent_span_id == parent.span_context.span_id());
    assert!(
        child.is_some(),
        "a tools/call child of the tracing span: {spans:#?}"
    );
}

/// `mcp-resilient watch --metrics 127.0.0.1:0` as a child, and where its `/metrics` is.
struct Watcher {
    /// Killed when the watcher is dropped (`kill_on_drop`).
    _child: tokio::process::Child,
    url: String,
}

impl Watcher {
    async fn start(args: &[&str]) -> Watcher {
        use tokio::io::AsyncBufReadExt;
        let mut child = tokio::process::Command::new(common::mock_binary())
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn the CLI");
        let stderr = child.stderr.take().expect("stderr");
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        let url = tokio::time::timeout(LIMIT, async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(at) = line.find("http://") {
                    return line[at..].trim().to_owned();
                }
            }
            panic!("the CLI ended without saying where /metrics is");
        })
        .await
        .expect("the metrics address in time");
        // Keep reading stderr so the CLI never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Watcher { _child: child, url }
    }

    /// One scrape, parsed as Prometheus text.
    async fn scrape(&self) -> prometheus_parse::Scrape {
        let body = tokio::time::timeout(LIMIT, async {
            reqwest::get(&self.url)
                .await
                .expect("scrape")
                .text()
                .await
                .expect("body")
        })
        .await
        .expect("scraped in time");
        let lines = body.lines().map(|l| Ok(l.to_owned()));
        prometheus_parse::Scrape::parse(lines).expect("valid Prometheus text")
    }

    /// Scrapes until `want` holds, at most [`LIMIT`].
    async fn scrape_until(
        &self,
        what: &str,
        want: impl Fn(&prometheus_parse::Scrape) -> bool,
    ) -> prometheus_parse::Scrape {
        let deadline = tokio::time::Instant::now() + LIMIT;
        loop {
            let scrape = self.scrape().await;
            if want(&scrape) {
                return scrape;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{what}: not scraped within {LIMIT:?}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }
}

/// The value of the sample `name` whose labels include every `(key, value)` of `with`.
fn sample(scrape: &prometheus_parse::Scrape, name: &str, with: &[(&str, &str)]) -> Option<f64> {
    scrape
        .samples
        .iter()
        .filter(|s| s.metric == name)
        .filter(|s| with.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
        .map(|s| match s.value {
            prometheus_parse::Value::Counter(v)
            | prometheus_parse::Value::Gauge(v)
            | prometheus_parse::Value::Untyped(v) => v,
            prometheus_parse::Value::Histogram(ref buckets) => {
                buckets.last().map_or(0.0, |b| b.count)
            }
            _ => 0.0,
        })
        .reduce(|a, b| a + b)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_serves_the_loss_and_the_reconnect_as_prometheus_text() {
    let mut mock = MockProcess::start("http").await;
    let watcher = Watcher::start(&[
        "watch",
        "--url",
        &mock.url(),
        "--transport",
        "http",
        "--metrics",
        "127.0.0.1:0",
        "--heartbeat-interval",
        "300ms",
        "--heartbeat-timeout",
        "200ms",
        "--reconnect-initial",
        "50ms",
        "--reconnect-max",
        "300ms",
        "--max-attempts",
        "1000",
    ])
    .await;
    let server = [("mcp_resilient_server", "server")];
    let ready = [
        ("mcp_resilient_server", "server"),
        ("mcp_resilient_state", "ready"),
    ];
    watcher
        .scrape_until("ready", |s| {
            sample(s, "mcp_client_resilience_state", &ready) == Some(1.0)
        })
        .await;
    mock.kill().await;
    watcher
        .scrape_until("the loss", |s| {
            sample(s, "mcp_client_resilience_losses_total", &server).is_some_and(|v| v >= 1.0)
                && sample(s, "mcp_client_resilience_state", &ready) == Some(0.0)
        })
        .await;
    mock.restart().await;
    let scrape = watcher
        .scrape_until("ready again", |s| {
            sample(s, "mcp_client_resilience_state", &ready) == Some(1.0)
                && sample(s, "mcp_client_resilience_generations_total", &server)
                    .is_some_and(|v| v >= 2.0)
        })
        .await;
    assert!(
        sample(
            &scrape,
            "mcp_client_resilience_reconnect_attempts_total",
            &server
        )
        .is_some_and(|v| v >= 1.0)
    );
    assert!(
        sample(
            &scrape,
            "mcp_client_resilience_outage_duration_seconds",
            &server
        )
        .is_some_and(|v| v >= 1.0)
    );
    assert!(
        sample(
            &scrape,
            "mcp_client_operation_duration_seconds",
            &[("mcp_method_name", "tools/list")]
        )
        .is_some()
    );
    assert!(
        sample(&scrape, "mcp_client_session_duration_seconds", &server).is_some_and(|v| v >= 1.0)
    );
    drop(watcher);
    mock.kill().await;
}

#[tokio::test]
async fn metrics_on_a_non_loopback_address_needs_the_explicit_flag() {
    let output = tokio::time::timeout(
        LIMIT,
        tokio::process::Command::new(common::mock_binary())
            .args([
                "watch",
                "--url",
                "http://127.0.0.1:9/mcp",
                "--metrics",
                "0.0.0.0:0",
            ])
            .stdin(std::process::Stdio::null())
            .output(),
    )
    .await
    .expect("in time")
    .expect("run");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--metrics-any-address"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_trace_runs_from_the_host_through_the_proxy_to_the_upstream() {
    use rmcp::{ServiceExt, model::RequestMetaObject};
    let sinks = sinks();
    let (host_io, proxy_io) = tokio::io::duplex(64 * 1024);
    let (proxy_read, proxy_write) = tokio::io::split(proxy_io);
    let stop = tokio_util::sync::CancellationToken::new();
    let proxy = mcp_resilient_gateway::Proxy::transparent(common::stdio_mock("tel-proxy", &[]))
        .expect("proxy");
    let serving = tokio::spawn(proxy.serve(proxy_read, proxy_write, stop.clone()));
    let host = tokio::time::timeout(LIMIT, ().serve(host_io))
        .await
        .expect("initialize in time")
        .expect("initialize");

    // The host's own span, carried in `_meta` as W3C trace context.
    let tracer = sinks.tracer.tracer("host");
    let span = tracer.start("host turn");
    let host_cx = Context::current_with_span(span);
    let (trace, host_span) = {
        let cx = host_cx.span().span_context().clone();
        (cx.trace_id(), cx.span_id())
    };
    let mut meta = RequestMetaObject::new();
    meta.set_traceparent(format!("00-{trace}-{host_span}-01"));
    let mut params = CallToolRequestParams::new("whoami");
    params.meta = Some(meta);
    let result = tokio::time::timeout(LIMIT, host.call_tool(params))
        .await
        .expect("answered in time")
        .expect("whoami through the proxy");
    host_cx.span().end();
    let who = mcp_mock_server::Whoami::from_result(&result).expect("whoami result");
    let _ = host.cancel().await;
    stop.cancel();
    let _ = tokio::time::timeout(LIMIT, serving).await;

    let spans = spans_of(trace);
    let served = spans
        .iter()
        .find(|s| s.span_kind == SpanKind::Server && s.name == "tools/call")
        .unwrap_or_else(|| panic!("the proxy's server span in {spans:#?}"));
    assert_eq!(
        served.parent_span_id, host_span,
        "the proxy continues the host's context"
    );
    let upstream = spans
        .iter()
        .find(|s| s.span_kind == SpanKind::Client && s.name == "tools/call")
        .unwrap_or_else(|| panic!("the upstream client span in {spans:#?}"));
    assert_eq!(upstream.parent_span_id, served.span_context.span_id());
    let expected = format!("00-{trace}-{}-01", upstream.span_context.span_id());
    assert_eq!(
        who.traceparent.as_deref(),
        Some(expected.as_str()),
        "the upstream received the proxy's client span in _meta, in the host's trace"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_counts_the_notifications_it_drops_for_a_slow_host() {
    const STEPS: u64 = 5000;
    // --metrics goes before `--` (the upstream's command line follows it).
    let args = [
        "--metrics",
        "127.0.0.1:0",
        "--stdio",
        "--",
        common::mock_binary(),
        "mock-server",
        "--transport",
        "stdio",
    ];
    let mut host = common::raw::RawHost::start(&args, None).await;
    host.wait_log("/metrics", LIMIT).await;
    let url = host
        .log_lines()
        .iter()
        .find_map(|line| line.find("http://").map(|at| line[at..].trim().to_owned()))
        .expect("the metrics address");
    host.initialize().await;
    host.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "progress", "arguments": {"steps": STEPS, "ms": 0},
            "_meta": {"progressToken": "host-token"}
        }}),
    )
    .await;
    // The host reads nothing until the proxy has dropped progress for it.
    host.wait_log("progress notifications for a slow host", LIMIT)
        .await;
    let body = tokio::time::timeout(LIMIT, async {
        reqwest::get(&url)
            .await
            .expect("scrape")
            .text()
            .await
            .expect("body")
    })
    .await
    .expect("scraped in time");
    let scrape = prometheus_parse::Scrape::parse(body.lines().map(|l| Ok(l.to_owned())))
        .expect("Prometheus text");
    let dropped = sample(
        &scrape,
        "mcp_client_resilience_notifications_dropped_total",
        &[("mcp_method_name", "notifications/progress")],
    );
    assert!(dropped.is_some_and(|n| n > 0.0), "{body}");
    host.close_stdin();
    while host.read().await.is_some() {}
    host.exit_within(LIMIT).await.expect("the proxy exits");
}
