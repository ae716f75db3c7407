//! Calls one tool of a remote MCP server many times through one `ToolHandle` and prints one
//! JSON line of totals: how many calls, how many succeeded, the failures by `CallError`
//! variant, the generation at the start and at the end, and the elapsed time.
//!
//! Used by `scripts/counterparts/run.sh` to try the fault model against MCP servers written by
//! others (the official Python SDK, say):
//!
//! ```sh
//! cargo run --release -p mcp-resilient --example counterpart_calls -- --url http://127.0.0.1:8000/mcp \
//!     --tool echo --args '{"text":"hi"}' --calls 200 --spacing-ms 10
//! ```
//!
//! Flags (all `--flag value`):
//!
//! - `--url URL` (or `--stdio`); `--sse` for legacy HTTP+SSE instead of Streamable HTTP
//! - `--stdio "CMD ARG…"`: a server run as a child over stdio instead (split at whitespace)
//! - `--tool NAME` (default `echo`), `--args JSON` (default `{"text":"hi"}`)
//! - `--calls N` (default 200), `--spacing-ms M` between the end of one call and the next
//!   (default 10)
//! - `--name NAME` the server's name (default `py`); the handle is `mcp__<name>__<tool>`
//! - `--protocol auto|2025-11-25|2026-07-28` which MCP revision to speak (default `auto`:
//!   `server/discover` first, `initialize` when the server does not know it)
//! - `--http2 off|auto|prior-knowledge` Streamable HTTP over HTTP/2 (default `off`, the
//!   library's); when not `off`, the library's HTTP/2 debug lines go to stderr, among them
//!   `the origin speaks HTTP/1.1 only` when the server refused HTTP/2 and the client fell back
//! - `--ready-timeout-ms`, `--heartbeat-interval-ms`, `--heartbeat-timeout-ms`,
//!   `--heartbeat-failures`, `--reconnect-initial-ms`, `--reconnect-max-ms`,
//!   `--max-attempts`, `--call-timeout-ms`, `--connect-timeout-ms`, `--call-wait-ms`
//! - `--linger-ms M` keeps supervising M ms after the last call before the totals are taken
//!   (to see what the supervisor decides after, say, a call timeout)
//! - `--progress` asks for each call's progress (a callback) and counts what reaches it before
//!   the call returns: the totals line gets `progress_per_call` (notifications seen → calls)
//! - `--events` prints every supervisor event on stderr as a JSON line with a `ts` in Unix
//!   milliseconds (a `ready` line carries the negotiated `protocol`), and every failed call as
//!   a JSON line too
//!
//! The totals line names the protocol the first generation negotiated (`protocol`).
//!
//! Exit code: 0 when the run completed (whatever the calls did), 2 on a usage error, 3 if
//! the server never became ready.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mcp_resilient::{
    CallError, ConnectionState, ServerConfig, Supervisor, ToolRegistry,
    config::{Heartbeat, Http2, ProtocolChoice, Reconnect},
    state::Event,
};
use serde_json::{Value, json};

/// What the command line asked for.
#[derive(Debug)]
struct Opts {
    url: String,
    sse: bool,
    stdio: Vec<String>,
    name: String,
    tool: String,
    args: Value,
    calls: u64,
    spacing: Duration,
    ready_timeout: Duration,
    heartbeat_interval: Option<Duration>,
    heartbeat_timeout: Option<Duration>,
    heartbeat_failures: Option<u32>,
    reconnect_initial: Option<Duration>,
    reconnect_max: Option<Duration>,
    max_attempts: Option<u32>,
    call_timeout: Option<Duration>,
    connect_timeout: Option<Duration>,
    call_wait: Option<Duration>,
    protocol: ProtocolChoice,
    http2: Http2,
    linger: Duration,
    events: bool,
    progress: bool,
}

const USAGE: &str = "usage: counterpart_calls (--url URL [--sse] | --stdio \"CMD ARG…\") [--tool NAME] [--args JSON] \
[--calls N] [--spacing-ms M] [--name NAME] [--ready-timeout-ms M] [--heartbeat-interval-ms M] \
[--heartbeat-timeout-ms M] [--heartbeat-failures N] [--reconnect-initial-ms M] \
[--reconnect-max-ms M] [--max-attempts N] [--call-timeout-ms M] [--connect-timeout-ms M] \
[--call-wait-ms M] [--protocol auto|2025-11-25|2026-07-28] [--http2 off|auto|prior-knowledge] [--linger-ms M] [--events] [--progress]";

fn number<T: std::str::FromStr>(flag: &str, value: &str) -> Result<T, String> {
    value
        .parse()
        .map_err(|_| format!("{flag}: expected a non-negative integer, got {value:?}"))
}

