//! Protocol eras: 2026-07-28 (`server/discover`, no sessions, no `ping`) next to the
//! initialize era, over Streamable HTTP and stdio; the 2026-only (`modern_only`) and stateless
//! switches; requests counted by JSON-RPC method.

use crate::common;
use crate::modern;
use crate::raw;

use std::collections::BTreeMap;

use common::{ping, text, within};
use mcp_mock_server::{MockOptions, MockServer, MockTransport, Whoami};
use modern::{Asker, Era, connect_http, connect_stdio, error_code, params, spawn_stdio};
use raw::{StdioChild, admin, header, initialize, mock_state, post, request};
use rmcp::model::{ClientRequest, ErrorCode, PingRequest};
use serde_json::{Value, json};

async fn start(opts: MockOptions) -> MockServer {
    within("start", MockServer::start(opts))
        .await
        .expect("start")
}

fn http(stateless: bool) -> MockOptions {
    MockOptions {
        transport: MockTransport::Http,
        stateless,
        ..MockOptions::default()
    }
}

async fn ping_code(running: &modern::Running) -> Result<(), ErrorCode> {
    let request = ClientRequest::PingRequest(PingRequest::default());
    match within("ping", running.send_request(request)).await {
        Ok(_) => Ok(()),
        Err(error) => Err(error_code(Err::<(), _>(error))),
    }
}

async fn whoami(running: &modern::Running) -> Whoami {
    let result = within("whoami", running.call_tool(params("whoami", json!({}))))
        .await
        .expect("whoami");
    Whoami::from_result(&result).expect("a whoami result")
}

fn count(methods: &BTreeMap<String, u64>, method: &str) -> u64 {
    methods.get(method).copied().unwrap_or(0)
}

