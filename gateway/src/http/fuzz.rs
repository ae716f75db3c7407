//! The own front (`own/`) on its own, for the fuzz checks in `fuzz/checks/` (feature
//! `fuzzing`; not a public API, no stability promise): built as `serve` builds it, with no
//! upstream, no listener and no guard, and a request handed to its router in memory, so that a
//! fuzzer's headers and bodies go through the real parsing and routing of `/mcp`.
//!
//! Re-exported as `mcp_resilient_gateway::fuzzing`. What the checks assert lives in
//! `fuzz/checks/src/front.rs` (FUZZING.md).

use std::{sync::Arc, time::Duration};

use axum::{
    Router,
    body::Body,
    http::{HeaderName, HeaderValue, Method, Request},
};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use super::{
    FrontLimits, HostFront, ServeOptions,
    hub::Hub,
    own::{self, Own},
    parts::FrontParts,
};
use crate::{Mode, outbox::NotificationBuffer};

/// The own front of a gateway with no upstream, aggregated.
pub struct OwnFront {
    own: Arc<Own>,
    router: Router,
    hub: Arc<Hub>,
    ended: CancellationToken,
}

/// What the front answered: the status, the headers, and the body as far as it was read.
#[derive(Debug)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// The headers, by name.
    pub headers: Vec<(String, Vec<u8>)>,
    /// The body's bytes, at most the bound [`OwnFront::send`] was given (and one frame).
    pub body: Vec<u8>,
    /// How the body ended.
    pub end: End,
}

/// How an answer's body ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// It was read to its end.
    Whole,
    /// It was still open (a stream) when reading stopped: no frame for a minute, or ten
    /// minutes in all (the clock of the runtime: a paused one runs them at once).
    Open,
    /// It was over the bound.
    Over,
    /// It failed.
    Failed,
}

/// No frame for this long: a stream that waits.
const FRAME_WAIT: Duration = Duration::from_secs(60);
/// A stream read for this long in all (keep-alive comments come every 15 s).
const READ_AT_MOST: Duration = Duration::from_secs(600);

impl OwnFront {
    /// A front whose bodies are bounded by `max_body` bytes. Needs a Tokio runtime (with its
    /// time driver).
    pub async fn start(max_body: usize) -> Self {
        let limits = FrontLimits {
            max_body_bytes: max_body,
            ..FrontLimits::default()
        };
        let options = ServeOptions {
            front: HostFront::Own,
            limits,
            ..ServeOptions::default()
        };
        let address = std::net::SocketAddr::from(([127, 0, 0, 1], 8808));
        let mode = Mode::Aggregated;
        let hub = match Hub::start(Vec::new(), mode, &options.proxy).await {
            Ok(hub) => Arc::new(hub),
            Err(_) => unreachable!("no upstream to start"),
        };
        let buffer = NotificationBuffer::of(&[]);
        let parts = FrontParts::new(&hub, mode, Vec::new(), &options, address, buffer);
        let ended = parts.ended.clone();
        // No drain here: nothing cuts a request.
        let own = own::build(parts.own(&options, &hub, CancellationToken::new()));
        let router = own::routed(own.clone());
        Self {
            own,
            router,
            hub,
            ended,
        }
    }

    /// `method` on `/mcp` with `headers` (a name or value that HTTP would not carry is left
    /// out, as no server would see it) and `body`; the answer's body read up to `bound` bytes.
    pub async fn send(
        &self,
        method: &str,
        headers: &[(Vec<u8>, Vec<u8>)],
        body: Vec<u8>,
        bound: usize,
    ) -> Answer {
        let method = Method::from_bytes(method.as_bytes()).unwrap_or(Method::POST);
        let mut request = Request::new(Body::from(body));
        *request.method_mut() = method;
        *request.uri_mut() = axum::http::Uri::from_static("/mcp");
        for (name, value) in headers {
            if let (Ok(name), Ok(value)) =
                (HeaderName::from_bytes(name), HeaderValue::from_bytes(value))
            {
                request.headers_mut().append(name, value);
            }
        }
        let response = match self.router.clone().oneshot(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        };
        let (parts, body) = response.into_parts();
        let headers = (parts.headers.iter())
            .map(|(name, value)| (name.to_string(), value.as_bytes().to_vec()))
            .collect();
        let (body, end) = read(body, bound).await;
        Answer {
            status: parts.status.as_u16(),
            headers,
            body,
            end,
        }
    }

    /// The ids of the sessions open.
    pub fn sessions(&self) -> Vec<String> {
        self.own.ids()
    }

    /// What can be seen of session `id` from outside its requests, in a line; `None` if it is
    /// not open.
    pub fn state_of(&self, id: &str) -> Option<String> {
        self.own.state_of(id)
    }

    /// Ends every session and the front.
    pub async fn stop(self) {
        self.ended.cancel();
        for id in self.own.ids() {
            self.own.close(&id);
        }
        self.hub.shutdown().await;
    }
}

async fn read(body: Body, bound: usize) -> (Vec<u8>, End) {
    let mut stream = body.into_data_stream();
    let mut read = Vec::new();
    let until = tokio::time::Instant::now() + READ_AT_MOST;
    loop {
        let wait = FRAME_WAIT.min(until.saturating_duration_since(tokio::time::Instant::now()));
        match tokio::time::timeout(wait, stream.next()).await {
            Ok(Some(Ok(frame))) => {
                read.extend_from_slice(&frame);
                if read.len() > bound {
                    return (read, End::Over);
                }
            }
            Ok(Some(Err(_))) => return (read, End::Failed),
            Ok(None) => return (read, End::Whole),
            Err(_) => return (read, End::Open),
        }
    }
}
