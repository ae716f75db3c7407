//! Call overhead: `tools/call echo` through `ToolHandle::call` versus a raw rmcp client on the
//! same server and transport, sequential and 16-way concurrent, in alternating rounds so that
//! machine noise hits both sides alike.

use std::{
    process::Stdio,
    sync::Arc,
    time::{Duration, Instant},
};

use mcp_resilient::{Supervisor, ToolHandle, ToolRegistry, config::Heartbeat};
use rmcp::{
    RoleClient, ServiceExt,
    model::{
        CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
    },
    service::{ClientCacheConfig, RunningService},
    transport::{
        StreamableHttpClientTransport, streamable_http_client::StreamableHttpClientTransportConfig,
    },
};
use serde_json::json;
use tokio::process::Command;

use crate::{
    Mode,
    mock::{self, LIMIT, MockProcess, Res, check_echo},
    stats::{Row, Samples},
};

const SECTION: &str = "1. call overhead (tools/call echo)";
const CONCURRENCY: usize = 16;

type Raw = RunningService<RoleClient, ClientConfig>;

#[derive(Clone)]
enum Caller {
    Supervised(ToolHandle),
    Raw(Arc<Raw>),
}

impl Caller {
    async fn call(&self, text: &str) -> Res<()> {
        let result = match self {
            Caller::Supervised(handle) => handle
                .call(json!({ "text": text }))
                .await
                .map_err(|e| format!("supervised echo: {e}"))?,
            Caller::Raw(raw) => {
                let args = json!({ "text": text });
                let params = CallToolRequestParams::new("echo")
                    .with_arguments(args.as_object().cloned().unwrap_or_default());
                tokio::time::timeout(LIMIT, raw.call_tool(params))
                    .await
                    .map_err(|_| "raw echo timed out".to_string())?
                    .map_err(|e| format!("raw echo: {e}"))?
            }
        };
        check_echo(&result, text)
    }
}

fn client_info(version: ProtocolVersion) -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("raw-rmcp-baseline", "0"),
    )
    .with_protocol_version(version)
}

/// The raw baseline's settings match the supervised session's: response cache off.
async fn finish(raw: Raw) -> Arc<Raw> {
    raw.peer()
        .set_response_cache_config(ClientCacheConfig::disabled())
        .await;
    Arc::new(raw)
}

