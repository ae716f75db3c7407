//! The configs that reach the mock server, and small helpers shared by every scenario. The
//! mock as a separate process (`mcp-resilient mock-server`) is the tests' own
//! (`tests/support/`). Every wait has a deadline; 127.0.0.1 only.
//!
//! The configs built here are pinned to protocol 2025-11-25 (sessions, `initialize`, `ping`):
//! sections 1-6 measure that era, and the 2026-07-28 section overrides the choice itself.

use std::{
    collections::BTreeMap,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use mcp_mock_server::Whoami;
use mcp_resilient::{
    ServerConfig, ToolRegistry,
    config::{Heartbeat, ProtocolChoice, Reconnect, TransportConfig},
};
use serde_json::json;

pub use crate::support::{mock_binary as binary, process::MockProcess, try_wait_state};

/// The limit of every single wait in the benchmark.
pub const LIMIT: Duration = Duration::from_secs(30);

pub type Res<T> = Result<T, String>;

/// Microseconds since the Unix epoch: the clock shared with the mock's request log.
pub fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// The era of sections 1-6. Legacy SSE negotiates 2024-11-05 whatever the choice.
pub const PINNED: ProtocolChoice = ProtocolChoice::V2025_11_25;

/// A remote config for `mock` (legacy SSE or Streamable HTTP) with the given policies, pinned
/// to [`PINNED`].
pub fn remote(
    name: &str,
    mock: &MockProcess,
    reconnect: Reconnect,
    heartbeat: Heartbeat,
) -> ServerConfig {
    let config = match mock.kind {
        "sse" => ServerConfig::sse(name, mock.url()),
        _ => ServerConfig::http(name, mock.url()),
    };
    config
        .protocol(PINNED)
        .reconnect(reconnect)
        .heartbeat(heartbeat)
        .call_timeout(Duration::from_secs(10))
        .connect_timeout(Duration::from_secs(20))
}

/// A stdio config that runs the mock as a child, pinned to [`PINNED`].
pub fn stdio(name: &str, reconnect: Reconnect, heartbeat: Heartbeat) -> ServerConfig {
    let mut config = ServerConfig::stdio(name, binary())
        .args(["mock-server", "--transport", "stdio"])
        .protocol(PINNED)
        .reconnect(reconnect)
        .heartbeat(heartbeat)
        .call_timeout(Duration::from_secs(10))
        .connect_timeout(Duration::from_secs(20));
    if matches!(config.transport(), TransportConfig::Stdio(_)) {
        config = config
            .stdin_close_grace(Duration::from_millis(200))
            .term_grace(Duration::from_millis(200));
    }
    config
}

/// A known backoff: `initial` first, doubling, jitter `jitter`, a large budget.
pub fn backoff(initial: Duration, jitter: f64) -> Reconnect {
    Reconnect::default()
        .initial_delay(initial)
        .max_delay(initial * 8)
        .jitter(jitter)
        .max_attempts(10)
}

/// Calls `echo` through the registry and checks the answer really is the echo.
pub async fn echo(registry: &ToolRegistry, server: &str, text: &str) -> Res<()> {
    let handle = registry
        .handle(&format!("mcp__{server}__echo"))
        .map_err(|e| e.to_string())?;
    let result = handle
        .call(json!({ "text": text }))
        .await
        .map_err(|e| format!("echo: {e}"))?;
    check_echo(&result, text)
}

/// A `tools/call echo` result is a success only if it is not `isError` and echoes `text`.
pub fn check_echo(result: &rmcp::model::CallToolResult, text: &str) -> Res<()> {
    if result.is_error == Some(true) {
        return Err("echo returned isError".into());
    }
    let got = result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.as_str());
    if got != Some(text) {
        return Err(format!("echo answered {got:?}, wanted {text:?}"));
    }
    Ok(())
}

/// The whole `whoami` of the server that answers now (boot id, pid, methods received).
pub async fn who(registry: &ToolRegistry, server: &str) -> Res<Whoami> {
    let handle = registry
        .handle(&format!("mcp__{server}__whoami"))
        .map_err(|e| e.to_string())?;
    let result = handle
        .call(json!({}))
        .await
        .map_err(|e| format!("whoami: {e}"))?;
    Whoami::from_result(&result).ok_or_else(|| "whoami: not a whoami result".to_owned())
}

/// Checks the JSON-RPC methods one mock process received against the era its clients speak:
/// 2026-07-28 sends `server/discover` and never `initialize` or `ping`; 2025-11-25 (and legacy
/// SSE) opens with `initialize` and never sends `server/discover`.
pub fn check_era(methods: &BTreeMap<String, u64>, modern: bool) -> Res<()> {
    let n = |m: &str| methods.get(m).copied().unwrap_or(0);
    let ok = if modern {
        n("ping") == 0 && n("initialize") == 0 && n("server/discover") >= 1
    } else {
        n("server/discover") == 0 && n("initialize") >= 1
    };
    if ok {
        Ok(())
    } else {
        let era = if modern { "2026-07-28" } else { "2025-11-25" };
        Err(format!(
            "the mock saw methods {methods:?}, not a {era} client's"
        ))
    }
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
