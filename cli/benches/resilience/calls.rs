//! Call overhead: `tools/call echo` through `ToolHandle::call` versus a raw rmcp client on the
//! same server and transport, sequential and 16-way concurrent, in alternating rounds so that
//! machine noise hits both sides alike. Both sides speak the same protocol era: 2025-11-25
//! (`initialize`) for section 1, 2026-07-28 (`server/discover`, no session) for the era section;
//! the negotiated version of each side and the methods the mock received are checked.

use std::{
    process::Stdio,
    sync::Arc,
    time::{Duration, Instant},
};

use mcp_resilient::{
    Supervisor, ToolHandle, ToolRegistry,
    config::{Heartbeat, ProtocolChoice},
};
use rmcp::{
    RoleClient,
    model::{
        CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
    },
    service::{
        ClientCacheConfig, ClientLifecycleMode, RunningService, serve_client_with_lifecycle,
    },
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

/// Which protocol era one run of this section speaks, and where its rows go.
pub struct Era {
    pub section: &'static str,
    pub protocol: ProtocolChoice,
    /// Whether to measure legacy SSE too (2024-11-05 whatever the choice; supervised only).
    pub sse: bool,
}

impl Era {
    fn modern(&self) -> bool {
        self.protocol == ProtocolChoice::V2026_07_28
    }

    /// The version both sides must negotiate over stdio and Streamable HTTP.
    fn version(&self) -> ProtocolVersion {
        if self.modern() {
            ProtocolVersion::V_2026_07_28
        } else {
            ProtocolVersion::V_2025_11_25
        }
    }

    /// How the raw client opens its session: `initialize`, or `server/discover` (no session).
    fn lifecycle(&self) -> ClientLifecycleMode {
        if self.modern() {
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            }
        } else {
            ClientLifecycleMode::Initialize
        }
    }
}

/// Section 1: the 2025-11-25 era, and legacy SSE.
pub const ERA_2025: Era = Era {
    section: SECTION,
    protocol: mock::PINNED,
    sse: true,
};

pub type Raw = RunningService<RoleClient, ClientConfig>;

/// One side of a comparison: the library's handle, or an rmcp client (a raw baseline, or the
/// stand-in host of the proxy section).
#[derive(Clone)]
pub enum Caller {
    Supervised(ToolHandle),
    Raw(Arc<Raw>),
}

impl Caller {
    pub async fn call(&self, text: &str) -> Res<()> {
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

/// The raw baseline's settings match the supervised session's: response cache off. Checks the
/// version it negotiated.
async fn finish(raw: Raw, era: &Era) -> Res<Arc<Raw>> {
    let negotiated = raw.peer().peer_info().map(|i| i.protocol_version.clone());
    if negotiated.as_ref() != Some(&era.version()) {
        return Err(format!(
            "raw client negotiated {negotiated:?}, wanted {}",
            era.version()
        ));
    }
    raw.peer()
        .set_response_cache_config(ClientCacheConfig::disabled())
        .await;
    Ok(Arc::new(raw))
}

async fn raw_stdio(era: &Era) -> Res<(Arc<Raw>, tokio::process::Child)> {
    raw_child(&["mock-server", "--transport", "stdio"], era).await
}

/// An rmcp client on the stdio of `mcp-resilient <args…>` (the mock server, or the proxy in
/// front of one), handshaken in `era` and checked as [`finish`] does.
pub async fn raw_child(args: &[&str], era: &Era) -> Res<(Arc<Raw>, tokio::process::Child)> {
    let mut child = Command::new(mock::binary())
        .args(args)
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
        serve_client_with_lifecycle(client_info(era.version()), (stdout, stdin), era.lifecycle()),
    )
    .await
    .map_err(|_| "raw stdio handshake timed out")?
    .map_err(|e| format!("raw stdio handshake: {e}"))?;
    Ok((finish(raw, era).await?, child))
}

async fn raw_http(url: &str, era: &Era) -> Res<Arc<Raw>> {
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
        serve_client_with_lifecycle(client_info(era.version()), transport, era.lifecycle()),
    )
    .await
    .map_err(|_| "raw http handshake timed out")?
    .map_err(|e| format!("raw http handshake: {e}"))?;
    finish(raw, era).await
}

