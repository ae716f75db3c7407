//! `auto`: the fallback and its memory, and the refusals of a wrong URL or a wrong transport.

use super::*;

fn fail(wrong_protocol: bool) -> Failure {
    Failure {
        death: Death::new(Cause::ConnectFailed, "no"),
        wrong_protocol: wrong_protocol.then_some(404),
        retry_after: None,
        speaks_other: false,
    }
}

async fn run(memory: &KindMemory, sse_works: bool, http: Option<bool>) -> (Vec<Protocol>, bool) {
    let mut tried = Vec::new();
    let result = open(RemoteKind::Auto, memory, |p| {
        tried.push(p);
        let outcome = match (p, http) {
            (Protocol::Sse, _) if sse_works => Ok(()),
            (Protocol::Sse, _) => Err(fail(true)),
            (Protocol::Http, None) => Ok(()),
            (Protocol::Http, Some(wrong)) => Err(fail(wrong)),
        };
        async move { outcome }
    })
    .await;
    (tried, result.is_ok())
}

#[tokio::test]
async fn auto_falls_back_to_sse_and_remembers_it() {
    let memory = KindMemory::default();
    assert_eq!(
        run(&memory, true, Some(true)).await,
        (vec![Protocol::Http, Protocol::Sse], true)
    );
    assert_eq!(memory.get(), Some(Protocol::Sse));
    assert_eq!(
        run(&memory, true, Some(true)).await,
        (vec![Protocol::Sse], true)
    );
}

#[tokio::test]
async fn a_down_server_keeps_the_memory_and_does_not_fall_back() {
    let memory = KindMemory::default();
    assert_eq!(run(&memory, true, None).await, (vec![Protocol::Http], true));
    assert_eq!(
        run(&memory, true, Some(false)).await,
        (vec![Protocol::Http], false)
    );
    assert_eq!(memory.get(), Some(Protocol::Http));
}

#[tokio::test]
async fn a_wrong_protocol_answer_from_every_protocol_is_a_rejection() {
    let memory = KindMemory::default();
    let result = open(RemoteKind::Auto, &memory, |_| async {
        Err::<(), _>(fail(true))
    })
    .await;
    let failure = result.expect_err("both protocols refused");
    assert_eq!(failure.death.cause, Cause::Rejected);
    assert!(
        failure
            .death
            .detail
            .contains("streamable HTTP: no; legacy SSE: no")
    );
    let explicit = open(RemoteKind::Http, &memory, |_| async {
        Err::<(), _>(fail(true))
    })
    .await;
    assert_eq!(explicit.expect_err("refused").death.cause, Cause::Rejected);
    let down = open(RemoteKind::Http, &memory, |_| async {
        Err::<(), _>(fail(false))
    })
    .await;
    assert_eq!(down.expect_err("down").death.cause, Cause::ConnectFailed);
    // A 400 says "not this protocol" to `auto`, but is no proof of a wrong URL.
    let picky = || Failure {
        wrong_protocol: Some(400),
        ..fail(false)
    };
    let explicit = open(RemoteKind::Http, &memory, |_| async move {
        Err::<(), _>(picky())
    })
    .await;
    assert_eq!(explicit.expect_err("400").death.cause, Cause::ConnectFailed);
}

#[tokio::test]
async fn an_explicit_sse_answered_in_streamable_http_is_refused_with_the_transport_to_use() {
    let memory = KindMemory::default();
    let streamable = || Failure {
        wrong_protocol: Some(400),
        speaks_other: true,
        ..fail(false)
    };
    let refused = open(RemoteKind::Sse, &memory, |_| async move {
        Err::<(), _>(streamable())
    })
    .await
    .expect_err("refused");
    assert_eq!(refused.death.cause, Cause::Rejected);
    assert!(
        refused.death.detail.ends_with(
            "; this is a streamable HTTP endpoint, not legacy SSE: use transport `http` or \
             `auto` (`--transport http`)"
        ),
        "{}",
        refused.death.detail
    );
    // `auto` (here remembering legacy SSE) falls back instead, and finds it.
    memory.remember(Protocol::Sse);
    let mut tried = Vec::new();
    let found = open(RemoteKind::Auto, &memory, |p| {
        tried.push(p);
        async move {
            match p {
                Protocol::Sse => Err(streamable()),
                Protocol::Http => Ok(()),
            }
        }
    })
    .await;
    assert!(
        found.is_ok() && tried == [Protocol::Sse, Protocol::Http],
        "{tried:?}"
    );
}

#[tokio::test]
async fn a_remembered_sse_that_answers_404_is_detected_again() {
    let memory = KindMemory::default();
    memory.remember(Protocol::Sse);
    assert_eq!(
        run(&memory, false, None).await,
        (vec![Protocol::Sse, Protocol::Http], true)
    );
    assert_eq!(memory.get(), Some(Protocol::Http));
}
