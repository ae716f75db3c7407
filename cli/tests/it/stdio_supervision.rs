//! The supervisor end to end on the stdio transport, against the mock server as a real child.

use std::{sync::Arc, time::Duration};

use crate::common::*;
use mcp_resilient::{
    CallError, ConnectionState, Supervisor, ToolRegistry,
    call::CallOptions,
    config::{Heartbeat, Reconnect},
    state::{Cause, Event, Reason},
};
use serde_json::json;

#[tokio::test]
async fn recovers_after_a_child_crash_on_a_new_generation() {
    init_tracing();
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(stdio_mock("crashy", &[]), &registry).unwrap();
    let first = server.wait_ready(LIMIT).await.expect("ready");
    let mut events = server.events();
    let echo = registry
        .handle("mcp__crashy__echo")
        .expect("echo registered");
    let (boot1, pid1) = whoami(&registry, "crashy").await;

    call(&registry, "crashy", "crash", json!({"code": 7})).await;
    let lost = wait_event(&mut events, |e| {
        matches!(
            e,
            Event::State {
                status: mcp_resilient::Status {
                    state: ConnectionState::Reconnecting { .. },
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
                state:
                    ConnectionState::Reconnecting {
                        reason,
                        death,
                        attempt,
                        ..
                    },
                generation,
                ..
            },
        ..
    } = lost
    else {
        unreachable!()
    };
    assert_eq!(generation, Some(first));
    assert_eq!(reason, Reason::ConnectionLost);
    assert_eq!(attempt, 1, "the first reconnect after a loss is attempt 1");
    assert_eq!(death.cause, Cause::ProcessExited, "{death:?}");
    assert!(death.detail.contains("exit status: 7"), "{}", death.detail);

    let second = ready_generation(&mut events).await;
    assert!(second > first);
    let (boot2, pid2) = whoami(&registry, "crashy").await;
    assert_ne!(boot1, boot2, "a new server process must answer");
    assert_ne!(pid1, pid2);
    assert!(!alive(pid1), "the crashed child was reaped");
    // The handle taken before the crash routes to the new generation.
    let reply = echo
        .call(json!({"text": "again"}))
        .await
        .expect("echo after recovery");
    assert_eq!(
        reply.content[0].as_text().map(|t| t.text.as_str()),
        Some("again")
    );
    server.shutdown().await;
}

#[tokio::test]
async fn the_failure_cap_unregisters_tools_and_reports_final_failure() {
    init_tracing();
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken");
    // Starts the mock server until the flag file exists; then exits at once, like a bad deploy.
    let script = format!(
        "if [ -e '{}' ]; then echo 'refusing to start' >&2; exit 9; fi; exec '{}' mock-server --transport stdio",
        broken.display(),
        mock_binary()
    );
    let registry = ToolRegistry::new();
    let config = shell("capped", &script).reconnect(
        Reconnect::default()
            .initial_delay(Duration::from_millis(10))
            .max_delay(Duration::from_millis(50))
            .max_attempts(3)
            .stability_window(Duration::from_secs(60)),
    );
    let server = Supervisor::spawn(config, &registry).unwrap();
    let mut state = server.watch();
    server.wait_ready(LIMIT).await.expect("ready");
    assert!(registry.snapshot().server("capped").is_some());
    let mut changes = registry.changes();

    std::fs::write(&broken, "").unwrap();
    call(&registry, "capped", "crash", json!({})).await;
    let failed = wait_state(&mut state, |s| matches!(s, ConnectionState::Failed { .. })).await;
    let ConnectionState::Failed {
        reason,
        death,
        manual_recovery,
        retry_in,
    } = failed
    else {
        unreachable!()
    };
    assert!(!manual_recovery);
    assert_eq!(retry_in, None, "a spent budget is final");
    assert_eq!(reason, Reason::ConnectionFailed);
    assert_eq!(death.cause, Cause::ConnectFailed);
    assert!(
        death.detail.contains("exit status: 9")
            || death.detail.contains("server/discover")
            || death.detail.contains("initialize"),
        "{}",
        death.detail
    );
    assert!(
        registry.snapshot().server("capped").is_none(),
        "tools must be unregistered"
    );
    let removal = tokio::time::timeout(LIMIT, changes.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(removal.tools.is_empty() && !removal.removed.is_empty());
    match registry.handle("mcp__capped__echo") {
        Err(unknown) => assert_eq!(unknown.name, "mcp__capped__echo"),
        other => panic!("expected an unknown tool, got {other:?}"),
    }
    // restart() is the way out once the server can start again.
    std::fs::remove_file(&broken).unwrap();
    server.restart().await;
    server.wait_ready(LIMIT).await.expect("ready after restart");
    server.shutdown().await;
}

fn crash_loop_policy(window: Duration) -> Reconnect {
    Reconnect::default()
        .initial_delay(Duration::from_millis(10))
        .max_delay(Duration::from_millis(40))
        .max_attempts(2)
        .stability_window(window)
}

#[tokio::test]
async fn a_crash_loop_with_brief_connects_still_exhausts_the_budget() {
    init_tracing();
    let registry = ToolRegistry::new();
    let config = stdio_mock("looping", &[]).reconnect(crash_loop_policy(Duration::from_secs(60)));
    let server = Supervisor::spawn(config, &registry).unwrap();
    let mut state = server.watch();
    let mut readies = 0;
    // Each generation connects fine and crashes before the stability window.
    loop {
        let seen = wait_state(&mut state, |s| {
            matches!(
                s,
                ConnectionState::Ready { .. } | ConnectionState::Failed { .. }
            )
        })
        .await;
        if let ConnectionState::Failed { reason, .. } = seen {
            assert_eq!(reason, Reason::ConnectionLost);
            break;
        }
        readies += 1;
        assert!(readies <= 2, "the budget of 2 must stop the loop");
        call(&registry, "looping", "crash", json!({})).await;
        wait_state(&mut state, |s| !s.is_ready()).await;
    }
    assert_eq!(readies, 2, "two brief generations spend a budget of two");
    server.shutdown().await;
}

#[tokio::test]
async fn a_generation_that_stayed_ready_refills_the_budget() {
    init_tracing();
    let registry = ToolRegistry::new();
    let config = stdio_mock("steady", &[]).reconnect(crash_loop_policy(Duration::from_millis(150)));
    let server = Supervisor::spawn(config, &registry).unwrap();
    let mut generation = server.wait_ready(LIMIT).await.expect("ready");
    let mut events = server.events();
    // Four crashes with a budget of two: each generation first outlives the stability window.
    for _ in 0..4 {
        wait_event(
            &mut events,
            |e| matches!(e, Event::Stable { generation: g, .. } if *g == generation),
        )
        .await;
        call(&registry, "steady", "crash", json!({})).await;
        let next = ready_generation(&mut events).await;
        assert!(next > generation);
        generation = next;
    }
    assert!(server.status().state.is_ready());
    server.shutdown().await;
}

#[tokio::test]
async fn shutdown_during_backoff_cancels_the_reconnect() {
    init_tracing();
    let dir = tempfile::tempdir().unwrap();
    let spawns = dir.path().join("spawns");
    let script = format!(
        "echo $$ >> '{}'; exec '{}' mock-server --transport stdio",
        spawns.display(),
        mock_binary()
    );
    let registry = ToolRegistry::new();
    let config = shell("patient", &script).reconnect(
        Reconnect::default()
            .initial_delay(Duration::from_secs(30))
            .max_delay(Duration::from_secs(60))
            .jitter(0.0),
    );
    let server = Supervisor::spawn(config, &registry).unwrap();
    let mut state = server.watch();
    server.wait_ready(LIMIT).await.expect("ready");
    call(&registry, "patient", "crash", json!({})).await;
    let waiting = wait_state(&mut state, |s| {
        matches!(s, ConnectionState::Reconnecting { .. })
    })
    .await;
    let ConnectionState::Reconnecting { delay, .. } = waiting else {
        unreachable!()
    };
    assert_eq!(delay, Duration::from_secs(30));
    // Must return long before the 30 s backoff would have fired.
    tokio::time::timeout(Duration::from_secs(10), server.shutdown())
        .await
        .expect("shutdown cancels the backoff");
    assert_eq!(server.status().state, ConnectionState::Stopped);
    assert_eq!(line_count(&spawns), 1, "no second child was started");
    assert!(registry.snapshot().is_empty());
}

#[tokio::test]
async fn a_death_report_after_shutdown_schedules_nothing() {
    init_tracing();
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(stdio_mock("done", &[]), &registry).unwrap();
    let generation = server.wait_ready(LIMIT).await.expect("ready");
    let handle = registry.handle("mcp__done__echo").unwrap();
    let mut events = server.events();
    server.shutdown().await;
    assert!(
        !server.report_failure(generation, "late"),
        "no recovery after shutdown"
    );
    server.restart().await;
    assert_eq!(server.status().state, ConnectionState::Stopped);
    match handle.call(json!({"text": "x"})).await {
        Err(CallError::ToolNotFound { .. } | CallError::Unavailable { .. }) => {}
        other => panic!("expected the call to be refused, got {other:?}"),
    }
    // Everything the supervisor said ends with `stopped`; nothing follows it.
    let mut last = None;
    while let Ok(Some(event)) = events.try_recv() {
        last = Some(event);
    }
    assert!(
        matches!(
            last,
            Some(Event::State {
                status: mcp_resilient::Status {
                    state: ConnectionState::Stopped,
                    ..
                },
                ..
            })
        ),
        "{last:?}"
    );
}

#[tokio::test]
async fn reconnect_disabled_keeps_the_tools_and_asks_for_manual_recovery() {
    init_tracing();
    let registry = ToolRegistry::new();
    let config = stdio_mock("manual", &[]).reconnect(Reconnect::disabled());
    let server = Supervisor::spawn(config, &registry).unwrap();
    let mut state = server.watch();
    let first = server.wait_ready(LIMIT).await.expect("ready");
    let before = registry
        .snapshot()
        .server("manual")
        .cloned()
        .expect("tools");
    call(&registry, "manual", "crash", json!({})).await;
    let failed = wait_state(&mut state, |s| matches!(s, ConnectionState::Failed { .. })).await;
    assert!(
        matches!(
            failed,
            ConnectionState::Failed {
                manual_recovery: true,
                reason: Reason::ConnectionLost,
                ..
            }
        ),
        "{failed:?}"
    );
    let after = registry
        .snapshot()
        .server("manual")
        .cloned()
        .expect("tools stay registered");
    assert_eq!(before, after);
    match registry
        .handle("mcp__manual__echo")
        .unwrap()
        .call(json!({"text": "x"}))
        .await
    {
        Err(CallError::Unavailable {
            state: ConnectionState::Failed { .. },
            ..
        }) => {}
        other => panic!("expected Unavailable, got {other:?}"),
    }
    server.restart().await;
    let second = server.wait_ready(LIMIT).await.expect("ready after restart");
    assert!(second > first);
    server.shutdown().await;
}

#[tokio::test]
async fn a_stale_sync_request_from_a_replaced_generation_changes_nothing() {
    init_tracing();
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(stdio_mock("fenced", &[]), &registry).unwrap();
    let old = server.wait_ready(LIMIT).await.expect("ready");
    let mut events = server.events();
    call(&registry, "fenced", "crash", json!({})).await;
    let current = ready_generation(&mut events).await;
    // Change the list on the new server without notifying, then ask in the old generation's name.
    call(
        &registry,
        "fenced",
        "set_tools",
        json!({"add": ["late"], "notify": false}),
    )
    .await;
    server.request_tool_sync(old);
    // The same request in the current generation's name is processed after the stale one.
    server.request_tool_sync(current);
    let change = wait_event(&mut events, |e| matches!(e, Event::Tools(_))).await;
    let Event::Tools(change) = change else {
        unreachable!()
    };
    assert_eq!(
        change.generation, current,
        "the first tool change comes from the current generation"
    );
    assert_eq!(change.added, vec!["late".to_owned()]);
    assert_eq!(
        registry.snapshot().server("fenced").unwrap().generation,
        current
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_list_changed_resync_swaps_the_whole_set_atomically() {
    init_tracing();
    let registry = ToolRegistry::new();
    let server =
        Supervisor::spawn(stdio_mock("atomic", &["--extra-tools", "40"]), &registry).unwrap();
    server.wait_ready(LIMIT).await.expect("ready");
    let mut events = server.events();
    let old: Vec<String> = names(&registry, "atomic");
    assert_eq!(old.iter().filter(|n| n.starts_with("extra_")).count(), 40);
    let fresh: Vec<String> = (0..40).map(|i| format!("fresh_{i}")).collect();
    let stale: Vec<String> = (0..40).map(|i| format!("extra_{i}")).collect();
    let mut new = old
        .iter()
        .filter(|n| !n.starts_with("extra_"))
        .cloned()
        .collect::<Vec<_>>();
    new.extend(fresh.iter().cloned());

    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (registry, stop, old, new) = (
            registry.clone(),
            stop.clone(),
            sorted(old.clone()),
            sorted(new.clone()),
        );
        tokio::spawn(async move {
            let mut seen = (0usize, 0usize);
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let now = sorted(names(&registry, "atomic"));
                let mut deduped = now.clone();
                deduped.dedup();
                assert_eq!(deduped.len(), now.len(), "a snapshot held a duplicate");
                if now == old {
                    seen.0 += 1;
                } else if now == new {
                    seen.1 += 1;
                } else {
                    panic!("a reader saw a partial set: {now:?}");
                }
                tokio::task::yield_now().await;
            }
            seen
        })
    };
    // One call changes the list on the server and sends notifications/tools/list_changed.
    call(
        &registry,
        "atomic",
        "set_tools",
        json!({"add": fresh, "remove": stale}),
    )
    .await;
    let change = wait_event(&mut events, |e| matches!(e, Event::Tools(_))).await;
    let Event::Tools(change) = change else {
        unreachable!()
    };
    assert_eq!((change.added.len(), change.removed.len()), (40, 40));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (saw_old, saw_new) = tokio::time::timeout(LIMIT, reader)
        .await
        .unwrap()
        .expect("reader");
    assert!(saw_old + saw_new > 0);
    assert_eq!(sorted(names(&registry, "atomic")), sorted(new));
    server.shutdown().await;
}

fn names(registry: &ToolRegistry, server: &str) -> Vec<String> {
    registry
        .snapshot()
        .server(server)
        .map(|s| s.tools.iter().map(|t| t.raw_name.to_string()).collect())
        .unwrap_or_default()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_concurrent_death_reports_make_one_recovery() {
    init_tracing();
    let registry = ToolRegistry::new();
    let server = Arc::new(Supervisor::spawn(stdio_mock("herd", &[]), &registry).unwrap());
    let first = server.wait_ready(LIMIT).await.expect("ready");
    let mut events = server.events();
    let barrier = Arc::new(tokio::sync::Barrier::new(100));
    let reports: Vec<_> = (0..100)
        .map(|i| {
            let (server, barrier) = (server.clone(), barrier.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                server.report_failure(first, format!("detector {i}"))
            })
        })
        .collect();
    let mut winners = 0;
    for report in reports {
        winners += usize::from(report.await.unwrap());
    }
    assert_eq!(winners, 1, "exactly one report starts the recovery");
    let second = ready_generation(&mut events).await;
    assert_eq!(second, first.get() + 1, "one new generation");
    // The generation after the recovery stays: no coalesced report starts another one.
    call(&registry, "herd", "echo", json!({"text": "still here"})).await;
    assert_eq!(server.status().ready(), Some(second));
    let mut reconnects = 0;
    while let Ok(Some(event)) = events.try_recv() {
        reconnects += usize::from(matches!(
            event,
            Event::State {
                status: mcp_resilient::Status {
                    state: ConnectionState::Reconnecting { .. },
                    ..
                },
                ..
            }
        ));
    }
    assert_eq!(reconnects, 0, "no second recovery after the new generation");
    server.shutdown().await;
}

#[tokio::test]
async fn a_hung_child_is_detected_by_the_heartbeat_and_replaced() {
    init_tracing();
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("lock");
    let lock_arg = lock.to_string_lossy().into_owned();
    let registry = ToolRegistry::new();
    let config = stdio_mock("hung", &["--lock-file", &lock_arg]).heartbeat(
        Heartbeat::default()
            .interval(Duration::from_millis(200))
            .timeout(Duration::from_millis(100))
            .failures(2),
    );
    let server = Supervisor::spawn(config, &registry).unwrap();
    let first = server.wait_ready(LIMIT).await.expect("ready");
    let mut events = server.events();
    let (boot1, pid1) = whoami(&registry, "hung").await;
    let hang = registry.handle("mcp__hung__hang").unwrap();
    // The hang call itself never gets an answer. While it is inside its deadline the server is
    // only busy; once it has run past its deadline with no answer, missed probes mean death.
    let outcome = hang
        .call_with(
            json!({}),
            CallOptions::new().timeout(Duration::from_millis(300)),
        )
        .await;
    assert!(
        matches!(outcome, Err(CallError::Timeout { .. })),
        "{outcome:?}"
    );
    let (_, death, _) = lost(&mut events).await;
    assert_eq!(death.cause, Cause::HeartbeatTimeout, "{death:?}");
    let second = ready_generation(&mut events).await;
    assert!(second > first);
    let (boot2, _) = whoami(&registry, "hung").await;
    assert_ne!(boot1, boot2);
    assert!(
        !alive(pid1),
        "the hung child (which ignores stdin EOF) was signalled and reaped"
    );
    assert!(
        !dir.path().join("lock.overlap").exists(),
        "two children were alive at once"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn no_two_children_of_one_server_are_ever_alive_at_once() {
    init_tracing();
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("lock");
    let lock_arg = lock.to_string_lossy().into_owned();
    let registry = ToolRegistry::new();
    let config = stdio_mock("single", &["--lock-file", &lock_arg]).reconnect(
        Reconnect::default()
            .initial_delay(Duration::from_millis(1))
            .max_delay(Duration::from_millis(5))
            .jitter(0.0)
            .max_attempts(3),
    );
    let server = Supervisor::spawn(config, &registry).unwrap();
    let mut generation = server.wait_ready(LIMIT).await.expect("ready");
    let mut events = server.events();
    let mut pids = vec![whoami(&registry, "single").await.1];
    // Crashes, host-reported deaths and restarts, each followed at once by the next child.
    for round in 0..6 {
        match round % 3 {
            0 => drop(call(&registry, "single", "crash", json!({})).await),
            1 => assert!(server.report_failure(generation, "test")),
            _ => server.restart().await,
        }
        generation = ready_generation(&mut events).await;
        let pid = whoami(&registry, "single").await.1;
        for old in &pids {
            assert!(!alive(*old), "child {old} still alive next to {pid}");
        }
        pids.push(pid);
    }
    assert!(
        !dir.path().join("lock.overlap").exists(),
        "a child found the lock held by another"
    );
    server.shutdown().await;
}

#[test]
fn after_shutdown_no_child_and_no_task_is_left() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        init_tracing();
        let metrics = tokio::runtime::Handle::current().metrics();
        let before = metrics.num_alive_tasks();
        let registry = ToolRegistry::new();
        let server = Supervisor::spawn(stdio_mock("quiet", &[]), &registry).unwrap();
        server.wait_ready(LIMIT).await.expect("ready");
        let (_, pid) = whoami(&registry, "quiet").await;
        assert!(alive(pid));
        server.shutdown().await;
        assert!(!alive(pid), "the child was reaped");
        assert!(registry.snapshot().is_empty());
        assert!(registry.servers().is_empty());
        // rmcp's own session tasks finish right after the transport closes; give them a bounded
        // number of scheduler turns, then require that nothing of ours is left.
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

#[tokio::test]
async fn a_call_during_an_outage_fails_fast_or_waits_for_call_wait() {
    init_tracing();
    let slow = Reconnect::default()
        .initial_delay(Duration::from_millis(300))
        .max_delay(Duration::from_millis(600))
        .jitter(0.0);
    // Zero: fail at once; `None`: the default (10 s); or a wait of one's own.
    for wait in [Some(Duration::ZERO), None, Some(LIMIT)] {
        let registry = ToolRegistry::new();
        let mut config = stdio_mock("waiting", &[]).reconnect(slow.clone());
        if let Some(wait) = wait {
            config = config.call_wait(wait);
        }
        let server = Supervisor::spawn(config, &registry).unwrap();
        let mut state = server.watch();
        let first = server.wait_ready(LIMIT).await.expect("ready");
        call(&registry, "waiting", "crash", json!({})).await;
        wait_state(&mut state, |s| {
            matches!(s, ConnectionState::Reconnecting { .. })
        })
        .await;
        let outcome = registry
            .handle("mcp__waiting__echo")
            .unwrap()
            .call(json!({"text": "later"}))
            .await;
        match wait {
            Some(Duration::ZERO) => assert!(
                matches!(
                    &outcome,
                    Err(CallError::Unavailable {
                        state: ConnectionState::Reconnecting { .. },
                        ..
                    })
                ),
                "{outcome:?}"
            ),
            _ => {
                let reply = outcome.expect("served once the server is back");
                assert_eq!(
                    reply.content[0].as_text().map(|t| t.text.as_str()),
                    Some("later")
                );
                assert!(server.status().ready().map(u64::from).expect("ready") > first);
            }
        }
        server.shutdown().await;
    }
}

#[tokio::test]
async fn a_shutdown_cancelled_midway_is_finished_by_the_next_one() {
    init_tracing();
    let registry = ToolRegistry::new();
    // The child ignores its stdin's end, so closing it takes the whole stdin grace (300 ms)
    // and then SIGTERM: a shutdown runs long enough to be cancelled in its middle.
    let config = stdio_mock("stubborn", &["--ignore-stdin-eof"]);
    let server = Supervisor::spawn(config, &registry).unwrap();
    server.wait_ready(LIMIT).await.expect("ready");
    let (_, pid) = whoami(&registry, "stubborn").await;
    // The first shutdown is dropped while the child is still being closed.
    let cancelled = tokio::time::timeout(Duration::from_millis(50), server.shutdown()).await;
    assert!(cancelled.is_err(), "the close should outlast 50 ms");
    assert!(alive(pid), "the child is still being closed");
    // The promise: the next call returns only when nothing of the server is left running.
    tokio::time::timeout(LIMIT, server.shutdown())
        .await
        .expect("the second shutdown returns");
    assert!(
        !alive(pid),
        "shutdown returned while the child {pid} was still running"
    );
    assert!(matches!(server.status().state, ConnectionState::Stopped));
    // And it stays idempotent.
    tokio::time::timeout(LIMIT, server.shutdown())
        .await
        .expect("a third shutdown returns at once");
}
