//! The stdio binary's process-level faults: `block`, `wedge`, `--exit-after-list` and
//! `--ignore-sigterm`, driven over the child's pipes.

use crate::common;
use crate::raw;

use std::collections::HashSet;
use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use common::{Client, ping, within};
use raw::{StdioChild, call, sigterm_and_see_it_pending};
use rmcp::ServiceExt;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

/// Long enough that a message answered at once would fall well inside it.
const BLOCK_MS: u64 = 1500;

fn block_with_progress(id: u64) -> Value {
    let mut request = call(id, "block", json!({"ms": BLOCK_MS}));
    request["params"]["_meta"] = json!({"progressToken": "b"});
    request
}

#[tokio::test]
async fn stdio_block_holds_every_message_in_order_then_replies() {
    let mut server = StdioChild::spawn(&[]);
    server.handshake().await;
    server.send(&block_with_progress(2)).await;
    let progress = server.recv().await;
    assert_eq!(
        progress["method"],
        json!("notifications/progress"),
        "{progress}"
    );

    // The server is now blocked: it reads these, but may answer none of them yet.
    server.send(&raw::ping(3)).await;
    server.send(&raw::ping(4)).await;
    server
        .send(&call(5, "set_tools", json!({"add": ["late"]})))
        .await;
    let early = server.recv_within_quiet().await;
    assert!(early.is_none(), "sent while blocked: {early:?}");

    let mut before_reply = HashSet::new();
    let reply = loop {
        let message = server.recv().await;
        if message["id"] == json!(2) {
            break message;
        }
        let key = message["method"]
            .as_str()
            .map_or_else(|| message["id"].to_string(), |method| method.to_owned());
        before_reply.insert(key);
    };
    assert_eq!(
        reply["result"]["content"][0]["text"],
        json!(format!("blocked {BLOCK_MS}ms"))
    );
    for held in ["3", "4", "notifications/tools/list_changed"] {
        assert!(
            before_reply.contains(held),
            "{held} missing before the block reply: {before_reply:?}"
        );
    }
    if !before_reply.contains("5") {
        assert_eq!(server.recv().await["id"], json!(5));
    }
    server.send(&raw::ping(6)).await;
    assert_eq!(server.recv().await["id"], json!(6), "answers at once again");
    server.kill().await;
}

#[tokio::test]
async fn stdio_wedge_stops_reading_stdin_but_stays_alive() {
    let mut server = StdioChild::spawn(&[]);
    server.handshake().await;
    server.send(&call(2, "wedge", json!({}))).await;
    let reply = server.recv().await;
    assert_eq!(
        reply["result"]["content"][0]["text"],
        json!("wedged"),
        "{reply}"
    );

    // Far more than the pipe and any read buffer hold; notifications, so a server that kept
    // reading would never have to answer (and could not stall on its own stdout).
    let line = format!("{}\n", raw::INITIALIZED);
    let flood = line.repeat((1 << 20) / line.len());
    let write = tokio::time::timeout(
        Duration::from_secs(1),
        server.stdin.write_all(flood.as_bytes()),
    );
    assert!(
        write.await.is_err(),
        "the wedged server drained 1 MiB of stdin"
    );
    assert!(
        server.child.try_wait().expect("try_wait").is_none(),
        "the wedged server exited"
    );
    server.kill().await;
}

#[tokio::test]
async fn exit_after_list_exits_0_right_after_the_first_listing() {
    let mut child = StdioChild::spawn(&["--exit-after-list"]);
    let (client, _changed) = Client::new();
    let stdout = child.lines.into_inner().into_inner();
    let running = within("initialize", client.serve((stdout, child.stdin)))
        .await
        .expect("initialize");
    within("ping before listing", ping(&running))
        .await
        .expect("ping");
    let listed = within("list", running.list_tools(None))
        .await
        .expect("the listing arrives whole");
    assert_eq!(listed.tools.len(), mcp_mock_server::BUILTINS.len());
    let status = within("exit after the listing", child.child.wait())
        .await
        .expect("wait");
    assert_eq!(status.code(), Some(0));
}

#[tokio::test]
async fn ignore_sigterm_leaves_the_stdio_server_serving_until_sigkill() {
    let mut child = StdioChild::spawn(&["--ignore-sigterm"]);
    let pid = child.child.id().expect("pid");
    child.handshake().await;
    sigterm_and_see_it_pending(pid).await;
    child.send(&raw::ping(2)).await;
    assert_eq!(child.recv().await["id"], json!(2), "answers after SIGTERM");
    assert!(child.child.try_wait().expect("try_wait").is_none());
    child.child.start_kill().expect("SIGKILL");
    let status = within("SIGKILL", child.child.wait()).await.expect("wait");
    assert_eq!(status.signal(), Some(9));
}
