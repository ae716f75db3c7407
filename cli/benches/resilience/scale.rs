//! Section 13, scale: what many idle supervised connections of one mock process cost the client,
//! next to a floor measured in the same run (issue 16).
//!
//! Every figure comes from a child process (this benchmark binary re-run with `--scale-child`),
//! so CPU time (`/proc/self/stat`) and resident memory are the client's alone; the mock is
//! another process. Three kinds of connection: Streamable HTTP pinned to 2025-11-25 (a session,
//! `ping` probes, the standalone `GET` stream), Streamable HTTP pinned to 2026-07-28 (no
//! session, `server/discover` probes, the `subscriptions/listen` stream) and legacy SSE. Stdio
//! is left out: N idle stdio connections are N child processes, whose cost is the children's.
//!
//! - **probe**: N = 1,000 supervisors with a 1 s heartbeat; client CPU over the window divided
//!   by the probes the mock logged in it.
//! - **floor**: in the same run and on the same mock, N kept-alive connections of one reqwest
//!   client, each sending the probe's exact bytes (the JSON-RPC body rmcp serializes, the
//!   headers a probe carried, read from the mock's log) once a second and reading the answer
//!   (legacy SSE: the `POST` and the answer's bytes on the stream, unparsed). CPU per `POST`.
//! - **instructions** (when `valgrind` is installed): the same two, 10 connections under
//!   `valgrind --tool=callgrind`, each run twice with a different number of probes (`POST`s);
//!   per probe = (I₂ − I₁) / (P₂ − P₁), so start-up and the handshakes cancel out.
//! - **idle**: N = 10,000 (quick: 2,000) supervisors with the default heartbeat (30 s) and
//!   backoff: started until all ready, resident memory per connection after a 5 s settle, CPU
//!   over a window of two heartbeat intervals (quick: one) that opens once every session's
//!   stability mark (the default stability window after its ready) is behind it, then the mock
//!   is SIGKILLed and restarted on its port: until all are ready on a new generation, failures, and the peak
//!   attempts per 100 ms (client events: the scheduled times of attempts, which the origin watch
//!   may bring forward and its budget hold back; and the new server's log: requests that start
//!   an attempt, `support::starts_attempt`).
//!
//! The idle window runs twice, first with the earlier path (`HeartbeatScope::Session`: each
//! session probes for itself; no restart), then with the default (`HeartbeatScope::Origin`: one
//! probe per origin per interval, and each session's own every 20 intervals). The probe and
//! instruction rows keep each session probing for itself: they are the cost of one probe.
//!
//! `MCP_SCALE_N` sets N of the idle rows, `MCP_SCALE_KINDS` (e.g. `HTTP-2025,legacy-SSE`) picks
//! kinds, `MCP_SCALE_HEARTBEAT=off` turns the idle rows' probes off (what idleness costs
//! without them), `MCP_SCALE_HTTP2=prior-knowledge` puts Streamable HTTP on HTTP/2 (h2c),
//! `MCP_SCALE_H2_MAX_STREAMS=N` has the idle rows' mock allow N streams per HTTP/2 connection
//! (hyper's 200 without it; the client opens a connection per N sessions, within its descriptor
//! budget: half its `RLIMIT_NOFILE` after 256, at most 1,024 per origin, so 100,000 sessions
//! need N >= 98 and, at N = 100, 1,000 connections, within 20,000 descriptors),
//! `MCP_SCALE_CALLGRIND_KEEP=DIR` keeps every callgrind profile in DIR. The
//! parent raises its own `RLIMIT_NOFILE` (children inherit it): 10,000 idle connections hold a
//! stream each, and their requests share a pool of kept-alive connections; the bench asks for
//! 16,000 descriptors in the client and as many in the mock (12,500 fit under 20,000).

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use mcp_resilient::{
    Supervisor, ToolRegistry,
    config::{Heartbeat, HeartbeatScope, Http2, ProtocolChoice, Reconnect},
};
use serde_json::{Value, json};

use crate::{
    Mode,
    idle::{clk_tck, cpu_ticks, rss_kib},
    mock::{self, LIMIT, MockProcess, Res},
    stats::{Row, Samples},
    storm,
};

const SECTION: &str = "13. scale (idle supervised connections of one mock)";

/// One kind of connection.
#[derive(Debug, Clone, Copy)]
struct Kind {
    name: &'static str,
    transport: &'static str,
    protocol: ProtocolChoice,
    /// The JSON-RPC method of its probe.
    probe: &'static str,
}

const KINDS: [Kind; 3] = [
    Kind {
        name: "HTTP 2025",
        transport: "http",
        protocol: ProtocolChoice::V2025_11_25,
        probe: "ping",
    },
    Kind {
        name: "HTTP 2026",
        transport: "http",
        protocol: ProtocolChoice::V2026_07_28,
        probe: "server/discover",
    },
    Kind {
        name: "legacy SSE",
        transport: "sse",
        protocol: ProtocolChoice::V2025_11_25,
        probe: "ping",
    },
];

