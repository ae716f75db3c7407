//! `mcp-resilient demo`: the recovery story on the embedded mock server, with timings.
//!
//! For each transport: connect → call → kill the server → death detected (and by what) →
//! server back → ready on a new generation with the tools re-listed → a call served by the new
//! server (a different boot id proves it).

use std::time::Duration;

use mcp_resilient::{
    ConnectionState, Supervisor, ToolRegistry,
    config::{Heartbeat, Reconnect, ServerConfig, TransportConfig},
    state::Event,
};
use serde_json::json;
use tokio::{process::Child, sync::broadcast, time::Instant};

use super::output::human;

const STEP_LIMIT: Duration = Duration::from_secs(20);

type DemoResult<T> = Result<T, String>;

struct Clock(Instant);

impl Clock {
    /// Prints one line of the story. It quotes what servers said (a cause's detail, a reply), so
    /// it is redacted and escaped like every human line.
    fn say(&self, message: impl AsRef<str>) {
        println!(
            "[{:>6.0} ms] {}",
            self.0.elapsed().as_secs_f64() * 1000.0,
            super::safe::line(&mcp_resilient::text::redact(message.as_ref()))
        );
    }
}

pub(crate) async fn run(which: &str) -> DemoResult<()> {
    let transports: &[&str] = match which {
        "all" => &["stdio", "sse", "http"],
        "stdio" => &["stdio"],
        "sse" => &["sse"],
        "http" => &["http"],
        other => {
            return Err(format!(
                "unknown transport '{other}' (stdio, sse, http or all)"
            ));
        }
    };
    for transport in transports {
        println!("== {transport} ==");
        match *transport {
            "stdio" => stdio().await?,
            kind => remote(kind).await?,
        }
        println!();
    }
    println!("demo finished: every server recovered on a new generation");
    Ok(())
}

fn policy(config: ServerConfig) -> ServerConfig {
    config
        .heartbeat(Heartbeat {
            interval: Duration::from_millis(500),
            timeout: Duration::from_millis(150),
            failures: 2,
            ..Heartbeat::default()
        })
        .reconnect(Reconnect {
            initial_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(2),
            ..Reconnect::default()
        })
}

fn me() -> DemoResult<String> {
    std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .map_err(|e| format!("cannot find my own executable: {e}"))
}

/// Starts supervising `config`, waits until it is ready, and says so (with who answered).
/// Events are subscribed after `ready`, so the caller sees only what follows.
async fn start_ready(
    config: ServerConfig,
    clock: &Clock,
    place: &str,
) -> DemoResult<(Supervisor, ToolRegistry, broadcast::Receiver<Event>)> {
    let registry = ToolRegistry::new();
    let server = Supervisor::start(config, registry.clone())
        .await
        .map_err(|e| e.to_string())?;
    let generation = server
        .wait_ready(STEP_LIMIT)
        .await
        .map_err(|s| format!("not ready: {s}"))?;
    let events = server.events();
    clock.say(format!(
        "ready: generation {generation}{place}, {} tools registered",
        registry.snapshot().len()
    ));
    clock.say(format!("whoami → {}", whoami(&registry, "demo").await?));
    Ok((server, registry, events))
}

async fn whoami(registry: &ToolRegistry, server: &str) -> DemoResult<String> {
    let handle = registry
        .handle(&format!("mcp__{server}__whoami"))
        .map_err(|e| e.to_string())?;
    let result = handle
        .call(json!({}))
        .await
        .map_err(|e| format!("whoami failed: {e}"))?;
    let who = mcp_mock_server::Whoami::from_result(&result).ok_or("whoami: not a whoami result")?;
    Ok(format!("boot id {}, pid {}", who.boot_id, who.pid))
}

/// Waits for the next state matching `want`, printing intermediate events.
async fn wait_state(
    events: &mut broadcast::Receiver<Event>,
    clock: &Clock,
    want: impl Fn(&ConnectionState) -> bool,
) -> DemoResult<ConnectionState> {
    let deadline = Instant::now() + STEP_LIMIT;
    loop {
        let event = tokio::time::timeout_at(deadline, events.recv())
            .await
            .map_err(|_| "timed out waiting for the supervisor".to_owned())?
            .map_err(|e| format!("event stream: {e}"))?;
        match event {
            Event::State { state, .. } if want(&state) => return Ok(state),
            Event::State {
                state: ConnectionState::Failed { death, .. },
                ..
            } => {
                return Err(format!(
                    "supervisor failed: {}: {}",
                    death.cause, death.detail
                ));
            }
            Event::Tools(change) => clock.say(format!(
                "tools re-listed by generation {}: {}",
                change.generation,
                change.tools.join(", ")
            )),
            Event::ProbeMissed { misses, .. } => {
                clock.say(format!("heartbeat probe missed ({misses} in a row)"))
            }
            _ => {}
        }
    }
}

