//! Streamable HTTP over TLS to the mock's https (`MockOptions::tls`, the throwaway CA of
//! `tests/fixtures/tls/`): with `http2 = auto` the client negotiates `h2` by ALPN and the
//! sessions of one origin share one connection; against a server whose ALPN offers `http/1.1`
//! alone, it speaks HTTP/1.1 through its HTTP client. What was negotiated is the mock's count
//! of ALPN results and of connections and requests by version.
//!
//! The library's own HTTP/2 connections trust the platform's roots; the test CA is added to
//! them through the test hook `Supervisor::trust_for_http2` (before the process's first TLS
//! connection; these are the only tests that open one), and to the HTTP client the tests give
//! for HTTP/1.1.

use mcp_mock_server::{MockOptions, MockServer, MockTls, MockTransport};
use mcp_resilient::{ServerConfig, Supervisor, ToolRegistry, config::Heartbeat, config::Http2};
use serde_json::json;

use crate::common::{LIMIT, era_2025, fast};

const CA: &[u8] = include_bytes!("../../../tests/fixtures/tls/ca.pem");
const CERT: &[u8] = include_bytes!("../../../tests/fixtures/tls/localhost.pem");
const KEY: &[u8] = include_bytes!("../../../tests/fixtures/tls/localhost.key");

async fn https_mock(http1_only: bool) -> MockServer {
    let options = MockOptions {
        transport: MockTransport::Http,
        http1_only,
        tls: Some(MockTls {
            cert_pem: CERT.to_vec(),
            key_pem: KEY.to_vec(),
        }),
        ..Default::default()
    };
    MockServer::start(options)
        .await
        .expect("mock server starts")
}

/// The HTTP client for HTTP/1.1, trusting the test CA.
fn http_client() -> reqwest::Client {
    let ca = reqwest::Certificate::from_pem(CA).expect("the test CA");
    reqwest::Client::builder()
        .add_root_certificate(ca)
        .build()
        .expect("a client")
}

/// `n` 2025 sessions (each holds a standalone stream) to `server` with `http2 = auto`, ready on
/// their first generation.
async fn sessions(server: &MockServer, n: usize) -> (Vec<Supervisor>, ToolRegistry) {
    assert!(
        Supervisor::trust_for_http2(CA),
        "the test CA is trusted before the first TLS connection"
    );
    assert!(
        server.http_url().starts_with("https://"),
        "{}",
        server.http_url()
    );
    let registry = ToolRegistry::new();
    let http = http_client();
    let mut supervisors = Vec::new();
    for i in 0..n {
        let config = ServerConfig::http(format!("s{i}"), server.http_url()).http2(Http2::Auto);
        let config = era_2025(fast(config)).heartbeat(Heartbeat::disabled());
        let supervisor = Supervisor::builder(config)
            .registry(&registry)
            .http_client(http.clone())
            .spawn()
            .expect("spawns");
        assert_eq!(supervisor.wait_ready(LIMIT).await.expect("ready").get(), 1);
        supervisors.push(supervisor);
    }
    (supervisors, registry)
}

async fn echo(registry: &ToolRegistry, server: &str, text: &str) {
    let handle = registry
        .handle(&format!("mcp__{server}__echo"))
        .expect("echo is registered");
    let answer = tokio::time::timeout(LIMIT, handle.call(json!({ "text": text })))
        .await
        .expect("echo within the limit")
        .expect("echo answers");
    let content = serde_json::to_string(&answer.content).expect("serializes");
    assert!(content.contains(text), "{content}");
}

#[tokio::test]
async fn over_tls_auto_negotiates_h2_by_alpn_and_the_sessions_share_one_connection() {
    let server = https_mock(false).await;
    let (supervisors, registry) = sessions(&server, 5).await;
    for i in 0..5 {
        echo(&registry, &format!("s{i}"), "over h2").await;
    }
    let wire = server.faults().wire();
    assert_eq!(wire.alpn_h2, 1, "{wire:?}");
    assert_eq!(wire.alpn_http1, 0, "{wire:?}");
    assert_eq!(wire.http2_connections, 1, "{wire:?}");
    assert_eq!(wire.http1_requests, 0, "{wire:?}");
    assert!(
        wire.http2_requests >= 15,
        "initialize, GET, echo each: {wire:?}"
    );
    for supervisor in supervisors {
        supervisor.shutdown().await;
    }
}

#[tokio::test]
async fn over_tls_auto_falls_back_to_http1_when_alpn_offers_only_http1() {
    let server = https_mock(true).await;
    let (supervisors, registry) = sessions(&server, 2).await;
    for i in 0..2 {
        echo(&registry, &format!("s{i}"), "over http/1.1").await;
    }
    let wire = server.faults().wire();
    assert_eq!(wire.alpn_h2, 0, "{wire:?}");
    assert!(wire.alpn_http1 >= 1, "{wire:?}");
    assert_eq!(wire.http2_requests, 0, "{wire:?}");
    assert!(
        wire.http1_requests >= 6,
        "initialize, GET, echo each: {wire:?}"
    );
    for supervisor in supervisors {
        supervisor.shutdown().await;
    }
}
