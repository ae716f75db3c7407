//! The server features beyond tools: capabilities, the `greet` prompt, `completion/complete`,
//! logging (`logging/setLevel` and the `log` tool), the `progress` tool's notifications and the
//! count of cancelled calls, over Streamable HTTP and stdio.
#![allow(deprecated)] // rmcp marks logging deprecated (SEP-2577); the mock serves it

use crate::common;
use crate::modern;
use crate::notes;

use common::{state_until, text, within};
use mcp_mock_server::{MockOptions, MockServer, MockTransport, Whoami};
use modern::{Asker, Era, connect_http, connect_stdio, error_code, params, spawn_stdio};
use notes::{Notes, Recorder};
use rmcp::model::{
    CallToolRequest, ClientRequest, ErrorCode, GetPromptRequestParams, LoggingLevel,
    ProgressNotificationParam, RequestMetaObject, ServerResult, SetLevelRequestParams,
};
use rmcp::service::{PeerRequestOptions, RequestHandle, RunningService};
use rmcp::{ClientHandler, RoleClient};
use serde_json::{Value, json};

async fn start() -> MockServer {
    let opts = MockOptions {
        transport: MockTransport::Http,
        ..MockOptions::default()
    };
    within("start", MockServer::start(opts))
        .await
        .expect("start")
}

type Client<H> = RunningService<RoleClient, H>;

async fn call<H: ClientHandler>(running: &Client<H>, tool: &'static str, args: Value) -> String {
    let result = within(tool, running.call_tool(params(tool, args))).await;
    text(&result.expect(tool))
}

async fn whoami<H: ClientHandler>(running: &Client<H>) -> Whoami {
    let result = within("whoami", running.call_tool(params("whoami", json!({}))))
        .await
        .expect("whoami");
    Whoami::from_result(&result).expect("a whoami result")
}

/// Sends `tools/call tool args` (with `meta` added to its `_meta`) and returns its handle: its
/// id, and the progress token rmcp put in its `_meta`.
async fn send_call<H: ClientHandler>(
    running: &Client<H>,
    tool: &'static str,
    args: Value,
    meta: Option<RequestMetaObject>,
) -> RequestHandle<RoleClient> {
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params(tool, args)));
    let mut options = PeerRequestOptions::no_options();
    if let Some(meta) = meta {
        options = options.with_meta(meta);
    }
    within("send", running.send_cancellable_request(request, options))
        .await
        .expect("sent")
}

async fn reply(handle: RequestHandle<RoleClient>) -> String {
    match within("the reply", handle.await_response()).await {
        Ok(ServerResult::CallToolResult(result)) => text(&result),
        other => panic!("expected a tool result, got {other:?}"),
    }
}

/// The next `count` progress notifications, by progress (rmcp may hand them over in any order).
async fn progress(notes: &mut Notes, count: usize) -> Vec<ProgressNotificationParam> {
    let mut all = Vec::new();
    for _ in 0..count {
        all.push(notes.progress().await);
    }
    all.sort_by(|a, b| a.progress.total_cmp(&b.progress));
    all
}