fn kind(name: &str) -> Res<Kind> {
    KINDS
        .into_iter()
        .find(|k| k.name.replace(' ', "-") == name)
        .ok_or_else(|| format!("no kind {name}"))
}

fn arg(kind: &Kind) -> String {
    kind.name.replace(' ', "-")
}

/// Connections in the probe and floor windows.
const PROBE_N: usize = 1000;
/// Connections under callgrind, and the two amounts of probes (or POSTs) per run.
const COST_N: usize = 10;
const COST_AMOUNTS: [u64; 2] = [100, 400];

/// The descriptors the largest run needs, with room for the mock's and the runtime's own.
const NOFILE: u64 = 65_536;

/// Raises this process's soft and hard `RLIMIT_NOFILE` to [`NOFILE`] where it can (the hard
/// limit only as root). Returns the soft limit in force.
pub fn raise_nofile() -> u64 {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return 0;
    };
    if soft >= NOFILE {
        return soft;
    }
    if hard < NOFILE && setrlimit(Resource::RLIMIT_NOFILE, NOFILE, NOFILE).is_ok() {
        return NOFILE;
    }
    let want = NOFILE.min(hard);
    match setrlimit(Resource::RLIMIT_NOFILE, want, hard) {
        Ok(()) => want,
        Err(_) => soft,
    }
}

fn config(
    kind: &Kind,
    name: &str,
    mock: &MockProcess,
    heartbeat: Heartbeat,
) -> mcp_resilient::ServerConfig {
    let config = mock::remote(name, mock, Reconnect::default(), heartbeat).protocol(kind.protocol);
    // MCP_SCALE_HTTP2=prior-knowledge: Streamable HTTP on the origin's shared HTTP/2
    // connections (h2c to the mock) instead of HTTP/1.1.
    match std::env::var("MCP_SCALE_HTTP2").map(|mode| mode.parse::<Http2>()) {
        Ok(Ok(mode)) => config.http2(mode),
        _ => config,
    }
}

/// Starts `n` supervisors of `mock`; returns them once all are ready, and how long that took.
async fn start_all(
    kind: &Kind,
    mock: &MockProcess,
    n: usize,
    heartbeat: Heartbeat,
) -> Res<(Vec<Supervisor>, Vec<u64>, Duration)> {
    let registry = ToolRegistry::new();
    let started = Instant::now();
    let mut servers = Vec::with_capacity(n);
    for i in 0..n {
        let config = config(kind, &format!("s{i}"), mock, heartbeat.clone());
        servers.push(Supervisor::spawn(config, &registry).map_err(|e| e.to_string())?);
    }
    // 120 s per 25,000 sessions: at 100,000 the start is CPU-bound on two cores shared with
    // the mock (about 0.5 ms of client CPU and 0.4 ms of the mock's per session).
    let limit = LIMIT * 4 * u32::try_from(n.div_ceil(25_000)).unwrap_or(u32::MAX).max(1);
    let ready = futures::future::join_all(servers.iter().map(|s| s.wait_ready(limit))).await;
    let took = started.elapsed();
    let failed = ready.iter().filter(|r| r.is_err()).count();
    if failed > 0 {
        return Err(format!("{failed} of {n} not ready within {limit:?}"));
    }
    let generations = ready
        .into_iter()
        .map(|r| r.map(u64::from).unwrap_or(0))
        .collect();
    Ok((servers, generations, took))
}

/// The probes in a request log.
fn probes(kind: &Kind, requests: &[Value]) -> usize {
    requests
        .iter()
        .filter(|r| r["rpc_methods"] == json!([kind.probe]))
        .count()
}

/// How many `kind.probe` requests the mock has received since it started.
async fn probe_count(kind: &Kind, mock: &MockProcess) -> Res<u64> {
    Ok(mock
        .try_methods()
        .await?
        .get(kind.probe)
        .copied()
        .unwrap_or(0))
}

/// `--scale-child probe KIND PORT N WINDOW_MS`: client CPU per probe at a 1 s heartbeat.
async fn child_probe(kind: Kind, mock: MockProcess, n: usize, window: Duration) -> Res<Value> {
    // Each session probes for itself: this row is the cost of one probe.
    let heartbeat = Heartbeat::every(Duration::from_secs(1)).scope(HeartbeatScope::Session);
    let (servers, generations, _) = start_all(&kind, &mock, n, heartbeat).await?;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    mock.try_clear_requests().await?;
    let (cpu0, t0) = (cpu_ticks(), Instant::now());
    tokio::time::sleep(window).await;
    let (cpu1, elapsed) = (cpu_ticks(), t0.elapsed());
    let requests = mock.try_requests().await?;
    let still = same_generation(&servers, &generations);
    Ok(json!({
        "cpu_s": (cpu1 - cpu0) as f64 / clk_tck(),
        "window_s": elapsed.as_secs_f64(),
        "probes": probes(&kind, &requests),
        "still": still,
        "protocols": protocols(&servers),
    }))
}