/// The methods the raw client's own stdio child received (its `whoami`).
pub async fn raw_methods(raw: &Raw) -> Res<std::collections::BTreeMap<String, u64>> {
    let result = tokio::time::timeout(LIMIT, raw.call_tool(CallToolRequestParams::new("whoami")))
        .await
        .map_err(|_| "raw whoami timed out")?
        .map_err(|e| format!("raw whoami: {e}"))?;
    mcp_mock_server::Whoami::from_result(&result)
        .map(|w| w.methods)
        .ok_or_else(|| "raw whoami: not a whoami result".to_owned())
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
    (section, checked): (&'static str, String),
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
    push_rows(
        section,
        transport,
        &checked,
        s,
        raw.is_some().then_some(r),
        rows,
    );
}

/// Name, unit, which samples, whether higher is better.
type Figure = (&'static str, &'static str, fn(&Side) -> &Samples, bool);

fn push_rows(
    section: &'static str,
    transport: &str,
    checked: &str,
    s: Side,
    r: Option<Side>,
    rows: &mut Vec<Row>,
) {
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
                Row::new(section, format!("{transport} supervised {name}"), unit, sup).note(
                    format!("no raw rmcp baseline: rmcp has no legacy SSE client; {checked}"),
                ),
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
        let ratio_note = format!("supervised/raw median = {ratio:.3}; {checked}");
        rows.push(
            Row::new(section, format!("{transport} supervised {name}"), unit, sup)
                .target("within 5 % of raw", met)
                .note(ratio_note),
        );
        rows.push(Row::new(
            section,
            format!("{transport} raw rmcp {name}"),
            unit,
            raw,
        ));
    }
}

pub async fn supervised(
    config: mcp_resilient::ServerConfig,
    name: &str,
    version: &str,
) -> Res<(Supervisor, ToolRegistry, Caller)> {
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(config, &registry).map_err(|e| e.to_string())?;
    server
        .wait_ready(LIMIT)
        .await
        .map_err(|s| format!("{name} not ready: {s}"))?;
    let negotiated = server.status().protocol().map(str::to_owned);
    if negotiated.as_deref() != Some(version) {
        return Err(format!(
            "{name}: supervisor negotiated {negotiated:?}, wanted {version}"
        ));
    }
    let handle = registry
        .handle(&format!("mcp__{name}__echo"))
        .map_err(|e| e.to_string())?;
    Ok((server, registry, Caller::Supervised(handle)))
}

pub async fn run(mode: Mode, rows: &mut Vec<Row>) -> Res<()> {
    run_era(&ERA_2025, mode, rows).await
}

/// Section 1, or its 2026-07-28 counterpart: stdio, Streamable HTTP and (2025 only) legacy SSE.
/// After the rounds, the methods each mock process received are checked against the era.
pub async fn run_era(era: &Era, mode: Mode, rows: &mut Vec<Row>) -> Res<()> {
    let hb = Heartbeat::default();
    let rc = mock::backoff(Duration::from_millis(500), 0.0);
    let version = era.version();
    let modern = era.modern();
    // stdio: one mock child each.
    let config = mock::stdio("calls", rc.clone(), hb.clone()).protocol(era.protocol);
    let (server, registry, sup) = supervised(config, "calls", version.as_str()).await?;
    let (raw, child) = raw_stdio(era).await?;
    let checked = format!("both sides negotiated {version}");
    compare(
        "stdio",
        sup,
        Some(Caller::Raw(raw.clone())),
        mode,
        (era.section, checked.clone()),
        rows,
    )
    .await;
    mock::check_era(&mock::who(&registry, "calls").await?.methods, modern)
        .map_err(|e| format!("stdio supervised: {e}"))?;
    mock::check_era(&raw_methods(&raw).await?, modern).map_err(|e| format!("stdio raw: {e}"))?;
    server.shutdown().await;
    drop(raw);
    drop(child);
    // Streamable HTTP: both clients on the same mock process.
    let mut http = MockProcess::try_start("http").await?;
    let config = mock::remote("calls", &http, rc.clone(), hb.clone()).protocol(era.protocol);
    let (server, _registry, sup) = supervised(config, "calls", version.as_str()).await?;
    let raw = raw_http(&http.url(), era).await?;
    compare(
        "http",
        sup,
        Some(Caller::Raw(raw.clone())),
        mode,
        (era.section, checked),
        rows,
    )
    .await;
    mock::check_era(&http.try_methods().await?, modern).map_err(|e| format!("http: {e}"))?;
    server.shutdown().await;
    drop(raw);
    http.try_kill().await?;
    if !era.sse {
        return Ok(());
    }
    // Legacy SSE: supervised only.
    let mut sse = MockProcess::try_start("sse").await?;
    let config = mock::remote("calls", &sse, rc, hb);
    let (server, _registry, sup) = supervised(config, "calls", "2024-11-05").await?;
    let checked = "negotiated 2024-11-05".to_owned();
    compare("sse", sup, None, mode, (era.section, checked), rows).await;
    mock::check_era(&sse.try_methods().await?, false).map_err(|e| format!("sse: {e}"))?;
    server.shutdown().await;
    sse.try_kill().await?;
    Ok(())
}
