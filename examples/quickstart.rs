//! Quick start: supervise one MCP server, call a tool through a handle, and keep that handle
//! working across a server restart.
//!
//! ```sh
//! cargo run --example quickstart                                  # an in-process mock server
//! cargo run --example quickstart -- http://127.0.0.1:8000/mcp    # your server: lists its tools
//! ```
//!
//! Against the mock it also kills the server, starts it again on the same port, and calls
//! through the same [`ToolHandle`]: the supervisor noticed the death, reconnected as a new
//! generation and swapped the tools, and the handle follows. Against your own server it only
//! lists the tools (calling one could have effects).

use std::time::Duration;

use mcp_mock_server::{MockOptions, MockServer};
use mcp_resilient::text::for_terminal_line;
use mcp_resilient::{ServerConfig, Supervisor, ToolHandle, ToolRegistry, state::Event};
use serde_json::json;

/// How long each step may take before the example gives up.
const STEP: Duration = Duration::from_secs(15);

type Res<T> = Result<T, Box<dyn std::error::Error>>;

#[tokio::main]
async fn main() -> Res<()> {
    if let Some(url) = std::env::args().nth(1) {
        return list(&url).await;
    }
    let mock = MockServer::start(MockOptions::default()).await?;
    let port = mock.addr().port();

    // One registry for every server a host talks to; one supervisor per server.
    let registry = ToolRegistry::new();
    let config = ServerConfig::remote("demo", mock.http_url());
    let server = Supervisor::start(config, registry.clone()).await?;
    let generation = server
        .wait_ready(STEP)
        .await
        .map_err(|state| format!("not ready: {state}"))?;
    println!("ready: generation {generation}");

    // Public names are `mcp__<server>__<tool>`; a handle is resolved at each call.
    let echo: ToolHandle = registry.handle("mcp__demo__echo")?;
    let result = echo.call(json!({"text": "hello"})).await?;
    println!("echo: {}", for_terminal_line(&text(&result)));

    // The server dies; the supervisor notices and starts reconnecting. The event carries the
    // state it announces (read it there: `state()` may still be catching up).
    let mut events = server.events();
    mock.faults().kill();
    let died = wait_for(
        &mut events,
        |e| matches!(e, Event::State { state, .. } if !state.is_ready()),
    )
    .await?;
    if let Event::State { state, .. } = &died {
        println!("the server died: {state}");
    }

    // It comes back on the same port; the same handle works on the new generation.
    let restarted = MockServer::start(MockOptions {
        port,
        ..MockOptions::default()
    })
    .await?;
    let ready = wait_for(
        &mut events,
        |e| matches!(e, Event::State { state, .. } if state.is_ready()),
    )
    .await?;
    let Event::State { generation, .. } = ready else {
        return Err("not a state event".into());
    };
    let result = echo.call(json!({"text": "hello again"})).await?;
    println!(
        "echo on generation {generation}: {}",
        for_terminal_line(&text(&result))
    );

    server.shutdown().await;
    restarted.shutdown().await;
    mock.shutdown().await;
    Ok(())
}

/// Lists the tools of the server at `url` (protocol and transport detected).
async fn list(url: &str) -> Res<()> {
    let registry = ToolRegistry::new();
    let server = Supervisor::start(ServerConfig::remote("server", url), registry.clone()).await?;
    let ready = server.wait_ready(STEP).await;
    if let Err(state) = ready {
        server.shutdown().await;
        return Err(format!("not ready within {STEP:?}: {state}").into());
    }
    // A server's text goes to the terminal escaped: a description must not retitle, clear or
    // recolour it.
    for tool in registry.snapshot().tools() {
        let about = tool.definition.description.as_deref().unwrap_or("");
        let name = for_terminal_line(&tool.public_name);
        println!("{name:40} {}", for_terminal_line(about));
    }
    server.shutdown().await;
    Ok(())
}

/// The text parts of a tool result.
fn text(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("")
}

/// Waits (at most [`STEP`]) for an event that `want` accepts.
async fn wait_for(
    events: &mut tokio::sync::broadcast::Receiver<Event>,
    want: impl Fn(&Event) -> bool,
) -> Res<Event> {
    tokio::time::timeout(STEP, async {
        loop {
            match events.recv().await {
                Ok(event) if want(&event) => return Ok(event),
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(e) => return Err(e.to_string()),
            }
        }
    })
    .await
    .map_err(|_| format!("no such event within {STEP:?}"))?
    .map_err(Into::into)
}
