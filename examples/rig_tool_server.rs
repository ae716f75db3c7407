//! Builds a rig agent's tool server from an `mcpServers` file and keeps it in step with the
//! supervised servers. It calls no model: it prints the tools an agent would be offered, then
//! stops.
//!
//! ```sh
//! cargo run --features rig,rig-agent --example rig_tool_server -- ~/.cursor/mcp.json
//! ```
//!
//! In a real host, hand the tool server to the agent and keep the sync running as long as the
//! agent lives:
//!
//! ```ignore
//! let agent = rig_agent::agent::AgentBuilder::new(model)
//!     .preamble("You can use the tools of my MCP servers.")
//!     .tool_server_handle(tools.clone())
//!     .build();
//! ```
//!
//! Exit code: 0 when every loaded server became ready, 1 when some did not (their tools join
//! the agent once they do), 2 on a usage or configuration error.

use std::{path::PathBuf, process::ExitCode, time::Duration};

use mcp_resilient::{Supervisor, ToolRegistry, config::load_servers_file, rig::ToolSync};
use rig_agent::tool::server::ToolServer;

#[tokio::main]
async fn main() -> ExitCode {
    let Some(path) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: rig_tool_server MCP_SERVERS_JSON");
        return ExitCode::from(2);
    };
    let loaded = match load_servers_file(&path) {
        Ok(loaded) => loaded,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::from(2);
        }
    };
    for warning in loaded.warnings() {
        eprintln!("warning: {warning}");
    }

    // One registry for every server; one supervisor per server publishes into it.
    let registry = ToolRegistry::new();
    let mut supervisors = Vec::new();
    for config in loaded.into_servers() {
        match Supervisor::spawn(config, &registry) {
            Ok(supervisor) => supervisors.push(supervisor),
            Err(error) => eprintln!("warning: not started: {error}"),
        }
    }

    // The agent's tool server, and the task that keeps it in step with the registry: tools
    // appear and disappear with their servers, and each one calls whatever generation of its
    // server is current.
    let tools = ToolServer::new().owner("mcp").run();
    let sync = ToolSync::start(registry.clone(), tools.clone());

    let mut all_ready = true;
    for supervisor in &supervisors {
        match supervisor.wait_ready(Duration::from_secs(30)).await {
            Ok(generation) => eprintln!("{}: ready (generation {generation})", supervisor.name()),
            Err(state) => {
                all_ready = false;
                eprintln!("{}: not ready ({state})", supervisor.name());
            }
        }
    }

    // What the agent would offer the model on its next request. The sync runs in its own task:
    // wait (bounded) until it has installed what the registry holds.
    let expected = registry.snapshot().len();
    let _ = tokio::time::timeout(Duration::from_secs(5), async {
        while tools.toolset().len() < expected {
            tokio::task::yield_now().await;
        }
    })
    .await;
    match tools.tool_defs(None).await {
        Ok(definitions) => {
            for definition in definitions {
                println!("{}\t{}", definition.name.as_str(), definition.description);
            }
        }
        Err(error) => eprintln!("error: {error}"),
    }

    sync.shutdown().await;
    for supervisor in &supervisors {
        supervisor.shutdown().await;
    }
    if all_ready {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
