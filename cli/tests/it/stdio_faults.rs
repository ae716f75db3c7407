//! Stdio children that fail in the ways real servers do: a deadlocked child whose stdin pipe is
//! full, one that ignores SIGTERM, one that dies right after its first tool listing (the window in
//! which a death report used to be lost), and a give-up that is announced once.

use std::time::Duration;

use crate::common::*;
use mcp_resilient::{
    ConnectionState, Supervisor, ToolRegistry,
    config::{Heartbeat, Reconnect},
    state::{Cause, Event},
};
use serde_json::json;

fn heartbeat() -> Heartbeat {
    Heartbeat::default()
        .interval(Duration::from_millis(400))
        .timeout(Duration::from_millis(200))
        .failures(2)
}

/// A child that stops reading stdin while two callers push 300 KB each at it: the pipe fills,
/// rmcp's writer blocks (holding its lock), and neither a probe nor rmcp's own close can get
/// through. The heartbeat must judge it dead (a full pipe is not a busy server) and the close
/// must kill it without waiting on rmcp. The two calls, never written whole, go to the next child.
async fn a_wedged_child_is_replaced(extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("lock");
    let lock_arg = lock.to_string_lossy().into_owned();
    let mut args = vec!["--lock-file", lock_arg.as_str()];
    args.extend_from_slice(extra);
    let registry = ToolRegistry::new();
    let config = stdio_mock("wedged", &args).heartbeat(heartbeat());
    let server = Supervisor::spawn(config, &registry).unwrap();
    let first = server.wait_ready(LIMIT).await.expect("ready");
    let mut events = server.events();
    let mut state = server.watch();
    let (boot1, pid1) = whoami(&registry, "wedged").await;
    call(&registry, "wedged", "wedge", json!({})).await;
    let big = "x".repeat(300 * 1024);
    let echo = registry.handle("mcp__wedged__echo").unwrap();
    let callers: Vec<_> = (0..2)
        .map(|_| {
            let (echo, big) = (echo.clone(), big.clone());
            tokio::spawn(async move { echo.call(json!({ "text": big })).await })
        })
        .collect();
    let lost = wait_event(&mut events, |e| {
        matches!(
            e,
            Event::State {
                status: mcp_resilient::Status {
                    state: ConnectionState::Reconnecting { .. } | ConnectionState::Failed { .. },
                    ..
                },
                ..
            }
        )
    })
    .await;
    let Event::State {
        status:
            mcp_resilient::Status {
                state: ConnectionState::Reconnecting { death, .. },
                ..
            },
        ..
    } = lost
    else {
        panic!("the wedged generation must be rebuilt, not failed: {lost:?}")
    };
    assert_eq!(death.cause, Cause::HeartbeatTimeout, "{death:?}");
    // Their lines never went whole into the pipe (the child stopped reading it), so neither can
    // have run: each goes to the next generation, which answers it.
    for caller in callers {
        let outcome = caller.await.unwrap();
        let answer = outcome.expect("answered by the next generation");
        assert_eq!(answer.is_error, Some(false), "{answer:?}");
    }
    let next = wait_state(&mut state, |s| {
        matches!(
            s,
            ConnectionState::Ready { .. } | ConnectionState::Failed { .. }
        )
    })
    .await;
    assert!(
        matches!(next, ConnectionState::Ready { generation, .. } if generation > first),
        "{next:?}"
    );
    let (boot2, _) = whoami(&registry, "wedged").await;
    assert_ne!(boot1, boot2, "a new child answers");
    assert!(!alive(pid1), "the wedged child was killed and reaped");
    assert!(
        !dir.path().join("lock.overlap").exists(),
        "two children were alive at once"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_deadlocked_child_with_a_full_stdin_pipe_is_replaced() {
    init_tracing();
    a_wedged_child_is_replaced(&[]).await;
}

#[tokio::test]
async fn a_deadlocked_child_that_ignores_sigterm_is_killed_and_replaced() {
    init_tracing();
    a_wedged_child_is_replaced(&["--ignore-sigterm"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_child_that_dies_right_after_its_first_listing_is_never_left_ready() {
    init_tracing();
    // Each child exits right after answering its first tools/list: the generation dies in the
    // moment it becomes current. Its death report must reach the supervisor every time, so the
    // crash loop ends `failed`; a lost report would leave the server `ready` with a dead child.
    let runs: Vec<_> = (0..12)
        .map(|i| {
            tokio::spawn(async move {
                let registry = ToolRegistry::new();
                let config = stdio_mock(&format!("brief{i}"), &["--exit-after-list"]).reconnect(
                    Reconnect::default()
                        .initial_delay(Duration::from_millis(5))
                        .max_delay(Duration::from_millis(50))
                        .max_attempts(3),
                );
                let server = Supervisor::spawn(config, &registry).unwrap();
                let mut state = server.watch();
                let end =
                    wait_state(&mut state, |s| matches!(s, ConnectionState::Failed { .. })).await;
                server.shutdown().await;
                end
            })
        })
        .collect();
    for run in runs {
        let end = run.await.expect("run");
        let ConnectionState::Failed { death, .. } = end else {
            unreachable!()
        };
        assert!(
            matches!(death.cause, Cause::ProcessExited | Cause::ConnectFailed),
            "{death:?}"
        );
    }
}

#[tokio::test]
async fn giving_up_is_announced_once() {
    init_tracing();
    let registry = ToolRegistry::new();
    let config = shell("quitter", "exit 7").reconnect(
        Reconnect::default()
            .initial_delay(Duration::from_millis(5))
            .max_delay(Duration::from_millis(20))
            .max_attempts(3),
    );
    let server = Supervisor::spawn(config, &registry).unwrap();
    let mut events = server.events();
    let mut state = server.watch();
    wait_state(&mut state, |s| matches!(s, ConnectionState::Failed { .. })).await;
    server.shutdown().await;
    let mut failed = 0;
    while let Ok(Some(event)) = events.try_recv() {
        failed += usize::from(matches!(
            event,
            Event::State {
                status: mcp_resilient::Status {
                    state: ConnectionState::Failed { .. },
                    ..
                },
                ..
            }
        ));
    }
    assert_eq!(failed, 1, "one `failed`, however the give-up came about");
}

#[tokio::test]
async fn a_reconnect_to_an_unchanged_server_announces_no_tool_change() {
    init_tracing();
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(stdio_mock("same", &[]), &registry).unwrap();
    server.wait_ready(LIMIT).await.expect("ready");
    let mut events = server.events();
    let mut changes = registry.changes();
    call(&registry, "same", "crash", json!({})).await;
    let mut tool_events = 0;
    let ready = wait_event(&mut events, |e| {
        tool_events += usize::from(matches!(e, Event::Tools(_)));
        matches!(
            e,
            Event::State {
                status: mcp_resilient::Status {
                    state: ConnectionState::Ready { .. },
                    ..
                },
                ..
            }
        )
    })
    .await;
    assert!(matches!(ready, Event::State { status, .. } if status.ready().is_some_and(|g| g == 2)));
    assert_eq!(tool_events, 0, "no tool change announced on the reconnect");
    assert_eq!(
        registry.snapshot().server("same").unwrap().generation,
        2,
        "the new generation's list is registered"
    );
    assert!(
        matches!(changes.try_recv(), Ok(None)),
        "the registry saw no change"
    );
    server.shutdown().await;
}
