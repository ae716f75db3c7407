// Logging is deprecated by SEP-2577; the proxy still passes it on.
#![allow(deprecated)]

use rmcp::model::{
    EmptyResult, LoggingLevel, LoggingMessageNotification, LoggingMessageNotificationParam,
    NumberOrString, ProgressNotification, ProgressNotificationParam, ProgressToken, RequestId,
    ResourceListChangedNotification, ResourceUpdatedNotification, ResourceUpdatedNotificationParam,
    ServerJsonRpcMessage, ServerResult, ToolListChangedNotification,
};
use serde_json::{Value, json};

use super::*;

fn log(i: u64) -> ServerNotification {
    LoggingMessageNotification::new(LoggingMessageNotificationParam::new(
        LoggingLevel::Info,
        json!(i),
    ))
    .into()
}

fn progress(i: u64) -> ServerNotification {
    let token = ProgressToken(NumberOrString::Number(1));
    ProgressNotification::new(ProgressNotificationParam::new(token, i as f64)).into()
}

fn updated(uri: &str) -> ServerNotification {
    ResourceUpdatedNotification::new(ResourceUpdatedNotificationParam::new(uri)).into()
}

fn answer(id: i64) -> ServerJsonRpcMessage {
    ServerJsonRpcMessage::response(
        ServerResult::EmptyResult(EmptyResult {}),
        RequestId::Number(id),
    )
}

fn limits(count: usize, bytes: usize) -> NotificationBuffer {
    NotificationBuffer {
        max_buffered_notifications: count,
        max_buffered_notification_bytes: bytes,
    }
}

/// An outbox the host has initialized.
fn open(limits: NotificationBuffer) -> Outbox {
    let outbox = Outbox::new(limits);
    outbox.open();
    outbox
}

/// Everything queued now, as the host would read it.
fn drain(outbox: &Outbox) -> Vec<Value> {
    let mut bytes = Vec::new();
    while outbox.take(usize::MAX, &mut bytes) == Taken::Lines {}
    bytes
        .split(|b| *b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| serde_json::from_slice(line).expect("one JSON message per line"))
        .collect()
}

fn unreported(outbox: &Outbox) -> Dropped {
    outbox.lock().unreported
}

#[test]
fn past_the_count_log_and_progress_are_dropped_and_counted_but_answers_never() {
    let outbox = open(limits(3, usize::MAX));
    for i in 0..5 {
        outbox.notify(log(i));
        outbox.send(&answer(i as i64));
    }
    outbox.notify(progress(9));
    let seen = drain(&outbox);
    let answers = seen.iter().filter(|m| m.get("result").is_some()).count();
    let logs: Vec<_> = seen
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| m["params"]["data"].clone())
        .collect();
    assert_eq!(answers, 5);
    assert_eq!(logs, [json!(0), json!(1), json!(2)]);
    // The first drop was reported at once; the next ones wait for the next report.
    let waiting = unreported(&outbox);
    assert_eq!((waiting.log, waiting.progress), (1, 1));
}

#[test]
fn past_the_bytes_a_new_log_message_is_dropped() {
    let line = {
        let mut line = serde_json::to_vec(&ServerJsonRpcMessage::notification(log(0))).unwrap();
        line.push(b'\n');
        line.len()
    };
    let outbox = open(limits(usize::MAX, 2 * line));
    for i in 0..3 {
        outbox.notify(log(i));
    }
    assert_eq!(drain(&outbox).len(), 2);
    // Taken by the writer, they no longer count.
    outbox.notify(log(3));
    assert_eq!(drain(&outbox).len(), 1);
}

#[test]
fn a_list_change_is_coalesced_while_one_is_queued_and_never_dropped() {
    let outbox = open(limits(0, 0));
    for _ in 0..3 {
        outbox.notify(ResourceListChangedNotification::default().into());
        outbox.send(&ServerJsonRpcMessage::notification(
            ToolListChangedNotification::default().into(),
        ));
    }
    let methods: Vec<_> = drain(&outbox).iter().map(|m| m["method"].clone()).collect();
    assert_eq!(
        methods,
        [
            json!("notifications/resources/list_changed"),
            json!("notifications/tools/list_changed")
        ]
    );
    outbox.notify(ResourceListChangedNotification::default().into());
    assert_eq!(
        drain(&outbox).len(),
        1,
        "once written, the next one goes out"
    );
}