fn same_generation(servers: &[Supervisor], generations: &[u64]) -> usize {
    servers
        .iter()
        .zip(generations)
        .filter(|(s, g)| s.status().ready().map(u64::from) == Some(**g))
        .count()
}

fn protocols(servers: &[Supervisor]) -> Vec<String> {
    let set: std::collections::BTreeSet<String> = servers
        .iter()
        .filter_map(|s| s.status().protocol().map(str::to_owned))
        .collect();
    set.into_iter().collect()
}

/// One connection of the floor: where its probes go and the headers they carry.
#[derive(Clone)]
struct Bare {
    url: String,
    headers: reqwest::header::HeaderMap,
    /// A probe's body, byte for byte (its id included).
    body: bytes::Bytes,
}

/// The headers one probe carried (from the mock's log), less those a connection sets itself.
fn probe_headers(logged: &Value) -> reqwest::header::HeaderMap {
    let mut headers = reqwest::header::HeaderMap::new();
    if let Some(map) = logged.as_object() {
        for (name, value) in map {
            if ["host", "content-length", "mcp-session-id"].contains(&name.as_str()) {
                continue;
            }
            if let (Ok(name), Ok(value)) = (
                reqwest::header::HeaderName::from_bytes(name.as_bytes()),
                reqwest::header::HeaderValue::from_str(value.as_str().unwrap_or("")),
            ) {
                headers.insert(name, value);
            }
        }
    }
    headers
}

/// Opens one floor connection: a session by hand for HTTP 2025 (`initialize`, `initialized`),
/// the stream and its `endpoint` for legacy SSE (the stream is then drained by a task, as the
/// answers arrive on it), nothing for HTTP 2026.
async fn open_bare(
    kind: &Kind,
    http: &reqwest::Client,
    mock: &MockProcess,
    headers: &reqwest::header::HeaderMap,
    body: &bytes::Bytes,
) -> Res<Bare> {
    let url = mock.url();
    let body = body.clone();
    match (kind.transport, kind.probe) {
        ("sse", _) => {
            let mut response = http.get(&url).send().await.map_err(|e| e.to_string())?;
            let mut seen = String::new();
            let endpoint = loop {
                let chunk = response
                    .chunk()
                    .await
                    .map_err(|e| e.to_string())?
                    .ok_or("stream ended before its endpoint")?;
                seen.push_str(&String::from_utf8_lossy(&chunk));
                if let Some(line) = seen
                    .lines()
                    .find_map(|l| l.strip_prefix("data:").map(str::trim).map(str::to_owned))
                    .filter(|_| seen.contains("\n\n"))
                {
                    break line;
                }
            };
            tokio::spawn(async move { while let Ok(Some(_)) = response.chunk().await {} });
            Ok(Bare {
                url: format!("http://127.0.0.1:{}{endpoint}", mock.port),
                headers: headers.clone(),
                body,
            })
        }
        (_, "ping") => {
            let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "floor", "version": "0"}}});
            let response = http
                .post(&url)
                .headers(headers.clone())
                .json(&init)
                .send()
                .await
                .map_err(|e| e.to_string())?;
            let session = response
                .headers()
                .get("mcp-session-id")
                .cloned()
                .ok_or("initialize answered without a session")?;
            response.bytes().await.map_err(|e| e.to_string())?;
            let mut headers = headers.clone();
            headers.insert("mcp-session-id", session);
            let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            http.post(&url)
                .headers(headers.clone())
                .json(&note)
                .send()
                .await
                .map_err(|e| e.to_string())?
                .bytes()
                .await
                .map_err(|e| e.to_string())?;
            Ok(Bare { url, headers, body })
        }
        _ => Ok(Bare {
            url,
            headers: headers.clone(),
            body,
        }),
    }
}

async fn bare_post(http: &reqwest::Client, bare: &Bare) -> bool {
    let sent = http
        .post(&bare.url)
        .headers(bare.headers.clone())
        .body(bare.body.clone())
        .send()
        .await;
    match sent {
        Ok(response) => {
            let ok = response.status().is_success();
            response.bytes().await.is_ok() && ok
        }
        Err(_) => false,
    }
}

async fn open_floor(
    kind: &Kind,
    mock: &MockProcess,
    n: usize,
    logged: &Value,
) -> Res<(reqwest::Client, Vec<Bare>)> {
    let http = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| e.to_string())?;
    let headers = probe_headers(&logged["headers"]);
    let body = bytes::Bytes::from(logged["body"].as_str().unwrap_or("").to_owned());
    if body.is_empty() {
        return Err("the logged probe has no body".into());
    }
    let mut bares = Vec::with_capacity(n);
    for _ in 0..n {
        bares.push(open_bare(kind, &http, mock, &headers, &body).await?);
    }
    Ok((http, bares))
}