async fn raw_stdio() -> Res<(Arc<Raw>, tokio::process::Child)> {
    let mut child = Command::new(mock::binary())
        .args(["mock-server", "--transport", "stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| e.to_string())?;
    let stdout = child.stdout.take().ok_or("stdout")?;
    let stdin = child.stdin.take().ok_or("stdin")?;
    let raw = tokio::time::timeout(
        LIMIT,
        client_info(ProtocolVersion::LATEST_WITH_INITIALIZE).serve((stdout, stdin)),
    )
    .await
    .map_err(|_| "raw stdio handshake timed out")?
    .map_err(|e| format!("raw stdio handshake: {e}"))?;
    Ok((finish(raw).await, child))
}

async fn raw_http(url: &str) -> Res<Arc<Raw>> {
    let http = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| e.to_string())?;
    let transport = StreamableHttpClientTransport::with_client(
        http,
        StreamableHttpClientTransportConfig::with_uri(url),
    );
    let raw = tokio::time::timeout(
        LIMIT,
        client_info(ProtocolVersion::LATEST_WITH_INITIALIZE).serve(transport),
    )
    .await
    .map_err(|_| "raw http handshake timed out")?
    .map_err(|e| format!("raw http handshake: {e}"))?;
    Ok(finish(raw).await)
}

/// Latency and throughput of one side.
#[derive(Default)]
struct Side {
    seq: Samples,
    seq_tput: Samples,
    conc: Samples,
    conc_tput: Samples,
}

async fn sequential(caller: &Caller, calls: usize, side: &mut Side) {
    let started = Instant::now();
    let mut ok = 0;
    for i in 0..calls {
        let t = Instant::now();
        match caller.call(&format!("s{i}")).await {
            Ok(()) => {
                side.seq.push_ms(t.elapsed());
                ok += 1;
            }
            Err(e) => side.seq.fail(e),
        }
    }
    side.seq_tput
        .push(ok as f64 / started.elapsed().as_secs_f64());
}

async fn concurrent(caller: &Caller, per_worker: usize, side: &mut Side) {
    let started = Instant::now();
    let workers: Vec<_> = (0..CONCURRENCY)
        .map(|w| {
            let caller = caller.clone();
            tokio::spawn(async move {
                let mut out = Vec::with_capacity(per_worker);
                for i in 0..per_worker {
                    let t = Instant::now();
                    out.push(
                        caller
                            .call(&format!("c{w}-{i}"))
                            .await
                            .map(|()| t.elapsed()),
                    );
                }
                out
            })
        })
        .collect();
    let mut ok = 0;
    for worker in workers {
        match worker.await {
            Ok(results) => {
                for r in results {
                    match r {
                        Ok(d) => {
                            side.conc.push_ms(d);
                            ok += 1;
                        }
                        Err(e) => side.conc.fail(e),
                    }
                }
            }
            Err(e) => side.conc.fail(format!("worker panicked: {e}")),
        }
    }
    side.conc_tput
        .push(ok as f64 / started.elapsed().as_secs_f64());
}

/// Runs `rounds` alternating rounds of supervised and raw calls on one transport.
async fn compare(
    transport: &str,
    sup: Caller,
    raw: Option<Caller>,
    mode: Mode,
    rows: &mut Vec<Row>,
) {
    let (rounds, seq, per_worker) = if mode.quick {
        (5, 200, 50)
    } else {
        (15, 400, 100)
    };
    let mut s = Side::default();
    let mut r = Side::default();
    // Warm-up, not measured.
    for i in 0..50 {
        let _ = sup.call(&format!("w{i}")).await;
        if let Some(raw) = &raw {
            let _ = raw.call(&format!("w{i}")).await;
        }
    }
    for round in 0..rounds {
        let order: Vec<(&Caller, bool)> = match (&raw, round % 2) {
            (Some(raw), 0) => vec![(&sup, true), (raw, false)],
            (Some(raw), _) => vec![(raw, false), (&sup, true)],
            (None, _) => vec![(&sup, true)],
        };
        for (caller, supervised) in order {
            let side = if supervised { &mut s } else { &mut r };
            sequential(caller, seq, side).await;
            concurrent(caller, per_worker, side).await;
        }
    }
    push_rows(transport, s, raw.is_some().then_some(r), rows);
}

/// Name, unit, which samples, whether higher is better.
type Figure = (&'static str, &'static str, fn(&Side) -> &Samples, bool);

fn push_rows(transport: &str, s: Side, r: Option<Side>, rows: &mut Vec<Row>) {
    let figures: [Figure; 4] = [
        ("sequential latency", "ms", |x| &x.seq, false),
        ("sequential throughput", "calls/s", |x| &x.seq_tput, true),
        ("16-way latency", "ms", |x| &x.conc, false),
        ("16-way throughput", "calls/s", |x| &x.conc_tput, true),
    ];
    for (name, unit, get, higher_better) in figures {
        let sup = get(&s).clone();
        let Some(raw) = &r else {
            rows.push(
                Row::new(SECTION, format!("{transport} supervised {name}"), unit, sup)
                    .note("no raw rmcp baseline: rmcp has no legacy SSE client"),
            );
            continue;
        };
        let raw = get(raw).clone();
        let ratio = sup.median() / raw.median();
        let met = if higher_better {
            ratio >= 0.95
        } else {
            ratio <= 1.05
        };
        let ratio_note = format!("supervised/raw median = {ratio:.3}");
        rows.push(
            Row::new(SECTION, format!("{transport} supervised {name}"), unit, sup)
                .target("within 5 % of raw", met)
                .note(ratio_note),
        );
        rows.push(Row::new(
            SECTION,
            format!("{transport} raw rmcp {name}"),
            unit,
            raw,
        ));
    }
}

async fn supervised(
    config: mcp_resilient::ServerConfig,
    name: &str,
) -> Res<(Supervisor, ToolRegistry, Caller)> {
    let registry = ToolRegistry::new();
    let server = Supervisor::start(config, registry.clone())
        .await
        .map_err(|e| e.to_string())?;
    server
        .wait_ready(LIMIT)
        .await
        .map_err(|s| format!("{name} not ready: {s}"))?;
    let handle = registry
        .handle(&format!("mcp__{name}__echo"))
        .map_err(|e| e.to_string())?;
    Ok((server, registry, Caller::Supervised(handle)))
}

pub async fn run(mode: Mode, rows: &mut Vec<Row>) -> Res<()> {
    let hb = Heartbeat::default();
    let rc = mock::backoff(Duration::from_millis(500), 0.0);
    // stdio: one mock child each.
    let (server, _registry, sup) =
        supervised(mock::stdio("calls", rc.clone(), hb.clone()), "calls").await?;
    let (raw, child) = raw_stdio().await?;
    compare("stdio", sup, Some(Caller::Raw(raw.clone())), mode, rows).await;
    server.shutdown().await;
    drop(raw);
    drop(child);
    // Streamable HTTP: both clients on the same mock process.
    let mut http = MockProcess::start("http").await?;
    let (server, _registry, sup) = supervised(
        mock::remote("calls", &http, rc.clone(), hb.clone()),
        "calls",
    )
    .await?;
    let raw = raw_http(&http.url()).await?;
    compare("http", sup, Some(Caller::Raw(raw.clone())), mode, rows).await;
    server.shutdown().await;
    drop(raw);
    http.kill().await?;
    // Legacy SSE: supervised only.
    let mut sse = MockProcess::start("sse").await?;
    let (server, _registry, sup) = supervised(mock::remote("calls", &sse, rc, hb), "calls").await?;
    compare("sse", sup, None, mode, rows).await;
    server.shutdown().await;
    sse.kill().await?;
    Ok(())
}
