//! `TcpProxy` with real sockets on 127.0.0.1 in front of a byte-counting echo server.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mcp_mock_server::proxy::{ProxyMode, TcpProxy};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio::time::timeout;

/// Every wait that must end is bounded by this.
const DEADLINE: Duration = Duration::from_secs(10);
/// How long a black-holed connection must stay silent to pass. A bound on a negative
/// observation, not a stand-in for synchronization.
const SILENCE: Duration = Duration::from_millis(300);

async fn within<F: Future>(what: &str, future: F) -> F::Output {
    timeout(DEADLINE, future)
        .await
        .unwrap_or_else(|_| panic!("timed out: {what}"))
}

/// An echo server that counts the bytes it received; aborted when dropped.
struct Echo {
    addr: SocketAddr,
    received: Arc<AtomicU64>,
    _tasks: JoinSet<()>,
}

async fn echo() -> Echo {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind echo");
    let addr = listener.local_addr().expect("echo addr");
    let received = Arc::new(AtomicU64::new(0));
    let counter = received.clone();
    let mut tasks = JoinSet::new();
    tasks.spawn(async move {
        let mut connections = JoinSet::new();
        while let Ok((mut stream, _)) = listener.accept().await {
            let counter = counter.clone();
            connections.spawn(async move {
                let mut buffer = [0u8; 4096];
                while let Ok(n @ 1..) = stream.read(&mut buffer).await {
                    counter.fetch_add(n as u64, Ordering::SeqCst);
                    if stream.write_all(&buffer[..n]).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    Echo {
        addr,
        received,
        _tasks: tasks,
    }
}

async fn start() -> (Echo, TcpProxy) {
    let echo = echo().await;
    let proxy = within("start", TcpProxy::start(echo.addr))
        .await
        .expect("start proxy");
    (echo, proxy)
}

async fn connect(proxy: &TcpProxy) -> TcpStream {
    within("connect", TcpStream::connect(proxy.addr()))
        .await
        .expect("connect")
}

async fn round_trip(stream: &mut TcpStream, message: &[u8]) {
    within("write", stream.write_all(message))
        .await
        .expect("write");
    let mut back = vec![0u8; message.len()];
    within("echo", stream.read_exact(&mut back))
        .await
        .expect("read echo");
    assert_eq!(back, message);
}

/// Writes succeed but no byte comes back within [`SILENCE`] (nor does the connection close).
async fn assert_black_holed(stream: &mut TcpStream) {
    within("write into the hole", stream.write_all(b"anyone?"))
        .await
        .expect("writes into a black hole succeed");
    let mut buffer = [0u8; 64];
    let read = timeout(SILENCE, stream.read(&mut buffer)).await;
    assert!(read.is_err(), "a black-holed connection answered: {read:?}");
}

/// The connection was closed or reset by the proxy.
async fn assert_closed(stream: &mut TcpStream) {
    let mut buffer = [0u8; 64];
    match within("close", stream.read(&mut buffer)).await {
        Ok(0) => {}
        Err(error) if error.kind() == io::ErrorKind::ConnectionReset => {}
        other => panic!("expected a closed connection, got {other:?}"),
    }
}

#[tokio::test]
async fn pass_forwards_bytes_both_ways_and_counts_connections() {
    let (echo, proxy) = start().await;
    let mut stream = connect(&proxy).await;
    round_trip(&mut stream, b"hello through the proxy").await;
    assert_eq!(echo.received.load(Ordering::SeqCst), 23);
    assert_eq!((proxy.open_connections(), proxy.accepted()), (1, 1));
    assert_eq!(proxy.url("/mcp"), format!("http://{}/mcp", proxy.addr()));
    drop(stream);
    within("close counted", proxy.wait_open_connections(0)).await;
    within("shutdown", proxy.shutdown()).await;
}

#[tokio::test]
async fn black_hole_silences_open_and_new_connections_but_accepts_writes() {
    let (echo, proxy) = start().await;
    let mut open = connect(&proxy).await;
    round_trip(&mut open, b"before").await;
    proxy.set_mode(ProxyMode::BlackHole);
    assert_black_holed(&mut open).await;
    let mut new = connect(&proxy).await;
    assert_black_holed(&mut new).await;
    // Far more than the socket buffers hold: only a proxy that keeps reading lets it through.
    let flood = vec![7u8; 32 * 1024 * 1024];
    within("flood the hole", new.write_all(&flood))
        .await
        .expect("a black hole keeps reading");
    assert_eq!(
        echo.received.load(Ordering::SeqCst),
        6,
        "bytes reached the upstream"
    );
    assert_eq!(proxy.open_connections(), 2, "the hole closed a connection");
    within("shutdown", proxy.shutdown()).await;
}

#[tokio::test]
async fn healing_serves_new_connections_while_black_holed_ones_stay_silent() {
    let (echo, proxy) = start().await;
    let mut idle = connect(&proxy).await;
    round_trip(&mut idle, b"before").await;
    proxy.set_mode(ProxyMode::BlackHole);
    let mut born_in_hole = connect(&proxy).await;
    // Healing must come after the proxy accepted it, or it was never in the hole.
    within("accepted in the hole", proxy.wait_open_connections(2)).await;
    proxy.set_mode(ProxyMode::Pass);
    // `idle` sent nothing during the hole: it must stay black-holed all the same.
    assert_black_holed(&mut idle).await;
    assert_black_holed(&mut born_in_hole).await;
    let mut fresh = connect(&proxy).await;
    round_trip(&mut fresh, b"after").await;
    assert_eq!(echo.received.load(Ordering::SeqCst), 11);
    drop((idle, born_in_hole));
    within(
        "holed ones close with their clients",
        proxy.wait_open_connections(1),
    )
    .await;
    within("shutdown", proxy.shutdown()).await;
}

#[tokio::test]
async fn refuse_closes_new_connections_and_keeps_open_ones() {
    let (_echo, proxy) = start().await;
    let mut open = connect(&proxy).await;
    round_trip(&mut open, b"before").await;
    proxy.set_mode(ProxyMode::Refuse);
    let mut refused = connect(&proxy).await;
    assert_closed(&mut refused).await;
    assert_eq!(proxy.accepted(), 2);
    round_trip(&mut open, b"still here").await;
    proxy.set_mode(ProxyMode::Pass);
    let mut again = connect(&proxy).await;
    round_trip(&mut again, b"welcome back").await;
    within("shutdown", proxy.shutdown()).await;
}

#[tokio::test]
async fn reset_all_closes_every_connection_black_holed_ones_included() {
    let (_echo, proxy) = start().await;
    let mut first = connect(&proxy).await;
    round_trip(&mut first, b"one").await;
    proxy.set_mode(ProxyMode::BlackHole);
    let mut holed = connect(&proxy).await;
    within("both open", proxy.wait_open_connections(2)).await;
    proxy.reset_all();
    assert_closed(&mut first).await;
    assert_closed(&mut holed).await;
    within("none open", proxy.wait_open_connections(0)).await;
    proxy.set_mode(ProxyMode::Pass);
    let mut after = connect(&proxy).await;
    round_trip(&mut after, b"after the reset").await;
    within("shutdown", proxy.shutdown()).await;
}

#[tokio::test]
async fn shutdown_closes_connections_and_the_listener() {
    let (_echo, proxy) = start().await;
    let addr = proxy.addr();
    let mut open = connect(&proxy).await;
    round_trip(&mut open, b"x").await;
    within("shutdown", proxy.shutdown()).await;
    assert_closed(&mut open).await;
    let refused = within("connect after shutdown", TcpStream::connect(addr)).await;
    assert!(refused.is_err(), "the listener outlived shutdown");
}

#[tokio::test]
async fn a_non_loopback_upstream_is_refused() {
    let error = TcpProxy::start("192.0.2.1:80".parse().expect("addr"))
        .await
        .err()
        .expect("a non-loopback upstream must be refused");
    assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
}
