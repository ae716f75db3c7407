//! The demo's steps and its clock: starting a supervised mock, waiting for a state or a loss,
//! proving a new server answers, and printing each line with its time.

use std::time::Duration;

use mcp_resilient::{
    ConnectionState, ServerConfig, Supervisor, ToolRegistry,
    config::{Heartbeat, Reconnect},
    state::Event,
};
use serde_json::json;
use tokio::{process::Child, time::Instant};

use crate::output::human;

pub(super) const STEP_LIMIT: Duration = Duration::from_secs(20);

pub(super) type DemoResult<T> = Result<T, String>;

pub(super) struct Clock(pub(super) Instant);

impl Clock {
    /// Prints one line of the story. It quotes what servers said (a cause's detail, a reply), so
    /// it is redacted and escaped like every human line.
    pub(super) fn say(&self, message: impl AsRef<str>) {
        println!(
            "[{:>6.0} ms] {}",
            self.0.elapsed().as_secs_f64() * 1000.0,
            crate::safe::line(&crate::text::redact(message.as_ref()))
        );
    }
}

pub(super) fn policy(config: ServerConfig) -> ServerConfig {
    config
        .heartbeat(
            Heartbeat::default()
                .interval(Duration::from_millis(500))
                .timeout(Duration::from_millis(150))
                .failures(2),
        )
        .reconnect(
            Reconnect::default()
                .initial_delay(Duration::from_millis(100))
                .max_delay(Duration::from_secs(2)),
        )
}

pub(super) fn me() -> DemoResult<String> {
    std::env::current_exe()
        .map(|p| p.to_string_lossy().into_owned())
        .map_err(|e| format!("cannot find my own executable: {e}"))
}

/// Starts supervising `config`, waits until it is ready, and says so (with who answered).
/// Events are subscribed after `ready`, so the caller sees only what follows.
pub(super) async fn start_ready(
    config: ServerConfig,
    clock: &Clock,
    place: &str,
) -> DemoResult<(
    Supervisor,
    ToolRegistry,
    mcp_resilient::state::EventReceiver,
)> {
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(config, &registry).map_err(|e| e.to_string())?;
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
    events: &mut mcp_resilient::state::EventReceiver,
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
            Event::State { status, .. } => match status.state {
                state if want(&state) => return Ok(state),
                ConnectionState::Failed { death, .. } => {
                    return Err(format!(
                        "supervisor failed: {}: {}",
                        death.cause, death.detail
                    ));
                }
                _ => {}
            },
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

/// Waits until the supervisor reports the death, and says how it was detected.
pub(super) async fn detect_loss(
    events: &mut mcp_resilient::state::EventReceiver,
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
pub(super) async fn await_recovery(
    server: &Supervisor,
    registry: &ToolRegistry,
    events: &mut mcp_resilient::state::EventReceiver,
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
pub(super) fn pid(child: &Child) -> String {
    child
        .id()
        .map(|pid| format!(" (pid {pid})"))
        .unwrap_or_default()
}

pub(super) fn text_of(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Starts `mcp-resilient mock-server --transport KIND --port PORT` and reads its port.
pub(super) async fn spawn_remote(kind: &str, port: u16) -> DemoResult<(Child, u16)> {
    mcp_mock_server::spawn_process(&me()?, &["mock-server"], kind, port, STEP_LIMIT)
        .await
        .map_err(|e| format!("could not start the mock server: {e}"))
}
