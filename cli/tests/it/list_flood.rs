//! A server that floods `notifications/tools/list_changed`, on stdio and over Streamable HTTP:
//! the mock's hostile reply kind `list-changed-flood` writes 10,000 of them at once (one write on
//! stdio, one event stream over HTTP) before each of its first two `tools/list` answers, the first while the attempt lists (no generation is current yet), the second while
//! the re-listing that the first asked for runs. Each notification reaches the generation's
//! handler, which tells the supervisor task; that task is busy meanwhile: on the test's one
//! runtime thread it runs only after the reader has handed on what it read, a burst at a time.
//! What bounds its mailbox is that each sender has at most one message waiting
//! (`src/mailbox.rs`); this measures the mailbox end to end, through the supervisor's peak
//! depth.
//!
//! Measured (debug build): with the bound the peak is 1 message (48 bytes) on both transports;
//! without it (every notification queued, `ListChange::raise`'s check removed) it was 128 on
//! stdio and 64 over HTTP, the messages the reader hands on in one turn (tokio's cooperative
//! budget) before the supervisor task runs; a task kept waiting longer would queue the whole
//! flood. Three listings answered the 20,000
//! notifications either way: the re-sync is coalesced.

use serde_json::{Value, json};

use crate::common::{LIMIT, fast, mock_binary, wait_state};
use mcp_mock_server::{HostileReplies, ReplyKind, ReplyOptions};
use mcp_resilient::{ConnectionState, ServerConfig, Supervisor, ToolRegistry};

/// The notifications in one flood.
const FLOOD: u64 = 10_000;

/// The most messages that may wait for the supervisor task at once: the generation's handler
/// is the one sender of list changes here (one waiting at most), and a death report or a
/// shutdown could be queued beside it.
const MAILBOX_BOUND: usize = 2;

/// The listings a flood may cost: the attempt's own, and one re-listing per flood (the
/// changes that arrive while one runs are coalesced into the next).
const LISTINGS_BOUND: u64 = 3;

/// What the flooding server has done so far: (listings answered, notifications sent).
async fn counts(registry: &ToolRegistry) -> (u64, u64) {
    let handle = registry
        .handle("mcp__flood__echo")
        .expect("echo registered");
    let result = tokio::time::timeout(LIMIT, handle.call(json!({})))
        .await
        .expect("the call ended within the test limit")
        .expect("the call worked");
    let counts = result.structured_content.unwrap_or(Value::Null);
    let field = |name: &str| counts[name].as_u64().expect("a count");
    (field("lists"), field("listChanged"))
}

/// Runs a supervisor of `config` (a server named `flood`) against the flood, and checks the
/// bounds once the quiet third listing has been answered.
async fn flood_is_bounded(config: ServerConfig) {
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(config, &registry).expect("valid config");
    let mut watch = server.watch();
    wait_state(&mut watch, ConnectionState::is_ready).await;
    // The second flood came before the second listing's answer; the third listing is quiet.
    // Wait (with a deadline) until that third listing has been answered: by then every
    // notification was read, in order, before it was asked for.
    let deadline = tokio::time::Instant::now() + LIMIT;
    let (lists, sent) = loop {
        let (lists, sent) = counts(&registry).await;
        if lists > 2 {
            break (lists, sent);
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the flooded re-listing was not followed by a quiet one within {LIMIT:?} ({lists} lists)"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    let peak = server.mailbox_peak();
    eprintln!("list_changed sent: {sent}; listings: {lists}; mailbox peak: {peak}");
    assert_eq!(sent, 2 * FLOOD, "both floods went out");
    assert!(
        peak <= MAILBOX_BOUND,
        "{sent} notifications queued {peak} messages at once for the supervisor"
    );
    assert!(
        lists <= LISTINGS_BOUND,
        "{sent} notifications cost {lists} listings"
    );
    assert_eq!(
        server.status().ready().map(u64::from),
        Some(1),
        "a flood is no death"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_list_changed_flood_on_stdio_leaves_at_most_one_message_per_sender_waiting() {
    let args = [
        "mock-server",
        "--hostile",
        "list-changed-flood",
        "--list-changed",
        &FLOOD.to_string(),
        "--transport",
        "stdio",
    ]
    .map(str::to_owned);
    flood_is_bounded(fast(ServerConfig::stdio("flood", mock_binary()).args(args))).await;
}

#[tokio::test]
async fn a_list_changed_flood_over_http_leaves_at_most_one_message_per_sender_waiting() {
    // Each flood is one event stream: the notifications, then the listing's answer.
    let options = ReplyOptions {
        list_changed: FLOOD as u32,
        ..ReplyOptions::new(ReplyKind::ListChangedFlood)
    };
    let mock = HostileReplies::start(options)
        .await
        .expect("hostile server");
    flood_is_bounded(fast(ServerConfig::http("flood", mock.url()))).await;
    mock.shutdown().await;
}
