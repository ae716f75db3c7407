//! The `rig` feature end to end: rig-agent's real tool server (`ToolServerHandle`, rig's
//! `ManagedToolSink`) kept in step with the registry, against the mock server as a real child
//! process (stdio) or a real HTTP server process killed with SIGKILL and restarted.

use std::{sync::Arc, time::Duration};

use crate::common::{process::MockProcess, *};
use mcp_resilient::{
    ConnectionState, ServerConfig, Supervisor, ToolRegistry,
    config::Reconnect,
    rig::{ToolSync, dynamic_tool},
};
use rig_agent::tool::{ToolSet, server::ToolServer};
use rig_core::{
    message::ToolName,
    tool::{DynamicTool, ManagedToolSink, ToolContext, ToolErrorKind, ToolOutput},
};
use serde_json::json;

/// Waits, at most [`LIMIT`], until the tool server's set satisfies `want`. Reading the set is
/// what rig itself does before each request (it also retires tools whose probe says not live).
async fn wait_tools(
    sink: &rig_agent::tool::server::ToolServerHandle,
    what: &str,
    want: impl Fn(&ToolSet) -> bool,
) -> ToolSet {
    let found = tokio::time::timeout(LIMIT, async {
        loop {
            let set = sink.toolset();
            if want(&set) {
                return set;
            }
            tokio::task::yield_now().await;
        }
    })
    .await;
    found.unwrap_or_else(|_| {
        let names: Vec<String> = sink.toolset().names().map(str::to_owned).collect();
        panic!("{what}: not seen within {LIMIT:?}; the tool server has {names:?}")
    })
}

/// Runs one tool of the set as an agent would, with JSON arguments.
async fn run(set: &ToolSet, name: &str, args: serde_json::Value) -> rig_core::tool::ToolResult {
    set.execute(name, args.to_string(), &mut ToolContext::new())
        .await
}

/// The `boot_id` in a `whoami` output (its structured content, as JSON or JSON text).
fn boot_id(output: &ToolOutput) -> String {
    output
        .as_content()
        .iter()
        .find_map(|block| {
            let value = match block.as_json() {
                Some(value) => value.clone(),
                None => serde_json::from_str(block.as_text()?).ok()?,
            };
            Some(value.get("boot_id")?.as_str()?.to_owned())
        })
        .expect("a whoami output carries a boot_id")
}

fn names(set: &ToolSet) -> Vec<String> {
    let mut names: Vec<String> = set.names().map(str::to_owned).collect();
    names.sort();
    names
}

#[tokio::test]
async fn the_registrys_tools_appear_in_rigs_tool_server_and_calls_reach_the_server() {
    init_tracing();
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(stdio_mock("files", &[]), &registry).unwrap();
    server.wait_ready(LIMIT).await.expect("ready");
    let sink = ToolServer::new().run();
    let sync = ToolSync::start(registry.clone(), sink.clone());

    let set = wait_tools(&sink, "echo installed", |s| s.contains("mcp__files__echo")).await;
    assert_eq!(
        set.len(),
        registry.snapshot().len(),
        "every tool is installed"
    );
    // The definition the model sees: public name, the server's description and schema unchanged.
    let listed = registry.snapshot().get("mcp__files__echo").unwrap().clone();
    let definition = set
        .tool_definitions()
        .into_iter()
        .find(|d| d.name.as_str() == "mcp__files__echo")
        .expect("echo's definition");
    assert_eq!(
        definition.parameters,
        serde_json::Value::Object(listed.definition.input_schema.as_ref().clone())
    );
    assert_eq!(
        Some(definition.description.as_str()),
        listed.definition.description.as_deref()
    );

    // A call through rig reaches the server; text stays text.
    let echoed = run(&set, "mcp__files__echo", json!({"text": "hello"})).await;
    assert_eq!(echoed.output().as_text(), Some("hello"), "{echoed:?}");
    let (boot, _) = whoami(&registry, "files").await;
    let who = run(&set, "mcp__files__whoami", json!({})).await;
    assert_eq!(boot_id(who.output()), boot);
    // isError becomes a tool error carrying the server's own text.
    let failed = run(&set, "mcp__files__fail", json!({"message": "disk full"})).await;
    assert!(failed.is_error(), "{failed:?}");
    let error = failed.error().unwrap();
    assert!(error.message().contains("disk full"), "{}", error.message());
    assert!(failed.output().render().contains("disk full"));

    sync.shutdown().await;
    server.shutdown().await;
}