#[test]
fn resource_updates_coalesce_per_uri_and_are_bounded_in_number() {
    let outbox = open(limits(2, usize::MAX));
    for uri in ["a://1", "a://1", "a://2", "a://3"] {
        outbox.notify(updated(uri));
    }
    let uris: Vec<_> = drain(&outbox)
        .iter()
        .map(|m| m["params"]["uri"].clone())
        .collect();
    assert_eq!(uris, [json!("a://1"), json!("a://2")]);
}

#[test]
fn nothing_from_upstream_reaches_the_host_before_it_initialized() {
    let outbox = Outbox::new(NotificationBuffer::default());
    outbox.notify(log(1));
    outbox.send(&answer(1));
    let before = drain(&outbox);
    assert_eq!(before.len(), 1);
    assert_eq!(before[0]["id"], json!(1));
    outbox.open();
    let after = drain(&outbox);
    assert_eq!(after.len(), 1);
    assert_eq!(after[0]["params"]["data"], json!(1));
}

#[test]
fn the_order_of_queueing_is_the_order_of_writing() {
    let outbox = open(NotificationBuffer::default());
    outbox.notify(progress(1));
    outbox.notify(log(2));
    outbox.send(&answer(3));
    let seen = drain(&outbox);
    assert_eq!(seen[0]["method"], json!("notifications/progress"));
    assert_eq!(seen[1]["method"], json!("notifications/message"));
    assert_eq!(seen[2]["id"], json!(3));
}

#[tokio::test(start_paused = true)]
async fn drops_are_reported_at_most_every_ten_seconds_and_all_of_them_in_the_end() {
    let outbox = open(limits(0, 0));
    outbox.notify(log(0));
    // Reported at once, as the first of a while.
    assert_eq!(unreported(&outbox), Dropped::default());
    outbox.notify(log(1));
    outbox.notify(progress(2));
    let due = outbox.report_due().expect("a report is due later");
    assert_eq!(due - Instant::now(), REPORT_EVERY);
    tokio::time::advance(REPORT_EVERY / 2).await;
    outbox.report_if_due();
    assert_eq!(unreported(&outbox).log, 1, "not yet");
    tokio::time::advance(REPORT_EVERY / 2).await;
    outbox.report_if_due();
    assert_eq!(unreported(&outbox), Dropped::default());
    outbox.notify(log(3));
    outbox.report_rest();
    assert_eq!(unreported(&outbox), Dropped::default());
    assert_eq!(outbox.report_due(), None);
}

#[test]
fn after_the_close_nothing_is_queued_and_droppable_messages_are_counted() {
    let outbox = open(NotificationBuffer::default());
    outbox.send(&answer(1));
    outbox.close();
    outbox.notify(log(1));
    outbox.send(&answer(2));
    assert_eq!(drain(&outbox).len(), 1);
    assert_eq!(unreported(&outbox).log, 1);
    let mut rest = Vec::new();
    assert_eq!(outbox.take(usize::MAX, &mut rest), Taken::Closed);
}

#[test]
fn the_bound_is_the_strictest_of_the_upstreams_limits() {
    use mcp_resilient::{ServerConfig, config::Limits};
    let with = |count: usize, bytes: usize| {
        let limits = Limits::default()
            .max_buffered_notifications(count)
            .max_buffered_notification_bytes(bytes);
        ServerConfig::stdio("a", "true").limits(limits)
    };
    let defaults = Limits::default();
    assert_eq!(
        NotificationBuffer::default(),
        limits(
            defaults.get_max_buffered_notifications(),
            defaults.get_max_buffered_notification_bytes()
        )
    );
    let configs = [with(10, 1 << 30), with(1 << 20, 4096)];
    assert_eq!(NotificationBuffer::of(&configs), limits(10, 4096));
}
