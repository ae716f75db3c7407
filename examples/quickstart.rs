//! Quick start: supervise one MCP server, call a tool through a handle, and keep that handle
//! working across a server restart.
//!
//! ```sh
//! cargo run --example quickstart                                  # an in-process mock server
//! cargo run --example quickstart -- http://127.0.0.1:8000/mcp    # your server: lists its tools
//! ```
//!
//! Against the mock it also kills the server and calls through the same [`ToolHandle`] while
//! it is down; the server starts again on the same port, the supervisor notices, reconnects as a
//! new generation and swaps the tools, and the waiting call is answered by that generation.
//! Against your own server it only lists the tools (calling one could have effects).

use std::time::Duration;

use mcp_mock_server::{MockOptions, MockServer};
use mcp_resilient::{ServerConfig, Supervisor, ToolHandle, ToolRegistry};
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
    let server = Supervisor::spawn(config, &registry)?;
    let generation = server.wait_ready(STEP).await?; // NotReady says the state and why
    println!("ready: generation {generation}");

    // Public names are `mcp__<server>__<tool>`; a handle is resolved at each call.
    let echo: ToolHandle = registry.handle("mcp__demo__echo")?;
    let result = echo.call(json!({"text": "hello"})).await?;
    println!("echo: {:?}", text(&result));

    // The server dies; the supervisor notices and starts reconnecting. The status says so.
    let mut watch = server.watch();
    mock.faults().kill();
    let died = tokio::time::timeout(STEP, watch.wait_for(|status| !status.is_ready()))
        .await?
        .ok_or("the supervisor stopped")?;
    println!("the server died: {died}");

    // A call made now waits for the server to come back (the server's `call_wait`, 10 s by
    // default); meanwhile it starts again on the same port.
    let restart = tokio::spawn(MockServer::start(MockOptions {
        port,
        ..MockOptions::default()
    }));
    let result = echo.call(json!({"text": "hello again"})).await?;
    let generation = server.generation().ok_or("not ready after the call")?;
    println!(
        "echo, answered by generation {generation}: {:?}",
        text(&result)
    );

    server.shutdown().await;
    restart.await??.shutdown().await;
    mock.shutdown().await;
    Ok(())
}

/// Lists the tools of the server at `url` (protocol and transport detected).
async fn list(url: &str) -> Res<()> {
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(ServerConfig::remote("server", url), &registry)?;
    let ready = server.wait_ready(STEP).await;
    if let Err(not_ready) = ready {
        server.shutdown().await;
        return Err(not_ready.into()); // NotReady: the server and its state when the wait ended
    }
    // A server's text goes to the terminal quoted (`{:?}`): a description must not retitle,
    // clear or recolour it.
    for tool in registry.snapshot().tools() {
        let about = tool.definition.description.as_deref().unwrap_or("");
        let about = about.lines().next().unwrap_or("");
        println!("{:40} {about:?}", format!("{:?}", &*tool.public_name));
    }
    server.shutdown().await;
    Ok(())
}

/// The text parts of a tool result.
fn text(result: &mcp_resilient::rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("")
}