fn millis(flag: &str, value: &str) -> Result<Duration, String> {
    number::<u64>(flag, value).map(Duration::from_millis)
}

impl Opts {
    fn parse(mut args: impl Iterator<Item = String>) -> Result<Opts, String> {
        let mut opts = Opts {
            url: String::new(),
            sse: false,
            stdio: Vec::new(),
            name: "py".into(),
            tool: "echo".into(),
            args: json!({"text": "hi"}),
            calls: 200,
            spacing: Duration::from_millis(10),
            ready_timeout: Duration::from_secs(30),
            heartbeat_interval: None,
            heartbeat_timeout: None,
            heartbeat_failures: None,
            reconnect_initial: None,
            reconnect_max: None,
            max_attempts: None,
            call_timeout: None,
            connect_timeout: None,
            call_wait: None,
            protocol: ProtocolChoice::Auto,
            http2: Http2::Off,
            linger: Duration::ZERO,
            events: false,
            progress: false,
        };
        while let Some(flag) = args.next() {
            match flag.as_str() {
                "--sse" => {
                    opts.sse = true;
                    continue;
                }
                "--events" => {
                    opts.events = true;
                    continue;
                }
                "--progress" => {
                    opts.progress = true;
                    continue;
                }
                "-h" | "--help" => return Err(String::new()),
                _ => {}
            }
            let value = args
                .next()
                .ok_or_else(|| format!("{flag}: missing value"))?;
            match flag.as_str() {
                "--url" => opts.url = value,
                "--stdio" => opts.stdio = value.split_whitespace().map(str::to_owned).collect(),
                "--name" => opts.name = value,
                "--tool" => opts.tool = value,
                "--args" => {
                    opts.args = serde_json::from_str(&value)
                        .map_err(|e| format!("--args: not JSON ({e}): {value}"))?;
                }
                "--calls" => opts.calls = number(&flag, &value)?,
                "--spacing-ms" => opts.spacing = millis(&flag, &value)?,
                "--ready-timeout-ms" => opts.ready_timeout = millis(&flag, &value)?,
                "--heartbeat-interval-ms" => opts.heartbeat_interval = Some(millis(&flag, &value)?),
                "--heartbeat-timeout-ms" => opts.heartbeat_timeout = Some(millis(&flag, &value)?),
                "--heartbeat-failures" => opts.heartbeat_failures = Some(number(&flag, &value)?),
                "--reconnect-initial-ms" => opts.reconnect_initial = Some(millis(&flag, &value)?),
                "--reconnect-max-ms" => opts.reconnect_max = Some(millis(&flag, &value)?),
                "--max-attempts" => opts.max_attempts = Some(number(&flag, &value)?),
                "--call-timeout-ms" => opts.call_timeout = Some(millis(&flag, &value)?),
                "--connect-timeout-ms" => opts.connect_timeout = Some(millis(&flag, &value)?),
                "--call-wait-ms" => opts.call_wait = Some(millis(&flag, &value)?),
                "--protocol" => {
                    opts.protocol = value.parse().map_err(|e| format!("--protocol: {e}"))?;
                }
                "--http2" => opts.http2 = value.parse().map_err(|e| format!("--http2: {e}"))?,
                "--linger-ms" => opts.linger = millis(&flag, &value)?,
                _ => return Err(format!("unknown flag {flag:?}")),
            }
        }
        if opts.url.is_empty() == opts.stdio.is_empty() {
            return Err("one of --url and --stdio is required".into());
        }
        Ok(opts)
    }

    /// The server configuration these flags describe.
    fn config(&self) -> ServerConfig {
        let mut config = if let [command, args @ ..] = self.stdio.as_slice() {
            ServerConfig::stdio(&self.name, command).args(args)
        } else if self.sse {
            ServerConfig::sse(&self.name, &self.url)
        } else {
            ServerConfig::http(&self.name, &self.url)
        };
        let mut heartbeat = match self.heartbeat_interval {
            Some(interval) => Heartbeat::every(interval),
            None => Heartbeat::default(),
        };
        if let Some(timeout) = self.heartbeat_timeout {
            heartbeat = heartbeat.timeout(timeout);
        }
        if let Some(failures) = self.heartbeat_failures {
            heartbeat = heartbeat.failures(failures);
        }
        let mut reconnect = Reconnect::default();
        if let Some(initial) = self.reconnect_initial {
            let max = reconnect.get_max_delay().max(initial);
            reconnect = reconnect.initial_delay(initial).max_delay(max);
        }
        if let Some(max) = self.reconnect_max {
            let initial = reconnect.get_initial_delay().min(max);
            reconnect = reconnect.max_delay(max).initial_delay(initial);
        }
        if let Some(attempts) = self.max_attempts {
            reconnect = reconnect.max_attempts(attempts);
        }
        config = config
            .heartbeat(heartbeat)
            .reconnect(reconnect)
            .protocol(self.protocol);
        // HTTP/2 is a remote transport's setting: a stdio server refuses it, `off` included.
        if self.stdio.is_empty() {
            config = config.http2(self.http2);
        }
        if let Some(timeout) = self.call_timeout {
            config = config.call_timeout(timeout);
        }
        if let Some(timeout) = self.connect_timeout {
            config = config.connect_timeout(timeout);
        }
        if let Some(wait) = self.call_wait {
            config = config.call_wait(wait);
        }
        config
    }
}