#[tokio::test]
async fn both_eras_declare_resources_prompts_completions_and_logging() {
    let server = start().await;
    for era in [Era::Legacy, Era::Modern] {
        let running = connect_http(&server.http_url(), era, Asker::mute()).await;
        let info = running.peer_info().expect("server info");
        let caps = serde_json::to_value(&info.capabilities).expect("serializes");
        assert_eq!(
            caps["resources"]["subscribe"],
            json!(true),
            "{era:?}: {caps}"
        );
        assert_eq!(
            caps["resources"]["listChanged"],
            json!(true),
            "{era:?}: {caps}"
        );
        for capability in ["prompts", "completions", "logging", "tools"] {
            assert!(
                caps[capability].is_object(),
                "{era:?}: {capability} in {caps}"
            );
        }
    }
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn the_greet_prompt_is_listed_and_greets_its_name_in_both_eras() {
    let server = start().await;
    for era in [Era::Legacy, Era::Modern] {
        let running = connect_http(&server.http_url(), era, Asker::mute()).await;
        let prompts = within("prompts/list", running.list_all_prompts())
            .await
            .expect("prompts/list");
        let listed = serde_json::to_value(&prompts).expect("serializes");
        assert_eq!(listed[0]["name"], json!("greet"), "{listed}");
        assert_eq!(listed[0]["arguments"][0]["name"], json!("name"), "{listed}");
        assert_eq!(
            listed[0]["arguments"][0]["required"],
            json!(true),
            "{listed}"
        );

        let args = json!({"name": "Ada"}).as_object().cloned().expect("object");
        let get = running.get_prompt(GetPromptRequestParams::new("greet").with_arguments(args));
        let prompt = within("prompts/get", get).await.expect("prompts/get");
        let messages = serde_json::to_value(&prompt.messages).expect("serializes");
        assert_eq!(messages[0]["role"], json!("user"), "{messages}");
        assert_eq!(
            messages[0]["content"]["text"],
            json!("Hello, Ada!"),
            "{messages}"
        );

        let unnamed = running.get_prompt(GetPromptRequestParams::new("greet"));
        let unnamed = within("prompts/get without a name", unnamed).await;
        assert_eq!(error_code(unnamed), ErrorCode::INVALID_PARAMS, "{era:?}");
    }
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn completion_suggests_greet_names_and_echo_template_words_in_both_eras() {
    let server = start().await;
    for era in [Era::Legacy, Era::Modern] {
        let running = connect_http(&server.http_url(), era, Asker::mute()).await;
        let names = running.complete_prompt_simple("greet", "name", "al");
        let names = within("complete a prompt argument", names)
            .await
            .expect("completion/complete");
        assert_eq!(names, ["alice", "albert"], "{era:?}");
        let words = running.complete_resource_simple("mock://echo/{text}", "text", "hel");
        let words = within("complete a template variable", words)
            .await
            .expect("completion/complete");
        assert_eq!(words, ["hello", "help", "helium"], "{era:?}");
        let unknown = running.complete_prompt_simple("nope", "name", "");
        let unknown = within("complete an unknown prompt", unknown).await;
        assert_eq!(error_code(unknown), ErrorCode::INVALID_PARAMS, "{era:?}");
    }
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn the_log_tool_sends_messages_at_or_above_the_level_set_by_set_level() {
    let server = start().await;
    let (recorder, mut notes) = Recorder::new();
    let running = connect_http(&server.http_url(), Era::Legacy, recorder).await;
    // An initialize-era log message goes on the session's standalone GET stream.
    within("standalone stream", server.faults().wait_streams(1)).await;
    let set = running.set_level(SetLevelRequestParams::new(LoggingLevel::Warning));
    within("logging/setLevel", set).await.expect("level set");
    let state = server.faults().state().await;
    assert_eq!(state.log_level.as_deref(), Some("warning"));
    assert_eq!(whoami(&running).await.log_level.as_deref(), Some("warning"));

    let below = call(
        &running,
        "log",
        json!({"level": "info", "message": "quiet"}),
    )
    .await;
    assert_eq!(below, "not logged: info is below warning");
    let sent = call(
        &running,
        "log",
        json!({"level": "error", "message": "boom"}),
    )
    .await;
    assert_eq!(sent, "logged error: boom");
    let message = notes.log().await;
    assert_eq!(message.level, LoggingLevel::Error);
    assert_eq!(message.data, json!("boom"), "the info message was not sent");
    assert_eq!(message.logger.as_deref(), Some("mcp-mock-server"));
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn a_2026_log_call_follows_the_log_level_in_its_meta() {
    let server = start().await;
    let (recorder, mut notes) = Recorder::new();
    let running = connect_http(&server.http_url(), Era::Modern, recorder).await;
    let unasked = call(&running, "log", json!({"level": "error", "message": "x"})).await;
    assert!(unasked.starts_with("not logged: "), "{unasked}");

    let mut meta = RequestMetaObject::new();
    meta.set_log_level(LoggingLevel::Notice);
    let args = json!({"level": "warning", "message": "careful"});
    let handle = send_call(&running, "log", args, Some(meta)).await;
    assert_eq!(reply(handle).await, "logged warning: careful");
    let message = notes.log().await;
    assert_eq!(message.level, LoggingLevel::Warning);
    assert_eq!(message.data, json!("careful"));
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn progress_notifications_carry_the_callers_token_in_both_eras() {
    let server = start().await;
    for era in [Era::Legacy, Era::Modern] {
        let (recorder, mut notes) = Recorder::new();
        let running = connect_http(&server.http_url(), era, recorder).await;
        let handle = send_call(&running, "progress", json!({"steps": 3, "ms": 1}), None).await;
        let token = handle.progress_token.clone();
        assert_eq!(reply(handle).await, "progressed 3 steps", "{era:?}");
        let steps = progress(&mut notes, 3).await;
        for (at, step) in steps.iter().enumerate() {
            assert_eq!(step.progress_token, token, "{era:?}");
            assert_eq!(step.progress, (at + 1) as f64, "{era:?}");
            assert_eq!(step.total, Some(3.0), "{era:?}");
            assert_eq!(step.message, Some(format!("step {}/3", at + 1)), "{era:?}");
        }
    }
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn a_cancelled_sleep_is_counted() {
    let server = start().await;
    let running = connect_http(&server.http_url(), Era::Legacy, Asker::mute()).await;
    let handle = send_call(&running, "sleep", json!({"ms": 600_000}), None).await;
    // The handler counts the call before it starts sleeping.
    state_until(&server, "the sleep running", |state| state.calls == 1).await;
    within("cancel", handle.cancel(Some("test".into())))
        .await
        .expect("notifications/cancelled sent");
    let state = state_until(&server, "the cancellation counted", |state| {
        state.cancelled == 1
    })
    .await;
    assert_eq!(state.calls, 1);
    assert_eq!(whoami(&running).await.cancelled, 1);
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn a_cancelled_progress_call_over_stdio_is_counted() {
    let mut child = spawn_stdio(&[]);
    let (recorder, mut notes) = Recorder::new();
    let running = connect_stdio(&mut child, Era::Modern, recorder).await;
    let args = json!({"steps": 100_000, "ms": 1});
    let handle = send_call(&running, "progress", args, None).await;
    let token = handle.progress_token.clone();
    // The first step's notification proves the call is running.
    assert_eq!(notes.progress().await.progress_token, token);
    within("cancel", handle.cancel(None))
        .await
        .expect("notifications/cancelled sent");
    // Each whoami is a round trip; the server handles the cancellation on its own time.
    within("the cancellation counted", async {
        while whoami(&running).await.cancelled != 1 {}
    })
    .await;
}
