//! Upstream sessions shared or per host: a `per_host` server's state belongs to one host
//! session, and a server's request to the client reaches only the host whose call caused it.

use serde_json::json;

use super::gateway::{FAST, Gateway, HttpHost};
use crate::common::{LIMIT, alive, host::text, mock_binary, process::MockProcess};
use mcp_mock_server::Whoami;

fn stdio_mock<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args: Vec<&str> = FAST.to_vec();
    args.extend_from_slice(extra);
    args.extend([
        "--name",
        "mock",
        "--stdio",
        "--",
        mock_binary(),
        "mock-server",
    ]);
    args.extend(["--transport", "stdio"]);
    args
}

async fn whoami(host: &HttpHost) -> Whoami {
    let result = host.call("whoami", json!({})).await;
    Whoami::from_result(&result).unwrap_or_else(|| panic!("a whoami result: {result:?}"))
}

async fn bump(host: &HttpHost) -> String {
    text(&host.call("bump", json!({})).await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_host_sessions_never_see_each_others_state_and_end_with_their_host() {
    let gateway = Gateway::start(&stdio_mock(&["--per-host", "mock"])).await;
    let (a, b) = (gateway.host().await, gateway.host().await);
    assert_eq!(bump(&a).await, "1");
    assert_eq!(bump(&a).await, "2");
    assert_eq!(bump(&b).await, "1", "b's upstream is its own");
    let (mine, theirs) = (whoami(&a).await, whoami(&b).await);
    assert_ne!(
        mine.pid, theirs.pid,
        "one upstream process per host session"
    );
    assert_eq!((mine.counter, theirs.counter), (2, 1));
    a.close().await;
    let gone = tokio::time::timeout(LIMIT, async {
        while alive(mine.pid) {
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert!(gone.is_ok(), "a's upstream outlived a's session");
    assert_eq!(bump(&b).await, "2", "b is not affected");
    let status = gateway.stop().await;
    assert!(status.success(), "{status}");
    assert!(!alive(theirs.pid), "the stop reaped b's upstream");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_server_is_one_upstream_for_every_host() {
    let gateway = Gateway::start(&stdio_mock(&[])).await;
    let (a, b) = (gateway.host().await, gateway.host().await);
    assert_eq!(bump(&a).await, "1");
    assert_eq!(bump(&b).await, "2", "the same upstream");
    assert_eq!(whoami(&a).await.pid, whoami(&b).await.pid);
    gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_elicitation_reaches_only_the_host_whose_call_caused_it() {
    // Per host: each host's upstream asks its own host.
    let gateway = Gateway::start(&stdio_mock(&[
        "--per-host",
        "mock",
        "--protocol",
        "2025-11-25",
    ]))
    .await;
    let (a, b) = (gateway.host().await, gateway.host().await);
    let answered = a.call("confirm", json!({"question": "a?"})).await;
    assert!(
        text(&answered).starts_with("confirmed: true"),
        "{}",
        text(&answered)
    );
    assert_eq!(a.told(|t| t.elicitations.len()), 1);
    assert_eq!(b.told(|t| t.elicitations.len()), 0, "b was never asked");
    gateway.stop().await;

    // Shared, over HTTP, 2026-07-28: the question comes back in the call's `input_required`
    // result, and goes to the host that called.
    let mock = MockProcess::start("http").await;
    let url = mock.url();
    let mut args: Vec<&str> = FAST.to_vec();
    args.extend(["--name", "mock", "--protocol", "2026-07-28", "--url", &url]);
    let gateway = Gateway::start(&args).await;
    let (a, b) = (gateway.host().await, gateway.host().await);
    let answered = a.call("confirm", json!({"question": "a, 2026?"})).await;
    assert!(
        text(&answered).starts_with("confirmed: true"),
        "{}",
        text(&answered)
    );
    assert_eq!(a.told(|t| t.elicitations.len()), 1);
    assert_eq!(b.told(|t| t.elicitations.len()), 0, "b was never asked");
    gateway.stop().await;

    // Shared, over HTTP, 2025-11-25 (the server sends elicitation/create during the call).
    let url = mock.url();
    let mut args: Vec<&str> = FAST.to_vec();
    args.extend(["--name", "mock", "--protocol", "2025-11-25", "--url", &url]);
    let gateway = Gateway::start(&args).await;
    let (a, b) = (gateway.host().await, gateway.host().await);
    let answered = b.call("confirm", json!({"question": "b?"})).await;
    assert!(
        text(&answered).starts_with("confirmed: true"),
        "{}",
        text(&answered)
    );
    assert_eq!(b.told(|t| t.elicitations.len()), 1);
    assert_eq!(a.told(|t| t.elicitations.len()), 0, "a was never asked");

    // While a has a call in flight too, nobody can tell whose call b's question is for: it is
    // refused, and a is still never asked.
    let held = a.try_call("progress", json!({"steps": 20, "ms": 200}));
    let asked = async {
        a.wait_told("the call's first progress", |t| !t.progress.is_empty())
            .await;
        b.call("confirm", json!({"question": "whose?"})).await
    };
    let (held, asked) = tokio::join!(held, asked);
    held.expect("a's call ends");
    assert!(
        text(&asked).contains("elicitation failed"),
        "b's question had nowhere to go: {}",
        text(&asked)
    );
    assert_eq!(a.told(|t| t.elicitations.len()), 0, "a was never asked");
    gateway.stop().await;
}
