//! The origin set against the mock's h2c: its bounds and its memory, which the session-level
//! tests (`tests/it/http2.rs`) do not reach.

use std::time::Duration;

use mcp_mock_server::{MockOptions, MockServer, MockTransport};

use super::{Http2Error, SendError, origin_set, set::MAX_ATTEMPTS};
use crate::config::Http2;

mod sizing;

const LIMIT: Duration = Duration::from_secs(20);

async fn mock(http1_only: bool) -> MockServer {
    let options = MockOptions {
        transport: MockTransport::Http,
        http1_only,
        ..Default::default()
    };
    MockServer::start(options).await.expect("mock starts")
}

/// A `DELETE` of no session: the mock answers it at once, whatever it is.
fn request(server: &MockServer) -> impl Fn() -> reqwest::RequestBuilder {
    let url = server.http_url();
    move || reqwest::Client::new().delete(&url)
}

#[tokio::test]
async fn a_request_refused_every_time_fails_as_never_ran_after_the_last_attempt() {
    let server = mock(false).await;
    let set = origin_set(
        &server.http_url().parse().unwrap(),
        Http2::PriorKnowledge,
        None,
    )
    .unwrap();
    server.faults().refuse_streams(MAX_ATTEMPTS);
    let sent = tokio::time::timeout(LIMIT, set.send(request(&server))).await;
    match sent.expect("within the limit") {
        Err(SendError::Http2(error @ Http2Error::Unprocessed { attempts, .. })) => {
            assert_eq!(attempts, MAX_ATTEMPTS);
            assert!(error.never_ran());
        }
        other => panic!("not refused: {other:?}"),
    }
    assert_eq!(
        server.faults().wire().refused_streams,
        u64::from(MAX_ATTEMPTS)
    );
    // The next one goes through on the same connection.
    let answer = tokio::time::timeout(LIMIT, set.send(request(&server))).await;
    assert!(matches!(answer.expect("within the limit"), Ok(Some(_))));
    let wire = server.faults().wire();
    assert_eq!((wire.http2_connections, set.connections()), (1, 1));
}

#[tokio::test]
async fn an_origin_found_to_speak_http1_is_not_asked_again() {
    let server = mock(true).await;
    let set = origin_set(
        &server.http_url().parse().unwrap(),
        Http2::PriorKnowledge,
        None,
    )
    .unwrap();
    for _ in 0..3 {
        let sent = tokio::time::timeout(LIMIT, set.send(request(&server))).await;
        assert!(matches!(sent.expect("within the limit"), Ok(None)));
    }
    // The preface's connection carried no request, so only `accepted` counts it (a stranger's
    // connection in these few milliseconds would count too).
    assert_eq!(
        server.faults().wire().accepted,
        1,
        "one preface, then no more"
    );
}

#[tokio::test]
async fn sessions_of_one_origin_get_one_set_and_other_modes_none() {
    let url = "http://127.0.0.1:9/mcp".parse().unwrap();
    let one = origin_set(&url, Http2::PriorKnowledge, None).unwrap();
    let two = origin_set(&url, Http2::PriorKnowledge, None).unwrap();
    assert!(std::sync::Arc::ptr_eq(&one, &two));
    assert!(
        origin_set(&url, Http2::Auto, None).is_none(),
        "h2c only by prior knowledge"
    );
    assert!(origin_set(&url, Http2::Off, None).is_none());
    let tls = "https://127.0.0.1:9/mcp".parse().unwrap();
    assert!(origin_set(&tls, Http2::Auto, None).is_some());
}

/// A certificate for 127.0.0.1 and localhost (valid until 2126), its key, and the throwaway CA
/// that signed it (whose key was not kept): test material only, trusted by these tests alone.
const CA: &[u8] = include_bytes!("../../../../tests/fixtures/tls/ca.pem");
const CERT: &[u8] = include_bytes!("../../../../tests/fixtures/tls/localhost.pem");
const KEY: &[u8] = include_bytes!("../../../../tests/fixtures/tls/localhost.key");

mod tls {
    use std::{convert::Infallible, io, net::SocketAddr, sync::Arc};

    use hyper_util::rt::{TokioExecutor, TokioIo};
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};
    use tokio::{net::TcpListener, task::JoinHandle};

    use super::{CA, CERT, KEY, LIMIT};
    use crate::transport::http2::{
        budget::Descriptor,
        conn::{Opened, Target, offering_h2, open_over},
    };

    fn provider() -> Arc<rustls::crypto::CryptoProvider> {
        Arc::new(rustls::crypto::aws_lc_rs::default_provider())
    }

    /// The client's TLS, as the set's but trusting the test certificate alone.
    fn trusting_the_test_cert() -> io::Result<tokio_rustls::TlsConnector> {
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(CA) {
            roots
                .add(cert.map_err(io::Error::other)?)
                .map_err(io::Error::other)?;
        }
        let config = rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(io::Error::other)?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(offering_h2(config))
    }

    /// A TLS server on 127.0.0.1 that agrees on `alpn` and answers every request `ok`, in
    /// HTTP/1.1 or HTTP/2 as the client speaks.
    async fn server(alpn: &[&[u8]]) -> (SocketAddr, JoinHandle<()>) {
        let certs = CertificateDer::pem_slice_iter(CERT).collect::<Result<Vec<_>, _>>();
        let key = PrivateKeyDer::from_pem_slice(KEY).expect("key");
        let mut config = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_no_client_auth()
            .with_single_cert(certs.expect("certs"), key)
            .expect("server config");
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let task = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                connections.spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let ok = hyper::service::service_fn(|_| async {
                        Ok::<_, Infallible>(hyper::Response::new("ok".to_owned()))
                    });
                    let builder =
                        hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                    let _ = builder.serve_connection(TokioIo::new(tls), ok).await;
                });
            }
        });
        (addr, task)
    }

    fn target(addr: SocketAddr) -> Target {
        Target {
            host: "127.0.0.1".to_owned(),
            port: addr.port(),
            tls: true,
            ping: None,
        }
    }

    #[tokio::test]
    async fn alpn_h2_gives_an_http2_connection_that_answers() {
        let (addr, server) = server(&[b"h2", b"http/1.1"]).await;
        let target = target(addr);
        let opened = tokio::time::timeout(
            LIMIT,
            open_over(&target, trusting_the_test_cert, Descriptor::first()),
        );
        let Opened::Http2(conn) = opened.await.expect("in time").expect("opens") else {
            panic!("ALPN agreed on h2, yet no HTTP/2 connection");
        };
        let request = hyper::Request::builder()
            .uri(format!("https://127.0.0.1:{}/mcp", addr.port()))
            .body(reqwest::Body::from(""))
            .expect("request");
        let answer = tokio::time::timeout(LIMIT, conn.sender().send_request(request)).await;
        let answer = answer.expect("in time").expect("answered");
        assert_eq!(
            (answer.status().as_u16(), answer.version()),
            (200, hyper::Version::HTTP_2)
        );
        server.abort();
    }

    #[tokio::test]
    async fn alpn_http1_says_the_server_speaks_http1() {
        let (addr, server) = server(&[b"http/1.1"]).await;
        let target = target(addr);
        let opened = tokio::time::timeout(
            LIMIT,
            open_over(&target, trusting_the_test_cert, Descriptor::first()),
        );
        let opened = opened.await.expect("in time").expect("opens");
        assert!(matches!(opened, Opened::Http1));
        server.abort();
    }
}