/// Unix time in milliseconds, to line events up with a script's `date +%s%3N`.
fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default()
}

/// The `CallError` variant's name, the key of the failure counts.
fn variant(error: &CallError) -> &'static str {
    match error {
        CallError::Unavailable { .. } => "Unavailable",
        CallError::ConnectionLost { .. } => "ConnectionLost",
        CallError::Timeout { .. } => "Timeout",
        CallError::ToolNotFound { .. } => "ToolNotFound",
        CallError::Server(_) => "Server",
        CallError::Protocol { .. } => "Protocol",
        CallError::Overloaded { .. } => "Overloaded",
        CallError::Http { .. } => "Http",
        CallError::Rejected { .. } => "Rejected",
        _ => "Other",
    }
}

/// One supervisor event as a JSON object (the shape of `mcp-resilient watch --json`).
fn event_json(event: &Event) -> Value {
    match event {
        Event::State { server, status } => {
            let state = &status.state;
            let mut line = json!({
                "ts": now_ms(), "server": &**server, "event": "state",
                "state": state.as_str(), "generation": status.generation,
            });
            match state {
                ConnectionState::Reconnecting {
                    reason,
                    death,
                    attempt,
                    delay,
                } => {
                    line["reason"] = json!(reason.as_str());
                    line["cause"] = json!(death.cause.as_str());
                    line["detail"] = json!(death.detail);
                    line["attempt"] = json!(attempt);
                    line["delay_ms"] = json!(delay.as_millis());
                }
                ConnectionState::Failed {
                    reason,
                    death,
                    retry_in,
                    ..
                } => {
                    line["reason"] = json!(reason.as_str());
                    line["cause"] = json!(death.cause.as_str());
                    line["detail"] = json!(death.detail);
                    line["retry_in_ms"] = json!(retry_in.map(|d| d.as_millis()));
                }
                ConnectionState::Connecting { attempt } => line["attempt"] = json!(attempt),
                ConnectionState::Ready { protocol, .. } => line["protocol"] = json!(protocol),
                _ => {}
            }
            line
        }
        Event::Tools(change) => json!({
            "ts": now_ms(), "server": &*change.server, "event": "tools",
            "generation": change.generation, "tools": change.tools,
        }),
        Event::Stable { server, generation } => json!({
            "ts": now_ms(), "server": &**server, "event": "stable", "generation": generation,
        }),
        Event::ProbeMissed {
            server,
            generation,
            misses,
        } => json!({
            "ts": now_ms(), "server": &**server, "event": "probe_missed",
            "generation": generation, "misses": misses,
        }),
        other => json!({"ts": now_ms(), "event": format!("{other:?}")}),
    }
}

/// Counts what the events said while the calls ran.
#[derive(Debug, Default)]
struct Seen {
    /// Transitions into `ready` after the first.
    readies: u64,
    probe_missed: u64,
    /// Causes of the losses and failed attempts, by name.
    causes: BTreeMap<String, u64>,
}

