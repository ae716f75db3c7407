//! Section 22, `serve` with many hosts (issue 25's bench): `HOSTS` host sessions connected to
//! `mcp-resilient serve` (this build's binary, `--url` in front of one Streamable HTTP mock
//! process), `CALLING` of them calling `echo`; the same number of sessions opened on the mock
//! directly, the baseline. A compiled driver (this process, plain HTTP on reqwest, revision
//! 2025-11-25: `initialize`, `notifications/initialized`, then `tools/call`), so that the
//! figures are the gateway's and not the driver's.
//!
//! - **Memory per idle host session**: the resident memory serve (and, for comparison, the
//!   mock) gained over opening the sessions, read from `/proc/PID/status` after they settled.
//! - **Added latency**: the callers run *open loop*: each calls every `PERIOD`, from its own
//!   offset, whatever the answers take, and a call's latency counts from when it was due (a call
//!   that had to wait for the one before it counts that wait: no coordinated omission). At
//!   `CALLING / PERIOD` calls per second neither side is saturated, so the difference is the
//!   gateway's hop and not a queue. Rounds alternate direct / serve, so that noise hits both;
//!   every answer is checked (`echo` returns its text).
//!
//! Everything on 127.0.0.1; every request has a deadline; both processes are killed on drop.

use std::{
    process::Stdio,
    sync::{Arc, LazyLock},
    time::{Duration, Instant},
};

use futures::{StreamExt, stream};
use reqwest::header::CONTENT_TYPE;
use serde_json::{Value, json};
use tokio::process::Child;

use crate::{
    Mode, idle,
    mock::{self, LIMIT, MockProcess, Res},
    stats::{Row, Samples},
    support::serve::{capture_stderr, try_serving_url},
};

const SECTION: &str = "22. serve: many host sessions, some calling (2025-11-25)";
const VERSION: &str = "2025-11-25";
/// Sessions opened at once while connecting the hosts.
const OPENING: usize = 50;
/// Issue 25's targets.
const ADDED_P99_MS: f64 = 2.0;
const KIB_PER_SESSION: f64 = 64.0;

/// The sizes of one run.
struct Plan {
    hosts: usize,
    calling: usize,
    period: Duration,
    round: Duration,
    rounds: usize,
}

impl Plan {
    fn new(mode: Mode) -> Plan {
        let env = |name: &str, default: usize| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(default)
        };
        Plan {
            hosts: env("MCP_SERVE_HOSTS", 1000),
            calling: env("MCP_SERVE_CALLING", 100),
            period: Duration::from_millis(env("MCP_SERVE_PERIOD_MS", 100) as u64),
            round: Duration::from_secs(if mode.quick { 3 } else { 5 }),
            rounds: if mode.quick { 2 } else { 4 },
        }
    }
}

