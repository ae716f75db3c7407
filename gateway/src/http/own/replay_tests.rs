//! The logs' bounds and the ids' parsing (`replay.rs`).

use super::*;

fn text(event: &Bytes) -> String {
    String::from_utf8(event.to_vec()).unwrap()
}

#[tokio::test]
async fn events_are_numbered_and_read_from_where_the_host_left() {
    let log = Log::new(3, "p".into());
    log.push(b"data: a\n\n");
    log.push(b"data: b\n\n");
    log.end();
    let mut from = 1;
    assert_eq!(
        text(&log.next(&mut from).await.unwrap()),
        "id: 3.1~p\ndata: b\n\n"
    );
    assert_eq!(log.next(&mut from).await, None);
    let mut from = 0;
    assert!(text(&log.next(&mut from).await.unwrap()).starts_with("id: 3.0~p\n"));
}

#[tokio::test]
async fn a_stream_keeps_its_last_events_at_most() {
    let log = Log::new(1, "p".into());
    for n in 0..MAX_EVENTS + 10 {
        log.push(format!("data: {n}\n\n").as_bytes());
    }
    assert_eq!(log.kept().0, MAX_EVENTS);
    // A host back after the oldest kept event goes on from it.
    let mut from = 0;
    let first = text(&log.next(&mut from).await.unwrap());
    assert!(first.starts_with("id: 1.10~p\n"), "{first}");
}

#[tokio::test]
async fn a_stream_keeps_its_bytes_bound_but_always_its_last_event() {
    let log = Log::new(1, "p".into());
    let big = vec![b'x'; MAX_BYTES / 3];
    for _ in 0..5 {
        log.push(&big);
    }
    let (events, bytes) = log.kept();
    assert!(bytes <= MAX_BYTES, "{bytes}");
    assert_eq!(events, 2);
    let huge = vec![b'y'; MAX_BYTES * 2];
    log.push(&huge);
    assert_eq!(log.kept().0, 1, "the last event is kept whatever its size");
}

#[test]
fn a_session_keeps_its_last_streams_logs_at_most() {
    let mut logs = Logs::default();
    let opened: Vec<_> = (0..MAX_STREAMS + 3)
        .map(|_| logs.open("p".into()))
        .collect();
    assert_eq!(logs.logs.len(), MAX_STREAMS);
    assert!(
        logs.get(opened[0].stream).is_none(),
        "the oldest is forgotten"
    );
    let last = opened.last().unwrap().stream;
    assert!(logs.get(last).is_some());
    assert!(logs.get(STANDALONE).is_none(), "request streams start at 1");
}

#[tokio::test]
async fn the_standalone_writer_waits_for_its_reader() {
    let log = Log::new(STANDALONE, "p".into());
    for n in 0..AHEAD {
        log.push_paced(format!("data: {n}\n\n").as_bytes()).await;
    }
    let waiting = log.push_paced(b"data: late\n\n");
    tokio::pin!(waiting);
    assert!(futures::poll!(waiting.as_mut()).is_pending());
    let mut from = log.unread();
    assert!(log.next(&mut from).await.is_some());
    waiting.await;
}

#[test]
fn only_this_fronts_ids_parse() {
    assert_eq!(parse("3.7"), Some(Resume { stream: 3, from: 8 }));
    assert_eq!(parse("0.0"), Some(Resume { stream: 0, from: 1 }));
    for garbled in [
        "",
        "3",
        "3/7",
        "early",
        ".7",
        "3.",
        "3.-1",
        "+3.7",
        "3.7.1",
        "3. 7",
        "99999999999999999999.1",
        "1.18446744073709551615",
    ] {
        assert_eq!(parse(garbled), None, "{garbled:?}");
    }
    assert_eq!(parse(&"1".repeat(MAX_ID_CHARS + 1)), None);
}
