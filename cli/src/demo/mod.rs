//! `mcp-resilient demo`: the recovery story on the embedded mock server, with timings.
//!
//! For each transport: connect → call → kill the server → death detected (and by what) →
//! server back → ready on a new generation with the tools re-listed → a call served by the new
//! server (a different boot id proves it).

use std::time::Duration;

use mcp_resilient::{ServerConfig, config::TransportConfig};
use serde_json::json;
use tokio::time::Instant;

mod steps;

use steps::{
    Clock, DemoResult, await_recovery, detect_loss, me, pid, policy, spawn_remote, start_ready,
    text_of,
};

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

async fn stdio() -> DemoResult<()> {
    let clock = Clock(Instant::now());
    let mut config =
        policy(ServerConfig::stdio("demo", me()?).args(["mock-server", "--transport", "stdio"]));
    if matches!(config.transport(), TransportConfig::Stdio(_)) {
        config = config
            .stdin_close_grace(Duration::from_millis(500))
            .term_grace(Duration::from_millis(500));
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