pub async fn run(mode: Mode, rows: &mut Vec<Row>) -> Res<()> {
    let plan = Plan::new(mode);
    let upstream = MockProcess::try_start("http").await?;
    let gateway = Gateway::start(&upstream.url()).await?;
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(plan.calling + OPENING)
        .timeout(LIMIT)
        .build()
        .map_err(|e| e.to_string())?;

    let (direct, direct_kib) = open_all(&http, &upstream.url(), upstream.pid(), plan.hosts).await?;
    let (served, serve_kib) = open_all(&http, &gateway.url, gateway.child.id(), plan.hosts).await?;

    let mut direct_calls = Samples::default();
    let mut serve_calls = Samples::default();
    // CPU seconds of each process while its side's rounds ran: [mock during direct rounds,
    // serve during serve rounds, mock during serve rounds].
    let mut cpu = [0.0f64; 3];
    let (mock_pid, serve_pid) = (
        upstream.pid().ok_or("the mock has no pid")?,
        gateway.child.id().ok_or("serve has no pid")?,
    );
    let direct = Arc::new(direct);
    let served = Arc::new(served);
    for round in 0..plan.rounds {
        // Alternate which side goes first, so a drift of the machine touches both.
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for side in order {
            let (url, sessions, into) = if side == 0 {
                (upstream.url(), &direct, &mut direct_calls)
            } else {
                (gateway.url.clone(), &served, &mut serve_calls)
            };
            let before = (cpu_s(mock_pid)?, cpu_s(serve_pid)?);
            let got = call_round(&http, &url, sessions, &plan, round).await;
            let (mock_used, serve_used) =
                (cpu_s(mock_pid)? - before.0, cpu_s(serve_pid)? - before.1);
            if side == 0 {
                cpu[0] += mock_used;
            } else {
                cpu[1] += serve_used;
                cpu[2] += mock_used;
            }
            into.values.extend(got.values);
            into.failed += got.failed;
            into.errors.extend(got.errors.into_iter().take(3));
        }
    }

    let rate = plan.calling as f64 / plan.period.as_secs_f64();
    let about = format!(
        "{} sessions, {} calling every {} ms ({rate:.0} calls/s), {} rounds of {} s per side",
        plan.hosts,
        plan.calling,
        plan.period.as_millis(),
        plan.rounds,
        plan.round.as_secs()
    );
    let added_p50 = serve_calls.median() - direct_calls.median();
    let added_p99 = serve_calls.p99() - direct_calls.p99();
    let note = format!(
        "direct p50 {:.3} / p99 {:.3} ms; serve p50 {:.3} / p99 {:.3} ms",
        direct_calls.median(),
        direct_calls.p99(),
        serve_calls.median(),
        serve_calls.p99()
    );
    let per_call = |seconds: f64, calls: &Samples| seconds * 1e6 / calls.values.len().max(1) as f64;
    let cpu_serve = per_call(cpu[1], &serve_calls);
    let cpu_note = format!(
        "the mock: {:.1} µs per call directly, {:.1} µs behind serve",
        per_call(cpu[0], &direct_calls),
        per_call(cpu[2], &serve_calls)
    );
    rows.push(Row::new(
        SECTION,
        format!("echo, mock directly ({about})"),
        "ms",
        direct_calls,
    ));
    rows.push(Row::new(SECTION, "echo through serve", "ms", serve_calls));
    rows.push(
        Row::single(
            SECTION,
            "added latency, p99 (serve − direct)",
            "ms",
            added_p99,
        )
        .target(format!("<= {ADDED_P99_MS} ms"), added_p99 <= ADDED_P99_MS)
        .note(note),
    );
    rows.push(Row::single(
        SECTION,
        "added latency, p50 (serve − direct)",
        "ms",
        added_p50,
    ));
    rows.push(
        Row::single(
            SECTION,
            "CPU per call: serve (its process, serve rounds)",
            "µs",
            cpu_serve,
        )
        .note(cpu_note),
    );
    rows.push(
        Row::single(
            SECTION,
            "RSS gained per idle host session: serve",
            "KiB",
            serve_kib,
        )
        .target(
            format!("< {KIB_PER_SESSION} KiB"),
            serve_kib < KIB_PER_SESSION,
        ),
    );
    rows.push(Row::single(
        SECTION,
        "RSS gained per idle session: the mock (rmcp's server)",
        "KiB",
        direct_kib,
    ));
    gateway.stop().await;
    Ok(())
}

/// One host session: its id and the next request id.
struct Session {
    id: String,
}

/// Opens `count` sessions at `url`, [`OPENING`] at a time; returns them and the resident memory
/// the process `pid` gained per session (read 1 s after the last one opened).
async fn open_all(
    http: &reqwest::Client,
    url: &str,
    pid: Option<u32>,
    count: usize,
) -> Res<(Vec<Session>, f64)> {
    let pid = pid.ok_or("the process has no pid")?;
    let before = rss_kib(pid)?;
    let opened: Vec<Res<Session>> = stream::iter(0..count)
        .map(|_| open(http, url))
        .buffer_unordered(OPENING)
        .collect()
        .await;
    let sessions = opened.into_iter().collect::<Res<Vec<_>>>()?;
    // The sessions' tasks settle (their first polls, the mock's keep-alive timers).
    tokio::time::sleep(Duration::from_secs(1)).await;
    let after = rss_kib(pid)?;
    Ok((sessions, (after as f64 - before as f64) / count as f64))
}

async fn open(http: &reqwest::Client, url: &str) -> Res<Session> {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {},
        "clientInfo": {"name": "serve-bench", "version": "1"}}});
    let response = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .map_err(|e| format!("initialize: {e}"))?;
    let id = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| format!("initialize: no session id ({})", response.status()))?
        .to_owned();
    let answer = answer(response).await?;
    if answer.get("result").is_none() {
        return Err(format!("initialize answered {answer}"));
    }
    let note = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &id)
        .header("mcp-protocol-version", VERSION)
        .json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .send()
        .await
        .map_err(|e| format!("initialized: {e}"))?;
    if !note.status().is_success() {
        return Err(format!("initialized: {}", note.status()));
    }
    Ok(Session { id })
}

/// The JSON-RPC answer in a response's body, JSON or SSE-framed.
async fn answer(response: reqwest::Response) -> Res<Value> {
    let sse = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let status = response.status();
    let body = response.text().await.map_err(|e| e.to_string())?;
    if !status.is_success() {
        return Err(format!(
            "HTTP {status}: {}",
            body.chars().take(200).collect::<String>()
        ));
    }
    if !sse {
        return serde_json::from_str(&body).map_err(|e| e.to_string());
    }
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|m| m.get("id").is_some())
        .ok_or_else(|| {
            format!(
                "no answer in {}",
                body.chars().take(200).collect::<String>()
            )
        })
}