/// `--scale-child floor KIND PORT N WINDOW_MS HEADERS`: client CPU per bare `POST` of a
/// probe's bytes, each of N connections once a second, phases spread over the second.
async fn child_floor(
    kind: Kind,
    mock: MockProcess,
    n: usize,
    window: Duration,
    headers: Value,
) -> Res<Value> {
    let (http, bares) = open_floor(&kind, &mock, n, &headers).await?;
    let (posts, errors) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let mut tasks = Vec::with_capacity(n);
    for (i, bare) in bares.into_iter().enumerate() {
        let (http, posts, errors) = (http.clone(), posts.clone(), errors.clone());
        let phase = Duration::from_secs(1) * i as u32 / n as u32;
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep(phase).await;
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let counter = match bare_post(&http, &bare).await {
                    true => &posts,
                    false => &errors,
                };
                counter.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (cpu0, t0, p0, e0) = (
        cpu_ticks(),
        Instant::now(),
        posts.load(Ordering::Relaxed),
        errors.load(Ordering::Relaxed),
    );
    tokio::time::sleep(window).await;
    let (cpu1, elapsed) = (cpu_ticks(), t0.elapsed());
    let (p1, e1) = (
        posts.load(Ordering::Relaxed),
        errors.load(Ordering::Relaxed),
    );
    tasks.iter().for_each(tokio::task::JoinHandle::abort);
    Ok(json!({
        "cpu_s": (cpu1 - cpu0) as f64 / clk_tck(),
        "window_s": elapsed.as_secs_f64(),
        "posts": p1 - p0,
        "errors": e1 - e0,
    }))
}

/// `--scale-child cost-probe KIND PORT N AMOUNT`: under callgrind, N supervisors probing every
/// 300 ms until the mock has answered AMOUNT probes since all were ready. Prints the mock's
/// probe count at ready first.
async fn child_cost_probe(kind: Kind, mock: MockProcess, n: usize, amount: u64) -> Res<Value> {
    let heartbeat = Heartbeat::default()
        .scope(HeartbeatScope::Session)
        .interval(Duration::from_millis(300))
        .timeout(Duration::from_millis(290))
        .failures(5);
    let (_servers, _, _) = start_all(&kind, &mock, n, heartbeat).await?;
    let baseline = probe_count(&kind, &mock).await?;
    println!("{}", json!({ "baseline": baseline }));
    let deadline = Instant::now() + LIMIT * 10;
    while probe_count(&kind, &mock).await? < baseline + amount {
        if Instant::now() > deadline {
            return Err("probes too slow under callgrind".into());
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    Ok(json!({ "baseline": baseline }))
}

/// `--scale-child cost-floor KIND PORT N AMOUNT HEADERS`: under callgrind, AMOUNT bare `POST`s
/// over N kept-alive connections, each connection's one after the other.
async fn child_cost_floor(
    kind: Kind,
    mock: MockProcess,
    n: usize,
    amount: u64,
    headers: Value,
) -> Res<Value> {
    let (http, bares) = open_floor(&kind, &mock, n, &headers).await?;
    let per = amount / n as u64;
    let runs = bares.into_iter().map(|bare| {
        let http = http.clone();
        async move {
            let mut ok = 0u64;
            for _ in 0..per {
                ok += u64::from(bare_post(&http, &bare).await);
            }
            ok
        }
    });
    let ok: u64 = futures::future::join_all(runs).await.into_iter().sum();
    Ok(json!({ "posts": ok, "wanted": per * n as u64 }))
}

/// The idle rows' mock's flags: `MCP_SCALE_H2_MAX_STREAMS=N` gives `--h2-max-streams N` (the
/// `SETTINGS_MAX_CONCURRENT_STREAMS` of its HTTP/2 connections; hyper's 200 without it). Kept
/// for the restart too.
fn mock_flags() -> Res<Vec<&'static str>> {
    match std::env::var("MCP_SCALE_H2_MAX_STREAMS") {
        Ok(n) => {
            let n: u32 = n
                .parse()
                .map_err(|e| format!("MCP_SCALE_H2_MAX_STREAMS={n}: {e}"))?;
            // Once per child: the mock's flags outlive it.
            Ok(vec!["--h2-max-streams", n.to_string().leak()])
        }
        Err(_) => Ok(Vec::new()),
    }
}

/// `--scale-child idle KIND N WINDOW_MS [SCOPE]`: N supervisors at the default heartbeat and
/// backoff of a mock this child starts, their heartbeat in `SCOPE` (`origin`, the default, or
/// `session`, the earlier path); then, in the `origin` scope, the mock is killed and restarted.
async fn child_idle(kind: Kind, n: usize, window: Duration, scope: HeartbeatScope) -> Res<Value> {
    let mut mock = MockProcess::try_start_with(kind.transport, &mock_flags()?).await?;
    let (rss0, cpu0) = (rss_kib(), cpu_ticks());
    // MCP_SCALE_HEARTBEAT=off: no probes at all, for what idleness costs without them.
    let heartbeat = match std::env::var("MCP_SCALE_HEARTBEAT").as_deref() {
        Ok("off") => Heartbeat::disabled(),
        _ => Heartbeat::default().scope(scope),
    };
    let (servers, generations, took) = start_all(&kind, &mock, n, heartbeat).await?;
    let start_cpu = (cpu_ticks() - cpu0) as f64 / clk_tck();
    let settled = Duration::from_secs(5);
    tokio::time::sleep(settled).await;
    let rss1 = rss_kib();
    // The CPU window is steady idleness: it opens once every session's one stability mark
    // (the default stability window, `max_delay`, after its ready) is behind it.
    let stable = Reconnect::default().get_max_delay() + Duration::from_secs(1);
    tokio::time::sleep(stable.saturating_sub(settled)).await;
    mock.try_clear_requests().await?;
    let (cpu1, t1) = (cpu_ticks(), Instant::now());
    tokio::time::sleep(window).await;
    let (cpu2, elapsed) = (cpu_ticks(), t1.elapsed());
    let probes = probes(&kind, &mock.try_requests().await?);
    let still = same_generation(&servers, &generations);
    let protocols = protocols(&servers);
    let mut out = json!({
        "n": n,
        "ready_s": took.as_secs_f64(),
        "start_cpu_s": start_cpu,
        "rss_kib": rss1.saturating_sub(rss0),
        "cpu_s": (cpu2 - cpu1) as f64 / clk_tck(),
        "window_s": elapsed.as_secs_f64(),
        "probes": probes,
        "still": still,
        "protocols": protocols,
    });
    // scripts/scale-heap.sh wants the idle heap only; the earlier path only its heartbeat.
    if std::env::var_os("MCP_SCALE_NO_RESTART").is_some() || scope == HeartbeatScope::Session {
        return Ok(out);
    }
    // The restart: every connection loses its server at once.
    let followers: Vec<_> = servers
        .iter()
        .zip(&generations)
        .map(|(s, g)| storm::follow(s, *g))
        .collect();
    let followers = futures::future::join_all(followers);
    let restarted = async {
        mock.try_kill().await?;
        let at = Instant::now();
        mock.try_restart().await?;
        Ok::<_, String>(at)
    };
    let (outcomes, killed) = tokio::join!(followers, restarted);
    let killed = killed?;
    let mut attempts = Vec::new();
    let (mut failed, mut not_recovered, mut last_ready) = (0, 0, killed);
    for (times, ready, state) in outcomes {
        attempts.extend(times);
        match ready {
            Some(at) => last_ready = last_ready.max(at),
            None if matches!(state, mcp_resilient::ConnectionState::Failed { .. }) => failed += 1,
            None => not_recovered += 1,
        }
    }
    let opens: Vec<u64> = mock
        .try_requests()
        .await?
        .iter()
        .filter(|r| crate::support::starts_attempt(kind.transport, r))
        .filter_map(|r| r["at_us"].as_u64())
        .collect();
    let restart = json!({
        "restart_all_ready_s": (last_ready - killed).as_secs_f64(),
        "failed": failed,
        "not_recovered": not_recovered,
        "peak_client": storm::peak(attempts),
        "peak_server": storm::peak(opens),
    });
    if let (Some(out), Value::Object(restart)) = (out.as_object_mut(), restart) {
        out.extend(restart);
    }
    Ok(out)
}

/// The child's entry: `--scale-child MODE KIND ...`. Prints one JSON line last.
pub async fn child(args: &[String]) -> Res<()> {
    let (mode, rest) = args.split_first().ok_or("scale child: no mode")?;
    let kind = kind(rest.first().ok_or("scale child: no kind")?)?;
    let num = |i: usize| -> Res<u64> {
        rest.get(i)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("scale child: argument {i} of {rest:?}"))
    };
    let headers = || -> Res<Value> {
        serde_json::from_str(rest.get(4).ok_or("no headers")?).map_err(|e| e.to_string())
    };
    let attach = || -> Res<MockProcess> { Ok(MockProcess::attach(kind.transport, num(1)? as u16)) };
    let out = match mode.as_str() {
        "probe" => {
            child_probe(
                kind,
                attach()?,
                num(2)? as usize,
                Duration::from_millis(num(3)?),
            )
            .await?
        }
        "floor" => {
            child_floor(
                kind,
                attach()?,
                num(2)? as usize,
                Duration::from_millis(num(3)?),
                headers()?,
            )
            .await?
        }
        "cost-probe" => child_cost_probe(kind, attach()?, num(2)? as usize, num(3)?).await?,
        "cost-floor" => {
            child_cost_floor(kind, attach()?, num(2)? as usize, num(3)?, headers()?).await?
        }
        "idle" => {
            let scope = match rest.get(3).map(String::as_str) {
                Some("session") => HeartbeatScope::Session,
                _ => HeartbeatScope::Origin,
            };
            let window = Duration::from_millis(num(2)?);
            child_idle(kind, num(1)? as usize, window, scope).await?
        }
        other => return Err(format!("scale child: no mode {other}")),
    };
    println!("{out}");
    Ok(())
}

/// Runs a child (under `valgrind --tool=callgrind` with `callgrind`): its last JSON line, and
/// the instructions callgrind collected.
async fn run_child(args: &[String], limit: Duration, callgrind: bool) -> Res<(Value, Option<u64>)> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut command = if callgrind {
        let mut c = tokio::process::Command::new("valgrind");
        // `MCP_SCALE_CALLGRIND_KEEP=DIR` keeps each run's profile there, named for its
        // arguments (for `callgrind_annotate`); otherwise one temporary file is reused.
        let out = match std::env::var_os("MCP_SCALE_CALLGRIND_KEEP") {
            Some(dir) => std::path::PathBuf::from(dir).join(format!(
                "scale-{}.callgrind",
                args.iter()
                    .filter(|a| !a.starts_with('{'))
                    .map(|a| a.replace(['/', ' '], "_"))
                    .collect::<Vec<_>>()
                    .join("-")
            )),
            None => std::env::temp_dir().join(format!("scale-callgrind.{}", std::process::id())),
        };
        c.arg("--tool=callgrind")
            .arg(format!("--callgrind-out-file={}", out.display()))
            .arg(&exe);
        c
    } else {
        tokio::process::Command::new(&exe)
    };
    command.arg("--scale-child").args(args).kill_on_drop(true);
    let output = tokio::time::timeout(limit, command.output())
        .await
        .map_err(|_| format!("scale child {args:?} timed out"))?
        .map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .ok_or_else(|| {
            format!(
                "scale child {args:?} failed: {}",
                stderr
                    .lines()
                    .rev()
                    .find(|l| l.starts_with("scale child:"))
                    .or_else(|| stderr.lines().rev().find(|l| !l.trim().is_empty()))
                    .unwrap_or("")
            )
        })?;
    let value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let collected = stderr
        .lines()
        .find_map(|l| l.split("Collected :").nth(1))
        .and_then(|n| n.trim().parse().ok());
    Ok((value, collected))
}

