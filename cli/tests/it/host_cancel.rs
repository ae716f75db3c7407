//! The server takes back a question it asked the host: over a 2025-11-25 Streamable HTTP
//! session (the lean link), `notifications/cancelled` for a request of the server's drops the
//! host's handler and no answer is sent for it.

use std::sync::{
    Arc,
    atomic::{AtomicBool, Ordering},
};

use crate::common::*;
use mcp_mock_server::{MockOptions, MockServer, MockTransport};
use mcp_resilient::{ServerConfig, Supervisor, ToolRegistry, host::HostHandlers};
use rmcp::model::{ElicitResult, ErrorData};
use serde_json::{Value, json};

/// Sets its flag when dropped: the handler's future was dropped with it.
struct Dropped(Arc<AtomicBool>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn a_question_the_server_withdraws_drops_the_hosts_handler_and_is_not_answered() {
    init_tracing();
    let server_side = MockServer::start(MockOptions {
        transport: MockTransport::Http,
        ..MockOptions::default()
    })
    .await
    .expect("mock server starts");
    let dropped = Arc::new(AtomicBool::new(false));
    let (called, mut started) = tokio::sync::mpsc::unbounded_channel();
    let flag = dropped.clone();
    // A host that never answers: only the server's cancellation ends its handler.
    let handlers = HostHandlers::new().on_elicit(move |_, _| {
        let guard = Dropped(flag.clone());
        let _ = called.send(());
        async move {
            let _guard = guard;
            std::future::pending::<Result<ElicitResult, ErrorData>>().await
        }
    });
    let config =
        era_2025(fast(ServerConfig::http("asking", server_side.http_url()))).handlers(handlers);
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(config, &registry).expect("valid config");
    server.wait_ready(LIMIT).await.expect("ready");
    assert_eq!(server.status().protocol(), Some("2025-11-25"));

    let asking = call(
        &registry,
        "asking",
        "confirm",
        json!({"question": "still?", "withdraw": true}),
    );
    // The mock withdraws its question once the counter is bumped: once the handler runs.
    let withdraw = async {
        let handler_ran = tokio::time::timeout(LIMIT, started.recv()).await;
        assert!(matches!(handler_ran, Ok(Some(()))), "the host was asked");
        server_side.faults().bump_counter().await;
    };
    let (answer, ()) = tokio::join!(tokio::time::timeout(LIMIT, asking), withdraw);
    let answer = format!("{:?}", answer.expect("confirm answers within the limit"));
    let id = answer
        .split("withdrawn ")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .and_then(|id| id.parse::<Value>().ok())
        .unwrap_or_else(|| panic!("a withdrawn question: {answer}"));
    until("the host's handler is dropped", || {
        dropped.load(Ordering::SeqCst)
    })
    .await;

    // No POST of the client carried an answer (a result or an error) for that id.
    let answers = server_side
        .faults()
        .requests()
        .into_iter()
        .filter_map(|request| serde_json::from_str::<Value>(&request.body).ok())
        .flat_map(|body| match body {
            Value::Array(batch) => batch,
            one => vec![one],
        })
        .filter(|message| message.get("method").is_none())
        .filter(|message| message.get("id") == Some(&id))
        .collect::<Vec<_>>();
    assert!(
        answers.is_empty(),
        "answered a withdrawn request: {answers:?}"
    );
    server.shutdown().await;
    server_side.shutdown().await;
}