async fn run(opts: Opts) -> ExitCode {
    let registry = ToolRegistry::new();
    let supervisor = match Supervisor::spawn(opts.config(), &registry) {
        Ok(supervisor) => supervisor,
        Err(error) => {
            eprintln!("counterpart_calls: cannot start: {error:?}");
            return ExitCode::from(2);
        }
    };
    let mut events = supervisor.events();
    let print_events = opts.events;
    // The registry keeps the event channel open after `shutdown`, so the watcher stops when
    // told to, after draining what is already queued.
    let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
    let watcher = tokio::spawn(async move {
        use mcp_resilient::state::RecvError;
        let mut seen = Seen::default();
        let mut first_ready = true;
        let mut stopping = false;
        loop {
            let received = if stopping {
                match events.try_recv() {
                    Ok(Some(event)) => Ok(event),
                    Ok(None) => break,
                    Err(e) => Err(e),
                }
            } else {
                tokio::select! {
                    received = events.recv() => received,
                    _ = &mut stopped => {
                        stopping = true;
                        continue;
                    }
                }
            };
            let event = match received {
                Ok(event) => event,
                Err(RecvError::Lagged(n)) => {
                    eprintln!(
                        "{}",
                        json!({"ts": now_ms(), "event": "lagged", "missed": n})
                    );
                    continue;
                }
                Err(RecvError::Closed) => break,
            };
            match &event {
                Event::State { status, .. } => match &status.state {
                    ConnectionState::Ready { .. } if first_ready => first_ready = false,
                    ConnectionState::Ready { .. } => seen.readies += 1,
                    ConnectionState::Reconnecting { death, .. }
                    | ConnectionState::Failed { death, .. } => {
                        *seen.causes.entry(death.cause.as_str().into()).or_default() += 1;
                    }
                    _ => {}
                },
                Event::ProbeMissed { .. } => seen.probe_missed += 1,
                _ => {}
            }
            if print_events {
                eprintln!("{}", event_json(&event));
            }
        }
        seen
    });

    let started = Instant::now();
    let generation_start = match supervisor.wait_ready(opts.ready_timeout).await {
        Ok(generation) => generation,
        Err(state) => {
            let line = json!({"error": "not ready", "state": state.to_string(),
                "detail": format!("{state:?}"), "elapsed_ms": started.elapsed().as_millis()});
            println!("{line}");
            supervisor.shutdown().await;
            return ExitCode::from(3);
        }
    };
    let ready_ms = started.elapsed().as_millis();
    let protocol = supervisor.status().protocol().map(str::to_owned);
    let public = format!("mcp__{}__{}", opts.name, opts.tool);
    let handle = match registry.handle(&public) {
        Ok(handle) => handle,
        Err(error) => {
            eprintln!("counterpart_calls: no handle {public}: {error}");
            supervisor.shutdown().await;
            return ExitCode::from(2);
        }
    };

    let calls_started = Instant::now();
    let (mut ok, mut tool_errors) = (0u64, 0u64);
    let mut failed: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut slowest = Duration::ZERO;
    let mut progress_per_call: BTreeMap<u64, u64> = BTreeMap::new();
    for i in 0..opts.calls {
        if i > 0 && !opts.spacing.is_zero() {
            tokio::time::sleep(opts.spacing).await;
        }
        let call_started = Instant::now();
        let outcome = if opts.progress {
            let seen = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
            let counter = seen.clone();
            let options = mcp_resilient::call::CallOptions::default().on_progress(move |_| {
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            });
            let outcome = handle.call_with(opts.args.clone(), options).await;
            let seen = seen.load(std::sync::atomic::Ordering::SeqCst);
            *progress_per_call.entry(seen).or_default() += 1;
            outcome
        } else {
            handle.call(opts.args.clone()).await
        };
        let took = call_started.elapsed();
        slowest = slowest.max(took);
        match outcome {
            Ok(result) if result.is_error == Some(true) => tool_errors += 1,
            Ok(_) => ok += 1,
            Err(error) => {
                *failed.entry(variant(&error)).or_default() += 1;
                if opts.events {
                    let line = json!({"ts": now_ms(), "event": "call_failed", "call": i,
                        "variant": variant(&error), "error": error.to_string(),
                        "took_ms": took.as_millis()});
                    eprintln!("{line}");
                }
            }
        }
    }
    let calls_ms = calls_started.elapsed().as_millis();
    if !opts.linger.is_zero() {
        tokio::time::sleep(opts.linger).await;
    }
    let status_end = supervisor.status();
    let generation_end = status_end.ready();
    let state_end = status_end.state.to_string();
    supervisor.shutdown().await;
    let _ = stop.send(());
    let seen = watcher.await.unwrap_or_default();
    let failed_total: u64 = failed.values().sum();
    let line = json!({
        "calls": opts.calls,
        "ok": ok,
        "tool_errors": tool_errors,
        "failed": failed_total,
        "failed_by": failed,
        "generation_start": generation_start,
        "generation_end": generation_end,
        "state_end": state_end,
        "protocol": protocol,
        "http2": format!("{:?}", opts.http2),
        "reconnects": seen.readies,
        "causes": seen.causes,
        "probe_missed": seen.probe_missed,
        "ready_ms": ready_ms,
        "elapsed_ms": calls_ms,
        "slowest_call_ms": slowest.as_millis(),
        "progress_per_call": progress_per_call,
    });
    println!("{line}");
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    let opts = match Opts::parse(std::env::args().skip(1)) {
        Ok(opts) => opts,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("counterpart_calls: {message}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    if opts.http2 != Http2::Off {
        // What the HTTP/2 path decided (a fallback to HTTP/1.1 among it), for run.sh to read.
        tracing_subscriber::fmt()
            .with_env_filter("mcp_resilient::transport::http2=debug")
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .init();
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("counterpart_calls: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(run(opts))
}
