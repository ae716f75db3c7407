//! The chaos soak: seeded random faults (kill, hang, a wedged child with a full pipe, session
//! expiry, stream drops, partitions through a TCP proxy, 429/503 bursts, a suspect 502, a busy
//! server, list changes) against a stdio, a legacy SSE and a Streamable HTTP mock server, while 8
//! callers call through one shared registry. Checked continuously:
//!
//! - generations only move forward and a new one is ready only after a loss; a loss happens
//!   only under a fault that may end a generation; never two stdio children (a lock file);
//! - every call ends within its deadline with `Ok` or a typed error;
//! - no call fails while its server is healthy;
//! - the registry never holds a partial tool set;
//! - after shutdown, tasks, children and file descriptors are back to their baseline.
//!
//! `cargo test --test soak` runs it for 60 s. `MCP_SOAK_SECS=600` runs the long form,
//! `MCP_SOAK_SEED=N` replays a seed (the seed is printed first, and with every failure).

// The workspace denies `unreachable_pub` for the library's sake; in this test binary `pub` is
// how its modules reach each other, and nothing is an API.
#![allow(unreachable_pub)]

#[path = "../it/common/mod.rs"]
mod common;

mod check;
mod faults;

use std::{sync::Arc, time::Duration};

use common::{fast, init_tracing, stdio_mock};
use mcp_mock_server::MockTransport;
use mcp_resilient::{
    ServerConfig, Supervisor, ToolRegistry,
    config::{Heartbeat, Reconnect, TransportConfig},
};
use tokio_util::sync::CancellationToken;

use check::{Health, Violations};
use faults::{Injector, Remote, Target};

const CALL_TIMEOUT: Duration = Duration::from_secs(2);
const CALL_WAIT: Duration = Duration::from_secs(3);