fn has_valgrind() -> bool {
    std::process::Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Per-unit CPU in µs from a child's `cpu_s` over `count`.
fn per_unit_us(v: &Value, count: &str) -> Option<f64> {
    let (cpu, n) = (v["cpu_s"].as_f64()?, v[count].as_f64()?);
    (n > 0.0).then(|| cpu * 1e6 / n)
}

fn failed_row(name: String, unit: &'static str, why: String) -> Row {
    let mut s = Samples::default();
    s.fail(why);
    Row::new(SECTION, name, unit, s)
}

fn one(name: String, unit: &'static str, value: f64) -> Row {
    let mut s = Samples::default();
    s.push(value);
    Row::new(SECTION, name, unit, s)
}

/// Probe and floor CPU, and their instructions under callgrind, for one kind.
async fn probe_and_floor(kind: &Kind, window: Duration, rows: &mut Vec<Row>) -> Res<()> {
    let mut mock = MockProcess::try_start(kind.transport).await?;
    let port = mock.port.to_string();
    let k = arg(kind);
    let limit = LIMIT * 4 + window;
    let ms = window.as_millis().to_string();
    let (probe, _) = run_child(
        &[
            "probe".into(),
            k.clone(),
            port.clone(),
            PROBE_N.to_string(),
            ms.clone(),
        ],
        limit,
        false,
    )
    .await?;
    // One of the probes just sent, headers and body, for the floor's requests.
    let logged = mock.try_requests().await?;
    let headers = logged
        .iter()
        .find(|r| r["rpc_methods"] == json!([kind.probe]))
        .map(|r| json!({ "headers": r["headers"], "body": r["body"] }))
        .ok_or("no probe in the log")?;
    let headers = headers.to_string();
    let (floor, _) = run_child(
        &[
            "floor".into(),
            k.clone(),
            port.clone(),
            PROBE_N.to_string(),
            ms,
            headers.clone(),
        ],
        limit,
        false,
    )
    .await?;
    let probe_us = per_unit_us(&probe, "probes");
    let floor_us = per_unit_us(&floor, "posts");
    let still = probe["still"].as_u64().unwrap_or(0);
    let name = |what: &str| format!("{}: {what}", kind.name);
    match probe_us {
        Some(us) if still == PROBE_N as u64 => rows.push(
            one(
                name("client CPU per probe (N=1000, 1 s heartbeat)"),
                "µs",
                us,
            )
            .note(format!(
                "{} probes in {:.1} s, {}",
                probe["probes"],
                probe["window_s"].as_f64().unwrap_or(0.0),
                probe["protocols"]
            )),
        ),
        _ => rows.push(failed_row(
            name("client CPU per probe (N=1000, 1 s heartbeat)"),
            "µs",
            format!("{probe}"),
        )),
    }
    match floor_us {
        Some(us) if floor["errors"] == json!(0) => rows.push(
            one(
                name("floor: CPU per bare reqwest POST of the probe's bytes"),
                "µs",
                us,
            )
            .note(format!("{} POSTs, same N and rate", floor["posts"])),
        ),
        _ => rows.push(failed_row(
            name("floor: CPU per bare reqwest POST of the probe's bytes"),
            "µs",
            format!("{floor}"),
        )),
    }
    if let (Some(p), Some(f)) = (probe_us, floor_us) {
        let ratio = p / f;
        rows.push(one(name("CPU per probe / floor"), "ratio", ratio).target("≤ 2×", ratio <= 2.0));
    }
    if has_valgrind() {
        let cost = cost(kind, &mock, &port, &headers).await;
        match cost {
            Ok((probe_i, floor_i)) => {
                rows.push(
                    one(name("instructions per probe (callgrind)"), "instr", probe_i)
                        .note(format!("{COST_N} connections, {:?} probes", COST_AMOUNTS)),
                );
                rows.push(one(
                    name("floor: instructions per bare POST (callgrind)"),
                    "instr",
                    floor_i,
                ));
                let ratio = probe_i / floor_i;
                rows.push(
                    one(name("instructions per probe / floor"), "ratio", ratio)
                        .target("≤ 2×", ratio <= 2.0),
                );
            }
            Err(e) => rows.push(failed_row(
                name("instructions per probe (callgrind)"),
                "instr",
                e,
            )),
        }
    } else {
        rows.push(failed_row(
            name("instructions per probe (callgrind)"),
            "instr",
            "valgrind is not installed".into(),
        ));
    }
    mock.try_kill().await?;
    Ok(())
}

/// Instructions per probe and per bare POST: each the difference of two callgrind runs.
async fn cost(kind: &Kind, mock: &MockProcess, port: &str, headers: &str) -> Res<(f64, f64)> {
    let k = arg(kind);
    let limit = LIMIT * 20;
    let mut probe_points = Vec::new();
    for amount in COST_AMOUNTS {
        let (out, instr) = run_child(
            &[
                "cost-probe".into(),
                k.clone(),
                port.into(),
                COST_N.to_string(),
                amount.to_string(),
            ],
            limit,
            true,
        )
        .await?;
        let baseline = out["baseline"].as_u64().ok_or("no baseline")?;
        let done = probe_count(kind, mock).await?.saturating_sub(baseline);
        probe_points.push((
            done as f64,
            instr.ok_or("callgrind collected nothing")? as f64,
        ));
    }
    let mut floor_points = Vec::new();
    for amount in COST_AMOUNTS {
        let (out, instr) = run_child(
            &[
                "cost-floor".into(),
                k.clone(),
                port.into(),
                COST_N.to_string(),
                amount.to_string(),
                headers.into(),
            ],
            limit,
            true,
        )
        .await?;
        if out["posts"] != out["wanted"] {
            return Err(format!("floor under callgrind: {out}"));
        }
        floor_points.push((
            out["posts"].as_f64().unwrap_or(0.0),
            instr.ok_or("callgrind collected nothing")? as f64,
        ));
    }
    let slope = |p: &[(f64, f64)]| (p[1].1 - p[0].1) / (p[1].0 - p[0].0);
    Ok((slope(&probe_points), slope(&floor_points)))
}

/// N idle connections at the default heartbeat with the earlier path, each session probing for
/// itself (`HeartbeatScope::Session`): the client's CPU and the probes a second, beside the
/// default (per origin) of [`idle`].
async fn idle_per_session(kind: &Kind, n: usize, window: Duration, rows: &mut Vec<Row>) -> Res<()> {
    let args = [
        "idle".into(),
        arg(kind),
        n.to_string(),
        window.as_millis().to_string(),
        "session".into(),
    ];
    let (v, _) = run_child(&args, LIMIT * 12 + window, false).await?;
    let f = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    let core = f("cpu_s") / f("window_s") * 100.0;
    let name = format!(
        "{} N={n}: client CPU at the default 30 s heartbeat, per-session probes (earlier path), % of one core",
        kind.name
    );
    let mut row = one(name, "%", core).note(format!(
        "window {:.0} s, {} probes ({:.1} a second), {} of {n} on their first generation",
        f("window_s"),
        v["probes"],
        f("probes") / f("window_s"),
        v["still"]
    ));
    if v["still"].as_u64() != Some(n as u64) {
        row.samples
            .fail("a connection left its first generation while idle");
    }
    rows.push(row);
    Ok(())
}

/// N idle connections at the default heartbeat, then a restart of their server.
async fn idle(kind: &Kind, n: usize, window: Duration, full: bool, rows: &mut Vec<Row>) -> Res<()> {
    if let Err(e) = idle_per_session(kind, n, window, rows).await {
        rows.push(failed_row(
            format!("{} N={n}: idle, per-session probes", kind.name),
            "-",
            e,
        ));
    }
    let limit = LIMIT * 12 + window;
    let (v, _) = run_child(
        &[
            "idle".into(),
            arg(kind),
            n.to_string(),
            window.as_millis().to_string(),
        ],
        limit,
        false,
    )
    .await?;
    let f = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    let name = |what: &str| format!("{} N={n}: {what}", kind.name);
    let goal = |row: Row, words: &str, met: bool| if full { row.target(words, met) } else { row };
    let ready = f("ready_s") * 1e3;
    rows.push(
        goal(
            one(name("started until all ready"), "ms", ready),
            "< 10 s",
            ready < 10_000.0,
        )
        .note(format!("{:.1} s of client CPU", f("start_cpu_s"))),
    );
    let rss = f("rss_kib") / n as f64;
    rows.push(
        goal(
            one(name("resident memory per idle connection"), "KiB", rss),
            "< 64 KiB",
            rss < 64.0,
        )
        .note(format!("{}", v["protocols"])),
    );
    let core = f("cpu_s") / f("window_s") * 100.0;
    let mut row = goal(
        one(
            name("client CPU at the default 30 s heartbeat, per-origin probes, % of one core"),
            "%",
            core,
        ),
        "≤ 0.5 %",
        core <= 0.5,
    )
    .note(format!(
        "window {:.0} s, {} probes ({:.1} a second), {} of {n} on their first generation",
        f("window_s"),
        v["probes"],
        f("probes") / f("window_s"),
        v["still"]
    ));
    if v["still"].as_u64() != Some(n as u64) {
        row.samples
            .fail("a connection left its first generation while idle");
    }
    rows.push(row);
    let all = f("restart_all_ready_s") * 1e3;
    let (failed, lost) = (
        v["failed"].as_u64().unwrap_or(1),
        v["not_recovered"].as_u64().unwrap_or(1),
    );
    let mut row = goal(
        one(
            name("server killed and restarted: until all ready"),
            "ms",
            all,
        ),
        "all ready, none failed",
        failed + lost == 0,
    )
    .note(format!("{failed} failed, {lost} not recovered"));
    if failed + lost > 0 {
        row.samples
            .fail(format!("{failed} failed, {lost} not recovered"));
    }
    rows.push(row);
    rows.push(one(
        name("peak attempts / 100 ms (client events)"),
        "attempts",
        f("peak_client"),
    ));
    rows.push(one(
        name("peak attempts / 100 ms (server log)"),
        "attempts",
        f("peak_server"),
    ));
    Ok(())
}

pub async fn run(mode: Mode, rows: &mut Vec<Row>) -> Res<()> {
    let nofile = raise_nofile();
    let n: usize = std::env::var("MCP_SCALE_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if mode.quick { 2000 } else { 10_000 });
    // An idle connection holds one descriptor (its stream) in the client and one in the mock:
    // requests go over the process's shared pool of kept-alive connections, which start-up
    // grows (many handshakes at once) and idleness shrinks (4 s). Room is left for the pool at
    // its peak, half as many again, and for the runtime's own.
    let fits = (nofile as usize).saturating_sub(1000) * 2 / 3 / 500 * 500;
    let n = if n > fits {
        eprintln!(
            "resilience: scale: N={n} needs RLIMIT_NOFILE of {} (client and mock each); it is \
             {nofile} and cannot be raised here: N={fits} instead",
            n * 3 / 2 + 1000
        );
        fits
    } else {
        n
    };
    if n == 0 {
        return Err(format!(
            "RLIMIT_NOFILE {nofile} leaves no room for connections"
        ));
    }
    let (probe_window, idle_window) = if mode.quick {
        (Duration::from_secs(5), Duration::from_secs(30))
    } else {
        (Duration::from_secs(20), Duration::from_secs(60))
    };
    // MCP_SCALE_KINDS=HTTP-2025,legacy-SSE: only these kinds.
    let only = std::env::var("MCP_SCALE_KINDS").ok();
    for kind in &KINDS {
        if only
            .as_ref()
            .is_some_and(|o| !o.split(',').any(|k| k == arg(kind)))
        {
            continue;
        }
        eprintln!("resilience: scale: {} ...", kind.name);
        if let Err(e) = probe_and_floor(kind, probe_window, rows).await {
            rows.push(failed_row(
                format!("{}: probe and floor", kind.name),
                "-",
                e,
            ));
        }
        if let Err(e) = idle(kind, n, idle_window, !mode.quick, rows).await {
            rows.push(failed_row(format!("{} N={n}: idle", kind.name), "-", e));
        }
    }
    Ok(())
}