#[tokio::test]
async fn after_kill_9_and_restart_the_same_rig_tool_answers_from_the_new_generation() {
    init_tracing();
    let mut mock = MockProcess::start("http").await;
    let registry = ToolRegistry::new();
    let config = fast(ServerConfig::http("remote", mock.url())).reconnect(
        Reconnect::default()
            .initial_delay(Duration::from_millis(20))
            .max_delay(Duration::from_millis(200))
            .max_attempts(1000),
    );
    let server = Supervisor::spawn(config, &registry).unwrap();
    let mut state = server.watch();
    server.wait_ready(LIMIT).await.expect("ready");
    let sink = ToolServer::new().run();
    let sync = ToolSync::start(registry.clone(), sink.clone());
    let before = wait_tools(&sink, "whoami installed", |s| {
        s.contains("mcp__remote__whoami")
    })
    .await;
    let (boot1, _) = whoami(&registry, "remote").await;
    // The very registration rig held before the outage.
    let held = before.get("mcp__remote__whoami").unwrap().clone();
    let held_echo = before.get("mcp__remote__echo").unwrap().clone();
    let probe = dynamic_tool(
        &registry,
        registry.snapshot().get("mcp__remote__whoami").unwrap(),
    );
    assert!(held.is_live() && probe.is_live());

    mock.kill().await;
    wait_state(&mut state, |s| !s.is_ready()).await;
    // The server stays down until the restart below, so this is the outage.
    assert!(!probe.is_live(), "is_live is false during the outage");
    assert!(!held.is_live());
    let down = wait_tools(&sink, "tools retired", |s| {
        !s.contains("mcp__remote__whoami")
    })
    .await;
    assert!(
        names(&down).iter().all(|n| !n.starts_with("mcp__remote__")),
        "no tool of a server that is down is offered: {:?}",
        names(&down)
    );
    let refused = held_echo
        .execute(json!({"text": "now?"}).to_string(), &mut ToolContext::new())
        .await;
    let error = refused.error().expect("a call during the outage fails");
    assert_eq!(error.kind(), ToolErrorKind::Network);
    let words = error.model_feedback().unwrap_or_default().to_owned();
    assert!(
        words.contains("not connected") && words.contains("was not sent"),
        "{words}"
    );

    mock.restart().await;
    wait_state(&mut state, ConnectionState::is_ready).await;
    assert!(probe.is_live() && held.is_live(), "live again once ready");
    let after = wait_tools(&sink, "whoami reinstalled", |s| {
        s.contains("mcp__remote__whoami")
    })
    .await;
    let answered = held.execute("{}".to_owned(), &mut ToolContext::new()).await;
    let boot2 = boot_id(answered.output());
    assert_ne!(
        boot1, boot2,
        "the held rig tool reached the new server process"
    );
    let (now, _) = whoami(&registry, "remote").await;
    assert_eq!(boot2, now);
    let fresh = run(&after, "mcp__remote__whoami", json!({})).await;
    assert_eq!(boot_id(fresh.output()), boot2);

    sync.shutdown().await;
    server.shutdown().await;
    mock.kill().await;
}

#[tokio::test]
async fn tools_removed_upstream_disappear_from_rig_and_added_ones_appear() {
    init_tracing();
    let registry = ToolRegistry::new();
    let alpha = Supervisor::spawn(stdio_mock("alpha", &[]), &registry).unwrap();
    let beta = Supervisor::spawn(stdio_mock("beta", &[]), &registry).unwrap();
    alpha.wait_ready(LIMIT).await.expect("alpha ready");
    beta.wait_ready(LIMIT).await.expect("beta ready");
    let sink = ToolServer::new().run();
    let sync = ToolSync::start(registry.clone(), sink.clone());
    let set = wait_tools(&sink, "both servers installed", |s| {
        s.contains("mcp__alpha__add") && s.contains("mcp__beta__add")
    })
    .await;
    let beta_before: Vec<String> = names(&set)
        .into_iter()
        .filter(|n| n.starts_with("mcp__beta__"))
        .collect();

    call(
        &registry,
        "alpha",
        "set_tools",
        json!({"add": ["late"], "remove": ["add"], "notify": true}),
    )
    .await;
    let set = wait_tools(&sink, "alpha's change", |s| {
        s.contains("mcp__alpha__late") && !s.contains("mcp__alpha__add")
    })
    .await;
    let late = run(&set, "mcp__alpha__late", json!({"text": "new tool"})).await;
    assert_eq!(late.output().as_text(), Some("new tool"), "{late:?}");
    let beta_after: Vec<String> = names(&set)
        .into_iter()
        .filter(|n| n.starts_with("mcp__beta__"))
        .collect();
    assert_eq!(
        beta_before, beta_after,
        "the other server's tools are untouched"
    );

    // A server that goes away takes its tools along; the other stays.
    beta.shutdown().await;
    let set = wait_tools(&sink, "beta removed", |s| !s.contains("mcp__beta__echo")).await;
    assert!(names(&set).iter().all(|n| !n.starts_with("mcp__beta__")));
    assert!(set.contains("mcp__alpha__late"));
    sync.shutdown().await;
    alpha.shutdown().await;
}

