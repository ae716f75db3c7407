//! What the reader takes for a waiting probe, and what it leaves to rmcp's session.

use super::*;

/// Waiting probes whose activity lives as long as the returned one.
fn waiting_with(activity: &Arc<Activity>) -> Arc<Waiting> {
    Waiting::new(activity)
}

#[test]
fn only_a_waiting_probes_answer_is_taken() {
    let activity = Activity::new(false);
    let waiting = waiting_with(&activity);
    let answer = r#"{"jsonrpc":"2.0","id":"mcp-resilient-probe-3","result":{}}"#;
    assert!(!waiting.take(answer), "no probe waits");

    let (ticket, mut rx) = waiting.expect(3);
    let (_other, _) = waiting.expect(4);
    for not_it in [
        r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":"mcp-resilient-probe-5","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":"mcp-resilient-probe-3","method":"ping"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"mcp-resilient-probe-3"}}"#,
        r#"{"jsonrpc":"2.0","id":"mcp-resilient-probe-3"}"#,
        "not json mcp-resilient-probe-3",
    ] {
        assert!(!waiting.take(not_it), "{not_it}");
    }
    assert!(rx.try_recv().is_err());
    assert!(waiting.take(answer));
    assert!(matches!(rx.try_recv(), Ok(Answered::Result)));
    assert!(!waiting.take(answer), "taken once");
    drop(ticket);
    assert_eq!(
        waiting.count.load(Ordering::Acquire),
        1,
        "probe 4 still waits"
    );
}

#[test]
fn an_error_answer_is_the_servers_and_a_given_up_probe_takes_nothing() {
    let activity = Activity::new(false);
    let waiting = waiting_with(&activity);
    let (ticket, mut rx) = waiting.expect(0);
    let error = r#"{"jsonrpc":"2.0","id":"mcp-resilient-probe-0","error":{"code":-32601,"message":"no ping"}}"#;
    assert!(waiting.take(error));
    match rx.try_recv() {
        Ok(Answered::Error(e)) => assert_eq!(e.code.0, -32601),
        other => panic!("{other:?}"),
    }
    drop(ticket);
    let (ticket, _rx) = waiting.expect(1);
    drop(ticket);
    assert_eq!(waiting.count.load(Ordering::Acquire), 0);
    let late = r#"{"jsonrpc":"2.0","id":"mcp-resilient-probe-1","result":{}}"#;
    assert!(
        !waiting.take(late),
        "a probe that gave up: rmcp's session gets it"
    );
}

#[test]
fn the_probe_body_is_a_ping_with_the_probes_id() {
    let body = template(false).with_id("mcp-resilient-probe-7");
    let sent: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        sent,
        serde_json::json!({"jsonrpc": "2.0", "id": "mcp-resilient-probe-7", "method": "ping"})
    );
}

#[tokio::test]
async fn a_sessions_probe_does_not_keep_its_activity_alive() {
    let activity = Activity::new(false);
    let poster = Arc::new(Poster {
        http: reqwest::Client::new(),
        endpoint: "http://127.0.0.1:9/messages".parse().unwrap(),
        headers: reqwest::header::HeaderMap::new(),
        auth: None,
        timeout: std::time::Duration::from_secs(1),
        slot: crate::transport::DeathSlot::default(),
        stop: tokio_util::sync::CancellationToken::new(),
    });
    let probe = SseProbe::new(&poster, Waiting::new(&activity));
    activity
        .direct_probe
        .set(crate::transport::direct::DirectProbe::Sse(probe))
        .expect("set once");
    let gone = Arc::downgrade(&activity);
    drop((activity, poster));
    assert!(
        gone.upgrade().is_none(),
        "the activity and its probe were freed"
    );
}
