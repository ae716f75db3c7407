//! The size of a host request's future, guarded.
//!
//! rmcp keeps the future of a host's request for as long as the request lasts, and its HTTP
//! server keeps the one from `initialize` for the whole host session: every byte of it is a byte
//! of every idle host session of `serve`. The handler's methods box their work (`traced`,
//! `call_tool`, `initialize`, `listen`) so that rmcp's dispatch over them stays small: 16,488
//! bytes before (nightly `-Zprint-type-sizes`), 3,368 after (BENCHMARKS § 22). A method added
//! without a box would grow it back without any other test noticing; these tests notice.

use std::sync::Arc;

use rmcp::{
    RoleServer, Service,
    model::{ClientRequest, NumberOrString, PingRequest},
    service::{RequestContext, serve_directly},
};

use super::{
    Mode, ProxyOptions, handler::ProxyHandler, host::HostLink, outbox, session, shared::Shared,
};
use mcp_resilient::ServerConfig;

/// The most the handler's request future may take, in `ClientRequest`s: the sizes move with the
/// features rmcp is built with (rig-core turns some on: a `ClientRequest` is 344 bytes without,
/// 464 with), and the future with them. Now 3,368 bytes = 9.8 requests without rig, 4,296 = 9.3
/// with; `initialize`'s work unboxed makes it 5,304 = 15.4 (6,256 = 13.5 with rig).
const MOST: usize = 11;

/// The same for the stdio session's service (the handler and its drain): 4,080 bytes = 11.9
/// requests without rig, 5,176 = 11.2 with; with `initialize`'s work unboxed 6,016 = 17.5
/// (7,136 = 15.4 with rig).
const MOST_STDIO: usize = 13;

/// `requests` `ClientRequest`s, in bytes.
fn requests(requests: usize) -> usize {
    requests * std::mem::size_of::<ClientRequest>()
}

fn handler() -> ProxyHandler {
    let configs = vec![ServerConfig::stdio("sizes", "true")];
    let outbox = outbox::Outbox::new(outbox::NotificationBuffer::of(&configs));
    let link = Arc::new(HostLink::new(outbox, "pipe"));
    ProxyHandler::new(Arc::new(Shared::new(
        Mode::Transparent,
        configs,
        None,
        ProxyOptions::default(),
        link,
    )))
}

/// A context for a request: its peer comes from a service that is never talked to.
fn context(handler: ProxyHandler) -> RequestContext<RoleServer> {
    let (ours, _theirs) = tokio::io::duplex(64);
    let running = serve_directly::<RoleServer, _, _, _, _>(handler, ours, None);
    RequestContext::new(NumberOrString::Number(1), running.peer().clone())
}

fn ping() -> ClientRequest {
    ClientRequest::PingRequest(PingRequest::default())
}

#[tokio::test]
async fn the_handlers_request_future_stays_small() {
    let handler = handler();
    let future = Service::<RoleServer>::handle_request(&handler, ping(), context(handler.clone()));
    let size = std::mem::size_of_val(&future);
    let most = requests(MOST);
    assert!(
        size <= most,
        "a host request's future is {size} bytes (at most {most}): box the work of the handler \
         method that grew it"
    );
}

#[tokio::test]
async fn the_stdio_sessions_request_future_stays_small() {
    let handler = handler();
    let draining = session::Draining {
        handler: handler.clone(),
        ending: session::Ending::new(Default::default(), std::time::Duration::from_secs(1)),
    };
    let future = Service::<RoleServer>::handle_request(&draining, ping(), context(handler));
    let size = std::mem::size_of_val(&future);
    let most = requests(MOST_STDIO);
    assert!(
        size <= most,
        "a stdio host request's future is {size} bytes (at most {most}): box the work of the \
         handler method that grew it"
    );
}
