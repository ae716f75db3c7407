//! What telemetry costs a call and a probe, for `valgrind --tool=callgrind` (BENCHMARKS.md § 12).
//!
//! Supervises a stdio mock server (a child process, so callgrind counts only this client),
//! makes `--calls N` echo calls one after another, then stays idle while the heartbeat probes
//! every 20 ms until `--probes N` probes have gone out (the mock's `whoami` counts them), and
//! prints one line of totals. Build it with and without feature `otel`:
//!
//! ```sh
//! cargo build --release -p mcp-mock-server --no-default-features --example telemetry_cost
//! valgrind --tool=callgrind target/release/examples/telemetry_cost \
//!     --mock target/release/mcp-mock-server --calls 2000 --probes 200 [--sdk]
//! ```
//!
//! `--sse URL` or `--http URL` supervises a legacy SSE or Streamable HTTP server there instead
//! (started apart, e.g. `mcp-resilient mock-server --transport sse --port P`), so a call's cost
//! over that transport is counted the same way (BENCHMARKS.md § 26).
//!
//! `--raw` makes the same calls with a bare rmcp client on the stdio mock's pipes (no supervisor,
//! no heartbeat): the baseline the supervised stdio call is compared with (BENCHMARKS.md, call
//! overhead). Both print the process's context switches and CPU time per call beside the totals.
//!
//! `--sdk` (feature `otel` only) installs an SDK meter provider (a periodic reader into memory,
//! which exports once a minute: not during a run)
//! and tracer provider (spans dropped at once); without it the library records into the
//! global no-op providers, as it does for an application that installs none.

use std::{process::ExitCode, time::Duration};

use mcp_resilient::{ConnectionState, ServerConfig, Supervisor, ToolRegistry, config::Heartbeat};
use serde_json::json;

fn flag<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mock: String = flag(&args, "--mock", "target/release/mcp-mock-server".to_owned());
    let calls: u64 = flag(&args, "--calls", 2000);
    let probes: u64 = flag(&args, "--probes", 200);
    let sdk = args.iter().any(|a| a == "--sdk");
    let raw = args.iter().any(|a| a == "--raw");
    let url = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let remote = match (url("--sse"), url("--http")) {
        (Some(sse), _) => Some(ServerConfig::sse("cost", sse)),
        (None, Some(http)) => Some(ServerConfig::http("cost", http)),
        (None, None) => None,
    };
    #[cfg(feature = "otel")]
    let _providers = sdk.then(install_sdk);
    #[cfg(not(feature = "otel"))]
    if sdk {
        eprintln!("--sdk needs feature otel");
        return ExitCode::from(2);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    if raw {
        return runtime.block_on(run_raw(mock, calls));
    }
    runtime.block_on(run(mock, remote, calls, probes))
}

/// This process's context switches (voluntary + involuntary) and CPU time in clock ticks.
fn switches_and_ticks() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let switches = status
        .lines()
        .filter(|l| l.contains("ctxt_switches:"))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .sum();
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // After the command's closing parenthesis come the state, then 10 fields, then utime and stime.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let field = |i: usize| -> u64 {
        after
            .split_whitespace()
            .nth(i)
            .and_then(|f| f.parse().ok())
            .unwrap_or(0)
    };
    let ticks = field(11) + field(12);
    (switches, ticks)
}

/// `calls` echo calls through the library (`supervised`) or a bare rmcp client, with the context
/// switches and CPU they cost this process: the JSON fields after the totals.
fn per_call(calls: u64, before: (u64, u64)) -> String {
    let after = switches_and_ticks();
    let n = calls.max(1) as f64;
    format!(
        "\"switches_per_call\": {:.2}, \"cpu_us_per_call\": {:.1}",
        (after.0 - before.0) as f64 / n,
        (after.1 - before.1) as f64 * 10_000.0 / n
    )
}

