//! The standalone `GET` stream of a 2025-11-25 Streamable HTTP session as a death signal
//! (issue 24 item 2): when it ends it is opened again at once, a refusal is the generation's
//! death, and a new stream is life. Against a real mock server process.

use std::time::Duration;

use mcp_resilient::{
    ConnectionState, ServerConfig, Supervisor, ToolRegistry, config::Heartbeat, state::Event,
};
use serde_json::json;

use crate::common::{LIMIT, era_2025, fast, lost, process::MockProcess, whoami};

/// A heartbeat far longer than every wait here: a loss seen within [`LIMIT`] was not seen by it.
fn idle(config: ServerConfig) -> ServerConfig {
    fast(config).heartbeat(
        Heartbeat::default()
            .interval(Duration::from_secs(600))
            .timeout(Duration::from_secs(5))
            .failures(1),
    )
}

/// How many standalone `GET`s the server has received.
async fn gets(mock: &MockProcess) -> usize {
    let requests = mock.admin_get("requests").await;
    let requests = requests.as_array().map(Vec::as_slice).unwrap_or_default();
    let get = |q: &&serde_json::Value| q["method"] == "GET" && q["path"] == "/mcp";
    requests.iter().filter(get).count()
}

async fn started(mock: &MockProcess, name: &str) -> (Supervisor, ToolRegistry, u64) {
    let registry = ToolRegistry::new();
    let config = idle(era_2025(ServerConfig::http(name, mock.url())));
    let supervisor = Supervisor::spawn(config, &registry).expect("start");
    let generation = supervisor.wait_ready(LIMIT).await.expect("ready").get();
    mock.wait_streams(1).await;
    (supervisor, registry, generation)
}

#[tokio::test]
async fn an_idle_2025_session_reports_a_server_kill_by_its_stream_not_its_heartbeat() {
    let mut mock = MockProcess::start("http").await;
    let (supervisor, _registry, _) = started(&mock, "idle").await;
    let mut events = supervisor.events();
    mock.kill().await;
    let (_, death, _) = lost(&mut events).await;
    assert!(
        death.detail.contains("standalone GET stream"),
        "the stream reported it: {death:?}"
    );
    assert!(!death.detail.contains("heartbeat"), "{death:?}");
    supervisor.shutdown().await;
}

#[tokio::test]
async fn a_proxy_that_cuts_an_idle_standalone_stream_costs_no_generation() {
    let mock = MockProcess::start("http").await;
    let (supervisor, registry, generation) = started(&mock, "cut").await;
    let mut events = supervisor.events();
    let before = gets(&mock).await;
    mock.admin("cut-streams", json!({})).await;
    // Bounded: the stream is opened again on the same session, and held open.
    tokio::time::timeout(LIMIT, async {
        while gets(&mock).await <= before {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the stream was opened again");
    mock.wait_streams(1).await;
    whoami(&registry, "cut").await;
    let status = supervisor.status();
    assert_eq!(
        status.ready().map(u64::from),
        Some(generation),
        "same generation: {status:?}"
    );
    while let Ok(Some(event)) = events.try_recv() {
        assert!(
            !matches!(&event, Event::State { status, .. } if matches!(status.state, ConnectionState::Reconnecting { .. })),
            "no loss: {event:?}"
        );
    }
    supervisor.shutdown().await;
}