async fn stdio() -> DemoResult<()> {
    let clock = Clock(Instant::now());
    let mut config =
        policy(ServerConfig::stdio("demo", me()?).args(["mock-server", "--transport", "stdio"]));
    if let TransportConfig::Stdio(stdio) = &mut config.transport {
        stdio.stdin_close_grace = Duration::from_millis(500);
        stdio.term_grace = Duration::from_millis(500);
    }
    clock.say("starting the mock server as a child process");
    let (server, registry, mut events) = start_ready(config, &clock, "").await?;
    let crash = registry
        .handle("mcp__demo__crash")
        .map_err(|e| e.to_string())?;
    let killed = Instant::now();
    let reply = crash
        .call(json!({"code": 3}))
        .await
        .map_err(|e| e.to_string())?;
    clock.say(format!(
        "called crash → {:?}; the child exits after replying",
        text_of(&reply)
    ));
    detect_loss(&mut events, &clock, killed).await?;
    await_recovery(&server, &registry, &mut events, &clock, killed).await?;
    server.shutdown().await;
    clock.say("shut down: child reaped, tools unregistered");
    Ok(())
}

async fn remote(kind: &str) -> DemoResult<()> {
    let clock = Clock(Instant::now());
    let (mut child, port) = spawn_remote(kind, 0).await?;
    clock.say(format!(
        "mock server ({kind}) listening on 127.0.0.1:{port}{}",
        pid(&child)
    ));
    let url = match kind {
        "sse" => format!("http://127.0.0.1:{port}/sse"),
        _ => format!("http://127.0.0.1:{port}/mcp"),
    };
    let config = policy(match kind {
        "sse" => ServerConfig::sse("demo", &url),
        _ => ServerConfig::http("demo", &url),
    });
    let (server, registry, mut events) = start_ready(config, &clock, &format!(" at {url}")).await?;
    let killed = Instant::now();
    child.start_kill().map_err(|e| format!("kill: {e}"))?;
    let _ = child.wait().await;
    clock.say("server process SIGKILLed");
    let held = (kind == "http").then(|| {
        // rmcp's HTTP session never notices a dead server by itself: the next call (or the
        // heartbeat, if the host stays idle) does. Its connection is refused, so it provably
        // never left: it is held and sent once to the next generation.
        clock.say("calling echo on the dead server");
        let echo = registry.handle("mcp__demo__echo");
        tokio::spawn(async move {
            let echo = echo.map_err(|e| e.to_string())?;
            echo.call(json!({"text": "anyone there?"}))
                .await
                .map_err(|e| e.to_string())
        })
    });
    detect_loss(&mut events, &clock, killed).await?;
    // The server comes back a moment later, on the same port.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (mut back, port) = spawn_remote(kind, port).await?;
    clock.say(format!(
        "server restarted on the same port {port}{}",
        pid(&back)
    ));
    await_recovery(&server, &registry, &mut events, &clock, killed).await?;
    if let Some(held) = held {
        match held.await.map_err(|e| e.to_string())? {
            Ok(reply) => clock.say(format!(
                "the call made while the server was dead was answered by the new server → {:?}",
                text_of(&reply)
            )),
            Err(e) => clock.say(format!(
                "the call made while the server was dead failed: {e}"
            )),
        }
    }
    server.shutdown().await;
    let _ = back.start_kill();
    let _ = back.wait().await;
    clock.say("shut down; mock server stopped");
    Ok(())
}

/// Waits until the supervisor reports the death, and says how it was detected.
async fn detect_loss(
    events: &mut broadcast::Receiver<Event>,
    clock: &Clock,
    killed: Instant,
) -> DemoResult<()> {
    let lost = wait_state(events, clock, |s| !s.is_ready()).await?;
    if let ConnectionState::Reconnecting { death, delay, .. } = &lost {
        clock.say(format!(
            "death detected {} after the kill: {} ({}); reconnecting in {}",
            since(killed),
            death.cause,
            death.detail,
            human(*delay)
        ));
    }
    Ok(())
}

/// Waits for the new generation and proves a new server answers through the old handle.
async fn await_recovery(
    server: &Supervisor,
    registry: &ToolRegistry,
    events: &mut broadcast::Receiver<Event>,
    clock: &Clock,
    killed: Instant,
) -> DemoResult<()> {
    let ready = wait_state(events, clock, |s| s.is_ready()).await?;
    if let ConnectionState::Ready { generation, .. } = ready {
        clock.say(format!(
            "recovered: generation {generation}, {} after the kill",
            since(killed)
        ));
    }
    clock.say(format!(
        "whoami → {} (a new server answered)",
        whoami(registry, server.name()).await?
    ));
    let echo = registry
        .handle("mcp__demo__echo")
        .map_err(|e| e.to_string())?;
    let reply = echo
        .call(json!({"text": "hello again"}))
        .await
        .map_err(|e| e.to_string())?;
    clock.say(format!(
        "echo through the same tool handle → {:?}",
        text_of(&reply)
    ));
    Ok(())
}

/// Milliseconds since `start`, as people write them: `2.4 ms`, `118 ms`.
fn since(start: Instant) -> String {
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    if ms < 10.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.0} ms")
    }
}

/// ` (pid 8708)`, or nothing when the OS gave no pid.
fn pid(child: &Child) -> String {
    child
        .id()
        .map(|pid| format!(" (pid {pid})"))
        .unwrap_or_default()
}

fn text_of(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Starts `mcp-resilient mock-server --transport KIND --port PORT` and reads its port.
async fn spawn_remote(kind: &str, port: u16) -> DemoResult<(Child, u16)> {
    mcp_mock_server::spawn_process(&me()?, &["mock-server"], kind, port, STEP_LIMIT)
        .await
        .map_err(|e| format!("could not start the mock server: {e}"))
}