#[tokio::test]
async fn a_stale_reconcile_never_undoes_a_newer_registration() {
    init_tracing();
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(stdio_mock("shared", &[]), &registry).unwrap();
    server.wait_ready(LIMIT).await.expect("ready");
    let sink = ToolServer::new().run();
    let sync = ToolSync::start(registry.clone(), sink.clone());
    wait_tools(&sink, "installed", |s| s.contains("mcp__shared__echo")).await;

    // The host registers its own tool under the same name, after the sync installed ours:
    // the newer registration, which no refresh of ours may undo.
    let name = ToolName::new("mcp__shared__echo").unwrap();
    sink.add_dynamic_tool(DynamicTool::new(name, "the host's echo", json!({}), |_| {
        Box::pin(async { Ok(ToolOutput::text("from the host")) })
    }));
    // A burst of upstream changes, each one reconciled with the tokens of the one before.
    for tool in ["one", "two", "three"] {
        call(
            &registry,
            "shared",
            "set_tools",
            json!({"add": [tool], "remove": ["add"]}),
        )
        .await;
    }
    let set = wait_tools(&sink, "the last change", |s| {
        ["one", "two", "three"]
            .iter()
            .all(|t| s.contains(&format!("mcp__shared__{t}")))
            && !s.contains("mcp__shared__add")
    })
    .await;
    let echo = run(&set, "mcp__shared__echo", json!({"text": "ours?"})).await;
    assert_eq!(
        echo.output().as_text(),
        Some("from the host"),
        "the host's newer registration survived every refresh"
    );

    // Replaying an old refresh by hand with tokens that are no longer current changes nothing.
    let snapshot = registry.snapshot();
    let old = mcp_resilient::rig::dynamic_tools(&registry, &snapshot, Some("shared"));
    let stale: std::collections::HashMap<_, _> = [(
        "mcp__shared__one".to_owned(),
        rig_core::tool::ManagedToolToken::new(),
    )]
    .into_iter()
    .collect();
    let granted = sink.reconcile_managed_tools(
        stale,
        old.into_iter()
            .filter(|t| t.name().as_str() == "mcp__shared__one")
            .collect(),
    );
    assert!(
        granted.is_empty(),
        "a stale token cannot replace the current registration"
    );
    // The sync still owns its registration: a later change reconciles it normally.
    call(&registry, "shared", "set_tools", json!({"remove": ["one"]})).await;
    wait_tools(&sink, "one removed", |s| !s.contains("mcp__shared__one")).await;

    sync.shutdown().await;
    server.shutdown().await;
}

#[test]
fn shutdown_leaves_no_task_and_stops_syncing() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        init_tracing();
        let metrics = tokio::runtime::Handle::current().metrics();
        let before = metrics.num_alive_tasks();
        let registry = ToolRegistry::new();
        let server = Supervisor::spawn(stdio_mock("tidy", &[]), &registry).unwrap();
        server.wait_ready(LIMIT).await.expect("ready");
        let sink = ToolServer::new().run();
        let marker = Arc::new(());
        let sync = ToolSync::start(registry.clone(), Marked(sink.clone(), marker.clone()));
        wait_tools(&sink, "installed", |s| s.contains("mcp__tidy__echo")).await;
        let mut changes = registry.changes();

        sync.shutdown().await;
        assert_eq!(
            Arc::strong_count(&marker),
            1,
            "the task ended and dropped the sink it owned"
        );
        // Nothing syncs any more: a change upstream reaches the registry, not the sink.
        call(&registry, "tidy", "set_tools", json!({"add": ["after"]})).await;
        let change = tokio::time::timeout(LIMIT, changes.recv())
            .await
            .expect("change in time")
            .expect("a change");
        assert_eq!(change.added, ["after"]);
        assert!(!sink.toolset().contains("mcp__tidy__after"));

        server.shutdown().await;
        for _ in 0..1000 {
            if metrics.num_alive_tasks() == before {
                break;
            }
            tokio::task::yield_now().await;
        }
        assert_eq!(
            metrics.num_alive_tasks(),
            before,
            "tasks left after shutdown"
        );
    });
}

/// rig-agent's tool server with a marker whose count shows who still holds the sink.
struct Marked(
    rig_agent::tool::server::ToolServerHandle,
    #[allow(dead_code)] Arc<()>,
);

impl ManagedToolSink for Marked {
    fn add_managed_tools(
        &self,
        tools: Vec<DynamicTool>,
    ) -> std::collections::HashMap<String, rig_core::tool::ManagedToolToken> {
        self.0.add_managed_tools(tools)
    }

    fn reconcile_managed_tools(
        &self,
        expected: std::collections::HashMap<String, rig_core::tool::ManagedToolToken>,
        tools: Vec<DynamicTool>,
    ) -> std::collections::HashMap<String, rig_core::tool::ManagedToolToken> {
        self.0.reconcile_managed_tools(expected, tools)
    }
}