/// `plan.calling` callers, open loop, for one round; latencies in ms from when each call was due.
async fn call_round(
    http: &reqwest::Client,
    url: &str,
    sessions: &Arc<Vec<Session>>,
    plan: &Plan,
    round: usize,
) -> Samples {
    let start = tokio::time::Instant::now() + Duration::from_millis(50);
    let callers = (0..plan.calling.min(sessions.len())).map(|i| {
        let http = http.clone();
        let url = url.to_owned();
        let sessions = sessions.clone();
        let period = plan.period;
        let end = start + plan.round;
        // Spread the callers' phases over one period.
        let offset = period.mul_f64(i as f64 / plan.calling as f64);
        tokio::spawn(async move {
            let mut samples = Samples::default();
            let session = &sessions[i];
            let mut due = start + offset;
            let mut n = 0u64;
            while due < end {
                tokio::time::sleep_until(due).await;
                n += 1;
                let text = format!("r{round}c{i}n{n}");
                match call(&http, &url, session, n, &text).await {
                    Ok(()) => samples.push_ms(due.elapsed()),
                    Err(e) => samples.fail(e),
                }
                due += period;
            }
            samples
        })
    });
    let mut all = Samples::default();
    for caller in futures::future::join_all(callers).await {
        match caller {
            Ok(s) => {
                all.values.extend(s.values);
                all.failed += s.failed;
                all.errors.extend(s.errors.into_iter().take(3));
            }
            Err(e) => all.fail(format!("caller task: {e}")),
        }
    }
    all
}

async fn call(
    http: &reqwest::Client,
    url: &str,
    session: &Session,
    id: u64,
    text: &str,
) -> Res<()> {
    let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": text}}});
    let response = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &session.id)
        .header("mcp-protocol-version", VERSION)
        .json(&request)
        .send()
        .await
        .map_err(|e| format!("call: {e}"))?;
    let answer = answer(response).await?;
    let result: rmcp::model::CallToolResult = serde_json::from_value(
        answer
            .get("result")
            .cloned()
            .ok_or_else(|| format!("call answered {answer}"))?,
    )
    .map_err(|e| e.to_string())?;
    mock::check_echo(&result, text)
}

/// CPU seconds (user + system) the process `pid` has used.
fn cpu_s(pid: u32) -> Res<f64> {
    let ticks = idle::cpu_ticks_of(&pid.to_string()).ok_or(format!("no /proc/{pid}/stat"))?;
    Ok(ticks as f64 / *CLK_TCK)
}

fn rss_kib(pid: u32) -> Res<u64> {
    idle::rss_kib_of(&pid.to_string()).ok_or(format!("no VmRSS in /proc/{pid}/status"))
}

/// Clock ticks per second, asked once.
static CLK_TCK: LazyLock<f64> = LazyLock::new(idle::clk_tck);

/// `mcp-resilient serve --listen 127.0.0.1:0 --url UPSTREAM`, ready.
struct Gateway {
    child: Child,
    url: String,
}

impl Gateway {
    async fn start(upstream: &str) -> Res<Gateway> {
        let mut command = tokio::process::Command::new(mock::binary());
        command.args(["serve", "--listen", "127.0.0.1:0", "--url", upstream]);
        // serve's runtime shape, for comparing: `--workers` (one per core by default).
        if let Ok(workers) = std::env::var("MCP_SERVE_WORKERS") {
            command.args(["--workers", &workers]);
        }
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("serve: {e}"))?;
        // Its stderr is read (and kept) until it ends, so it never blocks on a full pipe.
        let mut log = capture_stderr(&mut child, "serve");
        let url = try_serving_url(&mut log, LIMIT).await?;
        let ready = url.trim_end_matches("/mcp").to_owned() + "/readyz";
        let deadline = Instant::now() + LIMIT;
        loop {
            let ok = reqwest::get(&ready)
                .await
                .is_ok_and(|r| r.status().is_success());
            if ok {
                break;
            }
            if Instant::now() > deadline {
                return Err(format!("{ready} not ready within {LIMIT:?}"));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(Gateway { child, url })
    }

    /// SIGTERM, and a bounded wait for the exit (killed on drop otherwise).
    async fn stop(mut self) {
        if let Some(pid) = self.child.id() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
        let _ = tokio::time::timeout(LIMIT, self.child.wait()).await;
    }
}