#[tokio::test]
async fn a_discover_client_over_http_is_served_and_its_ping_is_method_not_found() {
    let server = start(http(false)).await;
    let modern = connect_http(&server.http_url(), Era::Modern, Asker::mute()).await;
    let tools = within("list", modern.list_all_tools()).await.expect("list");
    assert!(tools.iter().any(|t| t.name == "confirm"), "{tools:?}");
    let echoed = within(
        "echo",
        modern.call_tool(params("echo", json!({"text": "new"}))),
    );
    assert_eq!(text(&echoed.await.expect("echo")), "new");
    assert_eq!(ping_code(&modern).await, Err(ErrorCode::METHOD_NOT_FOUND));
    assert_eq!(ping_code(&modern).await, Err(ErrorCode::METHOD_NOT_FOUND));

    let legacy = connect_http(&server.http_url(), Era::Legacy, Asker::mute()).await;
    assert_eq!(ping_code(&legacy).await, Ok(()));

    let state = server.faults().state().await;
    assert_eq!(count(&state.methods, "server/discover"), 1, "{state:?}");
    assert_eq!(count(&state.methods, "ping"), 3, "{state:?}");
    assert_eq!(count(&state.methods, "initialize"), 1, "{state:?}");
    assert_eq!(state.sessions, 1, "only the legacy client has a session");
    let who = whoami(&modern).await;
    assert_eq!(who.methods, {
        let mut after = state.methods.clone();
        *after.entry("tools/call".into()).or_default() += 1;
        after
    });
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn a_discover_client_over_stdio_is_served_and_its_pings_are_counted() {
    let mut child = spawn_stdio(&[]);
    let running = connect_stdio(&mut child, Era::Modern, Asker::mute()).await;
    let tools = within("list", running.list_all_tools())
        .await
        .expect("list");
    assert!(tools.iter().any(|t| t.name == "end_listens"), "{tools:?}");
    let added = within(
        "add",
        running.call_tool(params("add", json!({"a": 1, "b": 2}))),
    );
    assert_eq!(text(&added.await.expect("add")), "3");
    for _ in 0..3 {
        assert_eq!(ping_code(&running).await, Err(ErrorCode::METHOD_NOT_FOUND));
    }
    let who = whoami(&running).await;
    assert_eq!(count(&who.methods, "server/discover"), 1, "{who:?}");
    assert_eq!(count(&who.methods, "ping"), 3, "{who:?}");
    assert_eq!(count(&who.methods, "initialize"), 0, "{who:?}");
    assert_eq!(count(&who.methods, "tools/call"), 2, "{who:?}");
    assert_eq!(count(&who.methods, "tools/list"), 1, "{who:?}");
}

#[tokio::test]
async fn a_legacy_client_over_stdio_pings_and_its_requests_are_counted() {
    let mut child = spawn_stdio(&[]);
    let running = connect_stdio(&mut child, Era::Legacy, Asker::mute()).await;
    ping(&running).await.expect("a legacy ping is answered");
    ping(&running).await.expect("a legacy ping is answered");
    let who = whoami(&running).await;
    let expected: BTreeMap<String, u64> = [("initialize", 1), ("ping", 2), ("tools/call", 1)]
        .into_iter()
        .map(|(method, n)| (method.to_owned(), n))
        .collect();
    assert_eq!(who.methods, expected, "notifications are not counted");
}

#[tokio::test]
async fn modern_only_stdio_refuses_initialize_with_32022_and_then_serves_discover() {
    let mut server = StdioChild::spawn(&["--modern-only"]);
    server.send(&initialize(json!(1))).await;
    let refused = server.recv().await;
    assert_eq!(refused["id"], json!(1), "{refused}");
    assert_eq!(refused["error"]["code"], json!(-32022), "{refused}");
    assert_eq!(refused["error"]["data"]["supported"], json!(["2026-07-28"]));
    assert_eq!(refused["error"]["data"]["requested"], json!("2025-06-18"));

    // The session is still open: a 2026-07-28 client goes on with server/discover.
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    server
        .send(&request(
            json!(2),
            "server/discover",
            json!({"_meta": meta}),
        ))
        .await;
    let discovered = server.recv().await;
    assert_eq!(discovered["id"], json!(2), "{discovered}");
    assert_eq!(
        discovered["result"]["supportedVersions"],
        json!(["2026-07-28"]),
        "a 2026-only server advertises that version alone: {discovered}"
    );
    server.kill().await;
}

#[tokio::test]
async fn a_discover_client_is_served_by_a_modern_only_stdio_server() {
    let mut child = spawn_stdio(&["--modern-only"]);
    let running = connect_stdio(&mut child, Era::Modern, Asker::mute()).await;
    let echoed = within(
        "echo",
        running.call_tool(params("echo", json!({"text": "ok"}))),
    );
    assert_eq!(text(&echoed.await.expect("echo")), "ok");
}

#[tokio::test]
async fn a_modern_only_http_server_counts_the_initialize_it_refuses() {
    let server = start(http(false)).await;
    server.faults().set_modern_only(true);
    let refused = within(
        "init",
        post(&server.http_url(), None, &initialize(json!(1))).send(),
    );
    let refused = refused.await.expect("answer");
    assert_eq!(refused.status(), reqwest::StatusCode::BAD_REQUEST);
    let state = server.faults().state().await;
    assert_eq!(count(&state.methods, "initialize"), 1, "{state:?}");
    assert_eq!(state.faults_injected, 1);
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn a_stateless_server_serves_legacy_clients_without_sessions() {
    let server = start(http(true)).await;
    let url = server.http_url();
    let init = within("init", post(&url, None, &initialize(json!(1))).send())
        .await
        .expect("init");
    assert_eq!(init.status(), reqwest::StatusCode::OK);
    assert_eq!(
        header(&init, "mcp-session-id"),
        None,
        "stateless: no session"
    );
    drop(init);
    let stream = within("get", common::http_client().get(&url).send())
        .await
        .expect("get");
    assert_eq!(stream.status(), reqwest::StatusCode::METHOD_NOT_ALLOWED);

    let running = connect_http(&url, Era::Legacy, Asker::mute()).await;
    let echoed = within(
        "echo",
        running.call_tool(params("echo", json!({"text": "s"}))),
    );
    assert_eq!(text(&echoed.await.expect("echo")), "s");
    let state = server.faults().state().await;
    assert!(state.stateless);
    assert_eq!((state.sessions, state.streams), (0, 0), "{state:?}");

    // Switched back, a new initialize gets a session again.
    let (status, _) = admin(&server, "stateless", json!({"on": false})).await;
    assert!(status.is_success());
    assert_eq!(mock_state(&server).await["stateless"], json!(false));
    let init = within("init", post(&url, None, &initialize(json!(2))).send())
        .await
        .expect("init");
    assert!(header(&init, "mcp-session-id").is_some(), "sessions again");
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn the_binary_takes_stateless_and_reports_methods_in_its_state() {
    let program = env!("CARGO_BIN_EXE_mcp-mock-server");
    let (_child, port) = within(
        "spawn",
        mcp_mock_server::spawn_process(program, &["--stateless"], "http", 0, common::DEADLINE),
    )
    .await
    .expect("spawn");
    let base = format!("http://127.0.0.1:{port}");
    let url = format!("{base}/mcp");
    let init = within("init", post(&url, None, &initialize(json!(1))).send())
        .await
        .expect("init");
    assert_eq!(header(&init, "mcp-session-id"), None);
    drop(init);
    let state: Value = within(
        "state",
        common::http_client()
            .get(format!("{base}/_mock/state"))
            .send(),
    )
    .await
    .expect("state")
    .json()
    .await
    .expect("json");
    assert_eq!(state["stateless"], json!(true), "{state}");
    assert_eq!(state["methods"], json!({"initialize": 1}), "{state}");
}