/// The baseline: an rmcp client on the stdio of a mock child, the same calls, nothing else.
async fn run_raw(mock: String, calls: u64) -> ExitCode {
    use rmcp::{
        ServiceExt,
        model::{CallToolRequestParams, ClientConfig, ProtocolVersion},
    };
    let Ok(mut child) = tokio::process::Command::new(&mock)
        .args(["--transport", "stdio"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
    else {
        return ExitCode::from(3);
    };
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        return ExitCode::from(3);
    };
    let config = ClientConfig::default().with_protocol_version(ProtocolVersion::V_2025_11_25);
    let Ok(client) = config.serve((stdout, stdin)).await else {
        return ExitCode::from(3);
    };
    // As the supervised session and the benchmark's raw baseline: rmcp's response cache off.
    client
        .peer()
        .set_response_cache_config(rmcp::service::ClientCacheConfig::disabled())
        .await;
    let arguments = json!({"text": "hi"})
        .as_object()
        .cloned()
        .unwrap_or_default();
    let before = switches_and_ticks();
    let mut failed = 0;
    for _ in 0..calls {
        let params = CallToolRequestParams::new("echo").with_arguments(arguments.clone());
        if client.call_tool(params).await.is_err() {
            failed += 1;
        }
    }
    let figures = per_call(calls, before);
    let _ = client.cancel().await;
    println!("{{\"calls\": {calls}, \"failed\": {failed}, \"raw\": true, {figures}}}");
    ExitCode::SUCCESS
}

async fn run(mock: String, remote: Option<ServerConfig>, calls: u64, probes: u64) -> ExitCode {
    let config =
        remote.unwrap_or_else(|| ServerConfig::stdio("cost", mock).args(["--transport", "stdio"]));
    let config = config
        .protocol(mcp_resilient::config::ProtocolChoice::V2025_11_25)
        .heartbeat(
            Heartbeat::default()
                .interval(Duration::from_millis(20))
                .timeout(Duration::from_millis(15))
                .failures(1000),
        );
    let registry = ToolRegistry::new();
    let Ok(server) = Supervisor::spawn(config, &registry) else {
        return ExitCode::from(3);
    };
    if server.wait_ready(Duration::from_secs(30)).await.is_err() {
        return ExitCode::from(3);
    }
    let echo = registry.handle("mcp__cost__echo").expect("echo");
    let whoami = registry.handle("mcp__cost__whoami").expect("whoami");
    let mut failed = 0;
    let before = switches_and_ticks();
    for _ in 0..calls {
        if let Err(e) = echo.call(json!({"text": "hi"})).await {
            if failed == 0 {
                eprintln!("first failed call: {e}");
            }
            failed += 1;
        }
    }
    let figures = per_call(calls, before);
    let pings = |result: &rmcp::model::CallToolResult| {
        mcp_mock_server::Whoami::from_result(result)
            .and_then(|who| who.methods.get("ping").copied())
            .unwrap_or(0)
    };
    let start = pings(&whoami.call(json!({})).await.expect("whoami"));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    let mut probed = 0;
    while probed < probes && tokio::time::Instant::now() < deadline {
        // Idle, so the heartbeat probes; look every half second (each look is one more call).
        tokio::time::sleep(Duration::from_millis(500)).await;
        probed = pings(&whoami.call(json!({})).await.expect("whoami")) - start;
    }
    let state = server.status().state;
    server.shutdown().await;
    println!(
        "{{\"calls\": {calls}, \"failed\": {failed}, \"probes\": {probed}, \"otel\": {}, \"ready\": {}, {figures}}}",
        cfg!(feature = "otel"),
        matches!(state, ConnectionState::Ready { .. })
    );
    ExitCode::SUCCESS
}

#[cfg(feature = "otel")]
fn install_sdk() -> (
    opentelemetry_sdk::metrics::SdkMeterProvider,
    opentelemetry_sdk::trace::SdkTracerProvider,
) {
    let meters = opentelemetry_sdk::metrics::SdkMeterProvider::builder()
        .with_reader(
            opentelemetry_sdk::metrics::PeriodicReader::builder(
                opentelemetry_sdk::metrics::InMemoryMetricExporter::default(),
            )
            .build(),
        )
        .build();
    let tracer = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_simple_exporter(opentelemetry_sdk::testing::trace::NoopSpanExporter::new())
        .build();
    opentelemetry::global::set_text_map_propagator(
        opentelemetry_sdk::propagation::TraceContextPropagator::new(),
    );
    mcp_resilient::telemetry::Telemetry::new()
        .meter_provider(&meters)
        .tracer_provider(&tracer)
        .install()
        .expect("the only install");
    (meters, tracer)
}
