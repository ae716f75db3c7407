//! The forwarding half of [`HttpFaultProxy`](super::HttpFaultProxy): the upstream address, the
//! hyper client whose connection tasks the proxy owns, and the header rewriting.
//!
//! # Invariants
//!
//! 1. Every upstream connection task runs in the proxy's tracker and ends when `stop` fires.
//! 2. Headers pass through unchanged both ways except hop-by-hop ones (the standard set plus
//!    those a `Connection` header names); `Host` is the upstream's authority.

use std::io;
use std::time::Duration;

use axum::body::Body;
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::http::uri::{Authority, Uri};
use hyper::{Request, Response};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// How long the proxy waits for the upstream to accept a connection.
const CONNECT_DEADLINE: Duration = Duration::from_secs(5);

/// Hop-by-hop headers (RFC 9110 §7.6.1), never forwarded.
const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// Where requests go: `http://<loopback authority><prefix>`.
#[derive(Debug, Clone)]
pub(super) struct Upstream {
    authority: Authority,
    /// The base URL's path without a trailing `/`, prepended to every request path.
    prefix: String,
}

impl Upstream {
    /// Parses `http://127.0.0.1:PORT[/prefix]`; the host must be loopback (or `localhost`).
    pub(super) fn parse(base: &str) -> io::Result<Upstream> {
        let invalid = |why: &str| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("upstream {base:?}: {why}"),
            )
        };
        let uri: Uri = base.parse().map_err(|_| invalid("not a URL"))?;
        if uri.scheme_str() != Some("http") {
            return Err(invalid("only http:// is supported"));
        }
        let authority = uri.authority().cloned().ok_or_else(|| invalid("no host"))?;
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']');
        let loopback = host == "localhost"
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        if !loopback {
            return Err(invalid("not a loopback host"));
        }
        let prefix = uri.path().trim_end_matches('/').to_owned();
        Ok(Upstream { authority, prefix })
    }
}

/// Runs hyper's connection tasks in the proxy's tracker, each ending when `stop` fires.
#[derive(Clone)]
pub(super) struct TrackedExecutor {
    pub(super) tracker: TaskTracker,
    pub(super) stop: CancellationToken,
}

impl<F> hyper::rt::Executor<F> for TrackedExecutor
where
    F: Future<Output = ()> + Send + 'static,
{
    fn execute(&self, future: F) {
        let stop = self.stop.clone();
        self.tracker.spawn(async move {
            stop.run_until_cancelled(future).await;
        });
    }
}

/// The pooled HTTP/1.1 client the proxy forwards with.
pub(super) type UpstreamClient = Client<HttpConnector, Body>;

pub(super) fn client(executor: TrackedExecutor) -> UpstreamClient {
    let mut connector = HttpConnector::new();
    connector.set_connect_timeout(Some(CONNECT_DEADLINE));
    connector.set_nodelay(true);
    Client::builder(executor).build(connector)
}

/// Points `request` at the upstream: absolute URI, `Host` rewritten, hop-by-hop headers gone.
pub(super) fn to_upstream(
    mut request: Request<Body>,
    upstream: &Upstream,
) -> Result<Request<Body>, hyper::http::Error> {
    let path = request.uri().path_and_query().map_or("/", |pq| pq.as_str());
    *request.uri_mut() = Uri::builder()
        .scheme("http")
        .authority(upstream.authority.clone())
        .path_and_query(format!("{}{path}", upstream.prefix))
        .build()?;
    strip_hop_by_hop(request.headers_mut());
    let host = HeaderValue::from_str(upstream.authority.as_str())?;
    request.headers_mut().insert(header::HOST, host);
    Ok(request)
}

/// The upstream's response with hop-by-hop headers removed; the body streams on unbuffered.
pub(super) fn from_upstream(response: Response<hyper::body::Incoming>) -> Response<Body> {
    let mut response = response.map(Body::new);
    strip_hop_by_hop(response.headers_mut());
    response
}

fn strip_hop_by_hop(headers: &mut HeaderMap) {
    let named: Vec<HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .filter_map(|name| HeaderName::from_bytes(name.trim().as_bytes()).ok())
        .collect();
    for name in named {
        headers.remove(name);
    }
    for name in HOP_BY_HOP {
        headers.remove(name);
    }
}