fn policy(config: ServerConfig) -> ServerConfig {
    let mut config = fast(config)
        .heartbeat(
            Heartbeat::default()
                .interval(Duration::from_millis(600))
                .timeout(Duration::from_millis(400))
                .failures(2),
        )
        .reconnect(
            Reconnect::default()
                .initial_delay(Duration::from_millis(50))
                .max_delay(Duration::from_millis(500))
                .max_attempts(1000),
        )
        .call_timeout(CALL_TIMEOUT)
        .call_wait(CALL_WAIT)
        .connect_timeout(Duration::from_secs(5));
    config = match config.transport() {
        TransportConfig::Stdio(_) => config
            .stdin_close_grace(Duration::from_millis(200))
            .term_grace(Duration::from_millis(200))
            .close_timeout(Duration::from_secs(3)),
        TransportConfig::Remote(_) => config.close_timeout(Duration::from_secs(8)),
    };
    config
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

#[test]
fn chaos_soak() {
    let secs: u64 = std::env::var("MCP_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let seed: u64 = std::env::var("MCP_SOAK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rand::random::<u32>() as u64);
    eprintln!("chaos soak: {secs} s, seed {seed} (replay with MCP_SOAK_SEED={seed})");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let report = runtime.block_on(soak(Duration::from_secs(secs), seed));
    runtime.shutdown_timeout(Duration::from_secs(5));
    eprintln!("{}", report.summary);
    assert!(
        report.violations.is_empty(),
        "seed {seed}: {} violations:\n{}",
        report.violations.len(),
        report.violations.join("\n")
    );
}

struct Report {
    summary: String,
    violations: Vec<String>,
}

async fn soak(length: Duration, seed: u64) -> Report {
    init_tracing();
    let metrics = tokio::runtime::Handle::current().metrics();
    warm_up().await;
    let (tasks_before, fds_before) = (metrics.num_alive_tasks(), open_fds());
    let violations = Arc::new(Violations::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let lock = dir.path().join("lock").to_string_lossy().into_owned();
    let registry = ToolRegistry::new();
    let sse = Remote::start(MockTransport::Sse).await;
    let http = Remote::start(MockTransport::Http).await;
    let configs = [
        policy(stdio_mock("stdio", &["--lock-file", &lock])),
        policy(ServerConfig::sse("sse", sse.proxy.url("/sse"))),
        policy(ServerConfig::http("http", http.proxy.url("/mcp"))),
    ];
    let stop = CancellationToken::new();
    let mut injectors = Vec::new();
    let mut watchers = Vec::new();
    let mut healths = Vec::new();
    for (i, (config, target)) in configs
        .into_iter()
        .zip([Target::Stdio, Target::Remote(sse), Target::Remote(http)])
        .enumerate()
    {
        let name = config.name().to_owned();
        let server = Arc::new(Supervisor::spawn(config, &registry).expect("start"));
        server
            .wait_ready(common::LIMIT)
            .await
            .unwrap_or_else(|s| panic!("seed {seed}: {name} not ready: {s}"));
        let health = Arc::new(Health::default());
        watchers.push(tokio::spawn(check::watch_generations(
            name.clone(),
            server.events(),
            health.clone(),
            violations.clone(),
            stop.clone(),
        )));
        healths.push((name.clone(), health.clone()));
        let injector = Injector::new(
            &name,
            target,
            server,
            registry.clone(),
            health,
            violations.clone(),
            seed.wrapping_add(i as u64 * 7919),
        );
        injectors.push(injector);
    }
    let supervisors: Vec<Arc<Supervisor>> = injectors.iter().map(|i| i.server.clone()).collect();
    let deadline = CALL_WAIT + CALL_TIMEOUT + Duration::from_secs(2);
    let callers: Vec<_> = (0..8)
        .map(|id| {
            tokio::spawn(check::caller(
                id,
                healths.clone(),
                registry.clone(),
                deadline,
                violations.clone(),
                stop.clone(),
                seed.wrapping_add(1000 + id as u64),
            ))
        })
        .collect();
    let reader = tokio::spawn(check::watch_registry(
        registry.clone(),
        violations.clone(),
        stop.clone(),
    ));
    let running: Vec<_> = injectors
        .into_iter()
        .map(|injector| tokio::spawn(injector.run(stop.clone())))
        .collect();
    tokio::time::sleep(length).await;
    stop.cancel();
    let mut injectors = Vec::new();
    for task in running {
        injectors.push(task.await.expect("injector"));
    }
    let (mut ok, mut failed) = (0, 0);
    for caller in callers {
        let (o, f) = caller.await.expect("caller");
        ok += o;
        failed += f;
    }
    let looks = reader.await.expect("reader");
    for watcher in watchers {
        watcher.await.expect("watcher");
    }
    if dir.path().join("lock.overlap").exists() {
        violations.add("two stdio children were alive at once".into());
    }
    let summary = teardown(injectors, supervisors, ok, failed, looks, &violations).await;
    back_to_baseline(&metrics, tasks_before, fds_before, &violations).await;
    Report {
        summary,
        violations: violations.all(),
    }
}

/// The process-wide HTTP client of `Supervisor::start` keeps one task for its connection pool
/// (hyper's idle-connection reaper) for as long as the process lives. Start it before the
/// baseline is taken: it is not left behind by any server.
async fn warm_up() {
    let mock = mcp_mock_server::MockServer::start(mcp_mock_server::MockOptions::default())
        .await
        .expect("mock");
    let server = Supervisor::spawn(
        policy(ServerConfig::http("warm", mock.http_url())),
        &ToolRegistry::new(),
    )
    .expect("start");
    let _ = server.wait_ready(common::LIMIT).await;
    server.shutdown().await;
    mock.shutdown().await;
}

/// Shuts everything down and says what was injected.
async fn teardown(
    injectors: Vec<Injector>,
    supervisors: Vec<Arc<Supervisor>>,
    ok: u64,
    failed: u64,
    looks: u64,
    violations: &Violations,
) -> String {
    for server in &supervisors {
        server.shutdown().await;
    }
    drop(supervisors);
    let mut summary = format!(
        "calls: {ok} ok, {failed} failed (all failures inside fault windows); registry checked {looks} times\nfaults injected:"
    );
    let mut total = 0;
    for injector in injectors {
        for pid in &injector.pids {
            if common::alive(*pid) {
                violations.add(format!("{}: child {pid} still alive", injector.name));
            }
        }
        let counts: Vec<String> = injector
            .counts
            .iter()
            .map(|(fault, n)| format!("{fault:?} {n}"))
            .collect();
        total += injector.counts.values().sum::<u64>();
        summary.push_str(&format!("\n  {}: {}", injector.name, counts.join(", ")));
        if let Target::Remote(remote) = injector.target {
            remote.shutdown().await;
        }
    }
    summary.push_str(&format!(
        "\n  total {total}; violations {}",
        violations.all().len()
    ));
    summary
}

/// Waits (bounded) until tasks and file descriptors are back to where they were.
async fn back_to_baseline(
    metrics: &tokio::runtime::RuntimeMetrics,
    tasks_before: usize,
    fds_before: usize,
    violations: &Violations,
) {
    let settled = async {
        while metrics.num_alive_tasks() > tasks_before || open_fds() > fds_before {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    if tokio::time::timeout(Duration::from_secs(15), settled)
        .await
        .is_err()
    {
        violations.add(format!(
            "after shutdown: {} tasks (baseline {tasks_before}), {} fds (baseline {fds_before})",
            metrics.num_alive_tasks(),
            open_fds()
        ));
    }
}
