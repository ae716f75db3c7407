//! `mcp-resilient proxy` as a host sees it: the proxy is a real child process driven over its
//! stdio by an rmcp client; the upstreams are mock servers in their own processes.

use std::io::Write;

use crate::common::{
    LIMIT, alive,
    host::{Host, text},
    mock_binary,
    process::MockProcess,
};
use mcp_mock_server::Whoami;
use serde_json::json;

/// Fast supervision for the proxy's upstreams: failures are noticed and retried in milliseconds.
const FAST: [&str; 8] = [
    "--heartbeat-interval",
    "400ms",
    "--heartbeat-timeout",
    "150ms",
    "--reconnect-initial",
    "20ms",
    "--reconnect-max",
    "200ms",
];

fn proxy_args<'a>(upstream: &'a [&'a str], extra: &'a [&'a str]) -> Vec<&'a str> {
    let mut args: Vec<&str> = FAST.to_vec();
    args.extend_from_slice(extra);
    args.extend_from_slice(upstream);
    args
}

async fn whoami(host: &Host, tool: &str) -> Whoami {
    let result = host.call(tool, json!({})).await;
    Whoami::from_result(&result).unwrap_or_else(|| panic!("a whoami result: {result:?}"))
}

/// Calls `tool` until it succeeds (each call itself waits for a ready generation up to the
/// proxy's call wait), at most [`LIMIT`].
async fn call_until_ok(
    host: &Host,
    tool: &str,
    args: serde_json::Value,
) -> rmcp::model::CallToolResult {
    let deadline = tokio::time::Instant::now() + LIMIT;
    loop {
        let result = host.call(tool, args.clone()).await;
        if result.is_error != Some(true) {
            return result;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{tool} still failing after {LIMIT:?}: {}",
            text(&result)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_and_restarted_upstream_never_ends_the_host_session() {
    for kind in ["http", "sse"] {
        let mut mock = MockProcess::start(kind).await;
        let url = mock.url();
        let transport = if kind == "sse" { "sse" } else { "http" };
        let host = Host::start(&proxy_args(
            &["--name", "mock", "--transport", transport, "--url", &url],
            &[],
        ))
        .await;
        // Transparent: the upstream's raw names and its own server info.
        let names = host.tool_names().await;
        assert!(names.contains(&"echo".to_owned()), "{kind}: {names:?}");
        let info = host.session.peer().peer_info().expect("server info");
        let name = info.server_info.as_ref().map(|i| i.name.as_str());
        assert_eq!(name, Some("mcp-mock-server"), "{kind}");
        assert_eq!(
            text(&host.call("echo", json!({"text": "before"})).await),
            "before"
        );
        let first = whoami(&host, "whoami").await;

        mock.kill().await;
        // A call made while the upstream is down waits for the next generation.
        let during = host.try_call("echo", json!({"text": "during"}));
        let restart = async {
            mock.restart().await;
        };
        let (during, ()) = tokio::join!(during, restart);
        let during = during.expect("the call during the outage is answered");
        match during.is_error {
            Some(true) => assert!(
                text(&during).contains("'mock'"),
                "{kind}: an outage error names the server: {}",
                text(&during)
            ),
            _ => assert_eq!(text(&during), "during", "{kind}"),
        }
        let after = call_until_ok(&host, "echo", json!({"text": "after"})).await;
        assert_eq!(text(&after), "after", "{kind}");
        let second = whoami(&host, "whoami").await;
        assert_ne!(
            first.boot_id, second.boot_id,
            "{kind}: answered by the new process"
        );
        assert!(
            !host.session.is_closed(),
            "{kind}: the host's session stayed up"
        );
        let status = host.close().await;
        assert!(
            status.success(),
            "{kind}: the proxy exits cleanly: {status}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_during_a_long_outage_gets_a_plain_language_tool_error() {
    let mut mock = MockProcess::start("http").await;
    let url = mock.url();
    let host = Host::start_logged(&proxy_args(
        &["--name", "mock", "--url", &url],
        &["--call-wait", "300ms"],
    ))
    .await;
    assert_eq!(text(&host.call("echo", json!({"text": "up"})).await), "up");
    mock.kill().await;
    // Once the proxy knows (a call racing the death may have been sent, and would say so).
    host.wait_log("connection lost", 1).await;
    let failed = host.call("echo", json!({"text": "down"})).await;
    assert_eq!(failed.is_error, Some(true), "{failed:?}");
    let words = text(&failed);
    assert!(words.starts_with("The MCP server 'mock'"), "{words}");
    assert!(words.contains("The call was not run."), "{words}");
    assert!(
        [
            "Reconnection attempt",
            "Connection attempt",
            "starts it again"
        ]
        .iter()
        .any(|next| words.contains(next)),
        "says when the next attempt is: {words}"
    );
    // The tools stay listed during the outage: the last good set.
    assert!(host.tool_names().await.contains(&"echo".to_owned()));
    mock.restart().await;
    let back = call_until_ok(&host, "echo", json!({"text": "back"})).await;
    assert_eq!(text(&back), "back");
    assert!(host.close().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_held_when_the_upstream_gives_up_waits_for_the_proxy_to_start_it_again() {
    let mut mock = MockProcess::start("http").await;
    let url = mock.url();
    let host = Host::start_logged(&proxy_args(
        &["--name", "mock", "--url", &url],
        &["--max-attempts", "2", "--call-wait", "15s"],
    ))
    .await;
    assert_eq!(text(&host.call("echo", json!({"text": "up"})).await), "up");
    mock.kill().await;
    host.wait_log("connection lost", 1).await;
    let held = host.try_call("echo", json!({"text": "held"}));
    let restart = async {
        // The supervisor spends its two attempts and gives up while the call waits; only then
        // does the server come back, for the proxy's own restart to find.
        host.wait_log("giving up", 1).await;
        mock.restart().await;
    };
    let (held, ()) = tokio::join!(held, restart);
    let held = held.expect("the held call is answered");
    assert_ne!(held.is_error, Some(true), "{held:?}");
    assert_eq!(text(&held), "held");
    assert!(host.close().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_upstream_is_answered_for_and_recovers_under_the_same_host_session() {
    let mock = MockProcess::start("http").await;
    let url = mock.url();
    let host = Host::start(&proxy_args(
        &["--name", "mock", "--url", &url],
        &["--call-wait", "300ms", "--call-timeout", "1s"],
    ))
    .await;
    assert_eq!(
        text(&host.call("echo", json!({"text": "before"})).await),
        "before"
    );
    mock.admin("hang", json!({})).await;
    // The hung server answers nothing: the call ends with a tool error (a timeout, or the
    // outage the heartbeat declared), never with the host's session.
    let hung = host.call("echo", json!({"text": "hung"})).await;
    assert_eq!(hung.is_error, Some(true), "{hung:?}");
    assert!(text(&hung).contains("'mock'"), "{}", text(&hung));
    mock.admin("unhang", json!({})).await;
    let after = call_until_ok(&host, "echo", json!({"text": "after"})).await;
    assert_eq!(text(&after), "after");
    assert!(!host.session.is_closed());
    assert!(host.close().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_session_is_rebuilt_without_the_host_noticing() {
    let mock = MockProcess::start("http").await;
    let url = mock.url();
    let host = Host::start(&proxy_args(
        &["--name", "mock", "--protocol", "2025-11-25", "--url", &url],
        &[],
    ))
    .await;
    let before = whoami(&host, "whoami").await;
    mock.admin("expire-sessions", json!({})).await;
    // The upstream refuses the old session unrun (404); the call goes to the new session.
    let result = host.call("echo", json!({"text": "again"})).await;
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert_eq!(text(&result), "again");
    let after = whoami(&host, "whoami").await;
    assert_eq!(before.boot_id, after.boot_id, "same process, new session");
    assert!(host.close().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_hears_list_changed_exactly_when_its_tools_changed() {
    let mut mock = MockProcess::start("http").await;
    let url = mock.url();
    let mut host = Host::start(&proxy_args(&["--name", "mock", "--url", &url], &[])).await;
    let first = whoami(&host, "whoami").await;
    // A restart that lists the same tools is not a change.
    mock.restart().await;
    let deadline = tokio::time::Instant::now() + LIMIT;
    while whoami(&host, "whoami").await.boot_id == first.boot_id {
        assert!(
            tokio::time::Instant::now() < deadline,
            "never reached the new process"
        );
    }
    // A real change is announced once; its undoing once more.
    mock.admin("set-tools", json!({"add": ["extra"], "notify": true}))
        .await;
    host.wait_seen("the added tool announced", |s| s.tools_changed >= 1)
        .await;
    assert!(host.tool_names().await.contains(&"extra".to_owned()));
    mock.admin("set-tools", json!({"remove": ["extra"], "notify": true}))
        .await;
    host.wait_seen("the removal announced", |s| s.tools_changed >= 2)
        .await;
    assert!(!host.tool_names().await.contains(&"extra".to_owned()));
    // Every announcement the restart could have caused was sent before those two.
    assert_eq!(host.seen(|s| s.tools_changed), 2);
    assert!(host.close().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_elicitation_goes_to_the_host_in_both_eras() {
    for protocol in ["2025-11-25", "2026-07-28"] {
        let mock = MockProcess::start("http").await;
        let url = mock.url();
        let mut host = Host::start(&proxy_args(
            &["--name", "mock", "--protocol", protocol, "--url", &url],
            &[],
        ))
        .await;
        let result = host.call("confirm", json!({"question": "Ship it?"})).await;
        assert_eq!(
            text(&result),
            "confirmed: true (from the host)",
            "{protocol}: {result:?}"
        );
        host.wait_seen("the elicitation", |s| s.elicitations.len() == 1)
            .await;
        assert!(host.close().await.success());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_the_host_leaves_every_upstream_is_closed_and_no_process_is_left() {
    let remote = MockProcess::start("http").await;
    let config = json!({"mcpServers": {
        "child": {"command": mock_binary(), "args": ["mock-server", "--transport", "stdio"]},
        "remote": {"url": remote.url(), "protocol": "2025-11-25"}
    }});
    let mut file = tempfile::NamedTempFile::new().expect("temp file");
    write!(file, "{config}").expect("write config");
    let path = file.path().to_str().expect("utf-8 path").to_owned();
    let host = Host::start(&proxy_args(&["--config", &path], &[])).await;
    let child = whoami(&host, "mcp__child__whoami").await;
    assert!(alive(child.pid), "the upstream child runs");
    assert_eq!(remote.admin_get("state").await["sessions"], 1);
    let status = host.close().await;
    assert!(status.success(), "{status}");
    // The proxy closed each upstream before it exited: the child reaped, the remote session
    // ended with a DELETE rather than left to expire.
    assert!(
        !alive(child.pid),
        "upstream {} outlived the proxy",
        child.pid
    );
    assert_eq!(remote.admin_get("state").await["sessions"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_of_three_aggregated_upstreams_crashing_leaves_the_others_answering() {
    let mut mocks = Vec::new();
    for _ in 0..3 {
        mocks.push(MockProcess::start("http").await);
    }
    let mut file = tempfile::NamedTempFile::new().expect("temp file");
    let servers: serde_json::Map<String, serde_json::Value> = ["a", "b", "c"]
        .iter()
        .zip(&mocks)
        .map(|(name, mock)| (name.to_string(), json!({"url": mock.url()})))
        .collect();
    write!(file, "{}", json!({"mcpServers": servers})).expect("write config");
    let path = file.path().to_str().expect("utf-8 path").to_owned();
    let host =
        Host::start_logged(&proxy_args(&["--config", &path], &["--call-wait", "300ms"])).await;
    let names = host.tool_names().await;
    for server in ["a", "b", "c"] {
        assert!(
            names.contains(&format!("mcp__{server}__echo")),
            "{server}: {names:?}"
        );
    }
    let a = whoami(&host, "mcp__a__whoami").await;
    let c = whoami(&host, "mcp__c__whoami").await;
    mocks[1].kill().await;
    host.wait_log("connection lost", 1).await;
    // While b is down, a and c answer from the processes and sessions they had.
    for round in 0..5 {
        let text_a = text(
            &host
                .call("mcp__a__echo", json!({"text": format!("a{round}")}))
                .await,
        );
        let text_c = text(
            &host
                .call("mcp__c__echo", json!({"text": format!("c{round}")}))
                .await,
        );
        assert_eq!((text_a, text_c), (format!("a{round}"), format!("c{round}")));
    }
    let down = host.call("mcp__b__echo", json!({"text": "b"})).await;
    assert_eq!(down.is_error, Some(true), "{down:?}");
    assert!(
        text(&down).starts_with("The MCP server 'b'"),
        "{}",
        text(&down)
    );
    assert_eq!(whoami(&host, "mcp__a__whoami").await.boot_id, a.boot_id);
    assert_eq!(whoami(&host, "mcp__c__whoami").await.boot_id, c.boot_id);
    mocks[1].restart().await;
    let back = call_until_ok(&host, "mcp__b__echo", json!({"text": "b back"})).await;
    assert_eq!(text(&back), "b back");
    assert!(host.close().await.success());
}

/// Any result as JSON, to look into it.
fn json<T: serde::Serialize>(value: &T) -> serde_json::Value {
    serde_json::to_value(value).expect("serializes")
}

/// Waits (at most [`LIMIT`]) until the mock's `/_mock/state` satisfies `want`.
async fn mock_state_until(
    mock: &MockProcess,
    what: &str,
    want: impl Fn(&serde_json::Value) -> bool,
) {
    let deadline = tokio::time::Instant::now() + LIMIT;
    loop {
        let state = mock.admin_get("state").await;
        if want(&state) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the mock never reached {what}: {state}"
        );
        tokio::task::yield_now().await;
    }
}

// Logging is deprecated by SEP-2577; hosts of the session era still set levels.
#[allow(deprecated)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_prompts_completions_logging_progress_and_cancellation_pass_through() {
    use rmcp::model::{
        CallToolRequest, CallToolRequestParams, ClientRequest, GetPromptRequestParams,
        ReadResourceRequestParams, SetLevelRequestParams, SubscribeRequestParams,
    };
    for protocol in ["2025-11-25", "2026-07-28"] {
        let mut mock = MockProcess::start("http").await;
        let url = mock.url();
        let mut host = Host::start(&proxy_args(
            &["--name", "mock", "--protocol", protocol, "--url", &url],
            &[],
        ))
        .await;
        let peer = host.session.peer().clone();

        // Resources: listed, read, templated.
        let resources = peer.list_all_resources().await.expect("resources/list");
        let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
        assert!(
            uris.contains(&"mock://static/hello") && uris.contains(&"mock://counter"),
            "{protocol}: {uris:?}"
        );
        let hello = peer
            .read_resource(ReadResourceRequestParams::new("mock://static/hello"))
            .await
            .expect("resources/read");
        assert_eq!(json(&hello)["contents"][0]["text"], "hello", "{protocol}");
        let templates = peer.list_all_resource_templates().await.expect("templates");
        assert!(
            templates
                .iter()
                .any(|t| t.uri_template == "mock://echo/{text}"),
            "{protocol}"
        );
        let echoed = peer
            .read_resource(ReadResourceRequestParams::new("mock://echo/hi"))
            .await
            .expect("templated read");
        assert_eq!(json(&echoed)["contents"][0]["text"], "hi", "{protocol}");

        // A subscription lives on across an upstream restart.
        peer.subscribe(SubscribeRequestParams::new("mock://counter"))
            .await
            .expect("resources/subscribe");
        mock_state_until(&mock, "one subscription", |s| {
            s["resource_subscriptions"] == 1
        })
        .await;
        mock.admin("bump-counter", json!({})).await;
        host.wait_seen("the first update", |s| s.resources_updated.len() == 1)
            .await;
        mock.restart().await;
        mock_state_until(&mock, "the subscription renewed", |s| {
            s["resource_subscriptions"] == 1
        })
        .await;
        mock.admin("bump-counter", json!({})).await;
        host.wait_seen("the update after the restart", |s| {
            s.resources_updated.len() == 2
        })
        .await;
        assert!(host.seen(|s| s.resources_updated.iter().all(|u| u == "mock://counter")));

        // Prompts and completions.
        let prompts = peer.list_all_prompts().await.expect("prompts/list");
        assert!(prompts.iter().any(|p| p.name == "greet"), "{protocol}");
        let mut arguments = serde_json::Map::new();
        arguments.insert("name".into(), json!("Ada"));
        let greeting = peer
            .get_prompt(GetPromptRequestParams::new("greet").with_arguments(arguments))
            .await
            .expect("prompts/get");
        assert_eq!(
            json(&greeting)["messages"][0]["content"]["text"],
            "Hello, Ada!",
            "{protocol}"
        );
        let names = peer
            .complete_prompt_simple("greet", "name", "al")
            .await
            .expect("completion/complete");
        assert_eq!(names, ["alice", "albert"], "{protocol}");

        // Logging: the host's level reaches the upstream (a request in 2025, each call's _meta in
        // 2026), and the upstream's messages reach the host.
        peer.set_level(SetLevelRequestParams::new(
            rmcp::model::LoggingLevel::Warning,
        ))
        .await
        .expect("logging/setLevel");
        let quiet = host
            .call("log", json!({"level": "info", "message": "hush"}))
            .await;
        assert!(
            text(&quiet).starts_with("not logged"),
            "{protocol}: {}",
            text(&quiet)
        );
        let loud = host
            .call("log", json!({"level": "error", "message": "careful"}))
            .await;
        assert!(
            text(&loud).starts_with("logged"),
            "{protocol}: {}",
            text(&loud)
        );
        host.wait_seen("the log message", |s| !s.logs.is_empty())
            .await;
        assert_eq!(host.seen(|s| s.logs[0].data.clone()), json!("careful"));

        // Progress comes back under the host's own token.
        let mut params = CallToolRequestParams::new("progress");
        params = params.with_arguments(json!({"steps": 3, "ms": 5}).as_object().unwrap().clone());
        let (token, handle) = host
            .send(ClientRequest::CallToolRequest(CallToolRequest::new(params)))
            .await;
        let done = tokio::time::timeout(LIMIT, handle.await_response())
            .await
            .expect("progress call answered")
            .expect("progress call");
        assert_eq!(
            json(&done)["content"][0]["text"],
            "progressed 3 steps",
            "{protocol}"
        );
        host.wait_seen("three progress notifications", |s| {
            s.progress
                .iter()
                .filter(|p| p.progress_token == token)
                .count()
                == 3
        })
        .await;

        // The host's cancellation reaches the upstream.
        let before = mock.admin_get("state").await["calls"].as_u64().unwrap_or(0);
        let params = CallToolRequestParams::new("sleep")
            .with_arguments(json!({"ms": 30000}).as_object().unwrap().clone());
        let (_, handle) = host
            .send(ClientRequest::CallToolRequest(CallToolRequest::new(params)))
            .await;
        mock_state_until(&mock, "the sleep running", |s| {
            s["calls"].as_u64().unwrap_or(0) > before
        })
        .await;
        handle
            .cancel(Some("the host changed its mind".into()))
            .await
            .expect("cancel sent");
        mock_state_until(&mock, "the sleep cancelled", |s| s["cancelled"] == 1).await;
        assert!(host.close().await.success(), "{protocol}");
    }
}

// resources/subscribe is the session era's, which is what hosts speak.
#[allow(deprecated)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aggregated_prompts_get_public_names_and_resources_reach_the_server_that_lists_them() {
    let one = MockProcess::start("http").await;
    let two = MockProcess::start("http").await;
    let config = json!({"mcpServers": {
        "one": {"url": one.url()},
        "two": {"url": two.url(), "protocol": "2025-11-25"}
    }});
    let mut file = tempfile::NamedTempFile::new().expect("temp file");
    write!(file, "{config}").expect("write config");
    let path = file.path().to_str().expect("utf-8 path").to_owned();
    let mut host = Host::start(&proxy_args(&["--config", &path], &[])).await;
    let peer = host.session.peer().clone();
    let info = peer.peer_info().expect("server info");
    let name = info.server_info.as_ref().map(|i| i.name.as_str());
    assert_eq!(
        name,
        Some("mcp-resilient"),
        "aggregated: the proxy speaks for itself"
    );

    let prompts = peer.list_all_prompts().await.expect("prompts/list");
    let mut names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["mcp__one__greet", "mcp__two__greet"]);
    let mut arguments = serde_json::Map::new();
    arguments.insert("name".into(), json!("Bo"));
    let greeting = peer
        .get_prompt(
            rmcp::model::GetPromptRequestParams::new("mcp__two__greet").with_arguments(arguments),
        )
        .await
        .expect("prompts/get by public name");
    assert_eq!(
        json(&greeting)["messages"][0]["content"]["text"],
        "Hello, Bo!"
    );
    let names = peer
        .complete_prompt_simple("mcp__one__greet", "name", "bo")
        .await
        .expect("completion by public prompt name");
    assert_eq!(names, ["bob"]);

    // Both list mock://counter; the first in name order serves it. A subscription goes there and
    // only there.
    let resources = peer.list_all_resources().await.expect("resources/list");
    assert_eq!(
        resources
            .iter()
            .filter(|r| r.uri == "mock://counter")
            .count(),
        2
    );
    peer.subscribe(rmcp::model::SubscribeRequestParams::new("mock://counter"))
        .await
        .expect("resources/subscribe");
    mock_state_until(&one, "the subscription at one", |s| {
        s["resource_subscriptions"] == 1
    })
    .await;
    assert_eq!(two.admin_get("state").await["resource_subscriptions"], 0);
    one.admin("bump-counter", json!({})).await;
    host.wait_seen("the update from one", |s| s.resources_updated.len() == 1)
        .await;
    // A templated URI no listing names is read from the first server that can.
    let echoed = peer
        .read_resource(rmcp::model::ReadResourceRequestParams::new(
            "mock://echo/aggregated",
        ))
        .await
        .expect("templated read");
    assert_eq!(json(&echoed)["contents"][0]["text"], "aggregated");
    assert!(host.close().await.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_down_at_start_is_answered_for_and_its_tools_follow_with_list_changed() {
    // A port that was just served and is now closed: the upstream is down when the host starts.
    // The handle holds the port until the restart: it refuses, and no parallel test takes it.
    let mut mock = MockProcess::start("http").await;
    let url = mock.url();
    mock.kill().await;
    let mut host = Host::start(&proxy_args(
        &["--name", "mock", "--url", &url],
        &["--startup-wait", "300ms"],
    ))
    .await;
    // initialize was answered without the upstream, with what the proxy can pass on.
    let info = host.session.peer().peer_info().expect("server info");
    assert!(info.capabilities.tools.is_some() && info.capabilities.resources.is_some());
    assert!(host.tool_names().await.is_empty());
    assert_eq!(host.seen(|s| s.tools_changed), 0);
    mock.restart().await;
    host.wait_seen("the tools announced", |s| s.tools_changed >= 1)
        .await;
    assert!(host.tool_names().await.contains(&"echo".to_owned()));
    assert_eq!(
        text(&host.call("echo", json!({"text": "late"})).await),
        "late"
    );
    assert!(host.close().await.success());
}

/// `ProxyError::Config` names the server and leaves the cause to its source, so a chain
/// printed whole tells the cause once.
#[test]
fn a_bad_upstream_configuration_is_told_once_in_the_error_chain() {
    let config = mcp_resilient::ServerConfig::http("files", "ftp://127.0.0.1/mcp");
    let error = mcp_resilient_gateway::Proxy::transparent(config).expect_err("an ftp URL");
    assert_eq!(
        error.to_string(),
        "server 'files' has an invalid configuration"
    );
    let cause = std::error::Error::source(&error).expect("the configuration error is the source");
    assert!(
        cause.to_string().contains("scheme must be http or https"),
        "{cause}"
    );
}
