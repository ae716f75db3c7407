use rmcp::model::{RequestId, ServerResult};
use tokio::io::AsyncWriteExt;

use super::*;

/// A transport over an in-memory pipe, and the child's end of it.
fn pipe(
    max: usize,
) -> (
    StdioTransport<tokio::io::DuplexStream, tokio::io::DuplexStream>,
    tokio::io::DuplexStream,
    tokio::io::DuplexStream,
    Arc<Activity>,
) {
    let (stdout, child_out) = tokio::io::duplex(1 << 16);
    let (stdin, child_in) = tokio::io::duplex(1 << 16);
    let activity = Activity::new(true);
    let transport = StdioTransport::new(stdout, stdin, max, activity.clone());
    (transport, child_out, child_in, activity)
}

#[tokio::test]
async fn lines_read_as_rmcp_reads_them_and_answers_typed() {
    let (mut transport, mut child, _stdin, activity) = pipe(1 << 20);
    activity.ledger.handed(&RequestId::Number(3), "tools/call");
    let call = r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hi"}]}}"#;
    let log =
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}}"#;
    let odd = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":7}"#;
    let text = format!("\u{feff}{log}\r\n\n  \nnot json\n{odd}\n{call}\n");
    child.write_all(text.as_bytes()).await.unwrap();
    drop(child);
    let first = transport.receive().await.expect("the log message");
    let theirs: ServerJsonRpcMessage = serde_json::from_str(log).unwrap();
    assert_eq!(
        serde_json::to_value(&first).unwrap(),
        serde_json::to_value(&theirs).unwrap()
    );
    match transport.receive().await.expect("the call's answer") {
        rmcp::model::JsonRpcMessage::Response(r) => {
            assert_eq!(r.id, RequestId::Number(3));
            assert!(matches!(r.result, ServerResult::CallToolResult(_)));
        }
        other => panic!("{other:?}"),
    }
    assert!(transport.receive().await.is_none(), "end of file");
}

#[tokio::test]
async fn json_that_is_no_message_is_answered_invalid_and_reading_goes_on() {
    let (mut transport, mut child, mut stdin, _activity) = pipe(1 << 20);
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    child
        .write_all(format!("[1, 2]\n{ping}\n").as_bytes())
        .await
        .unwrap();
    let message = transport.receive().await.expect("the ping");
    assert!(matches!(message, rmcp::model::JsonRpcMessage::Request(_)));
    let mut sent = vec![0; 4096];
    let n = tokio::io::AsyncReadExt::read(&mut stdin, &mut sent)
        .await
        .unwrap();
    let answer: serde_json::Value = serde_json::from_slice(&sent[..n]).unwrap();
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
}

#[tokio::test]
async fn a_line_over_the_bound_is_dropped_whole() {
    let (mut transport, mut child, _stdin, _activity) = pipe(64);
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"{}"}}"#,
        "x".repeat(200)
    );
    child
        .write_all(format!("{long}\n{ping}\n").as_bytes())
        .await
        .unwrap();
    drop(child);
    match transport.receive().await.expect("the ping") {
        rmcp::model::JsonRpcMessage::Request(r) => assert_eq!(r.id, RequestId::Number(1)),
        other => panic!("{other:?}"),
    }
    assert!(transport.line.capacity() <= 1024, "bounded buffer");
    assert!(transport.receive().await.is_none());
}

#[tokio::test]
async fn a_large_line_does_not_keep_its_buffer() {
    let (mut transport, mut child, _stdin, _activity) = pipe(1 << 20);
    let large = format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"info","data":"{}"}}}}"#,
        "x".repeat(200_000)
    );
    let writer = tokio::spawn(async move {
        child
            .write_all(format!("{large}\n").as_bytes())
            .await
            .unwrap();
    });
    transport.receive().await.expect("the large message");
    writer.await.unwrap();
    assert!(
        transport.line.capacity() <= LINE_BUFFER_KEEP,
        "{}",
        transport.line.capacity()
    );
}

#[tokio::test]
async fn a_cancelled_receive_keeps_the_part_of_a_line_it_read() {
    let (mut transport, mut child, _stdin, _activity) = pipe(1 << 20);
    child.write_all(br#"{"jsonrpc":"2.0","#).await.unwrap();
    // The bytes are in the pipe: one poll reads them, finds no newline, and is dropped.
    let partial = futures::FutureExt::now_or_never(transport.receive());
    assert!(partial.is_none(), "no whole line yet");
    assert!(!transport.line.is_empty(), "the part read is kept");
    child
        .write_all(br#""id":1,"method":"ping"}"#)
        .await
        .unwrap();
    child.write_all(b"\n").await.unwrap();
    let message = transport.receive().await.expect("the ping, whole");
    assert!(matches!(message, rmcp::model::JsonRpcMessage::Request(_)));
}
