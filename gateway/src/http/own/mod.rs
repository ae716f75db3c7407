//! The gateway's own host-facing Streamable HTTP front (`--front own`), beside rmcp's: session
//! era hosts (2025-03-26 to 2025-11-25) are served here, straight from a table of sessions;
//! everything without a session (2026-07-28 hosts, `server/discover`, their listen streams) goes
//! on to rmcp's service, which has no per-session state for them either.
//!
//! What it does per request, and what it does not:
//!
//! - A `POST` body is read once (bounded: 413) and parsed once into rmcp's message type; the
//!   request goes to the session's [`ProxyHandler`] through rmcp's own dispatch
//!   (`Service::handle_request`, which shapes answers for the host's revision), on the
//!   connection's task: no session task, no channel between the connection and the handler.
//!   The answer is written as one `application/json` body (a host must accept it: `406`). A
//!   notification or a host's answer gets `202`. A request that asks for progress is answered
//!   as an SSE stream instead, its progress before its answer (`progress.rs`).
//! - A `tools/call` not answered within a short grace (`asks::STREAM_AFTER`, 10 ms) is
//!   answered as an SSE stream from then on: the response's head and a priming event (an event
//!   id, `retry`, empty data) go out when the grace ends, the answer is an event later, and the
//!   host whose stream breaks asks for the rest with `Last-Event-ID`. A call answered within it
//!   (the hop's fast path) is one JSON body, and pays one timer for the grace. Only calls get
//!   the grace (what runs long and what must not run twice; a read or a list is asked again).
//! - In a fleet (a store shared with other processes: `HostStore::shared`) a `tools/call`'s
//!   stream opens at once, and the call runs only once its head and priming event were handed
//!   to the socket (or the host is gone, or `opening::OUT_LIMIT`): a balancer that resends a
//!   request whose process died before its head (nginx's `non_idempotent`) never has a call
//!   run twice, and a host whose replica died mid-call resumes elsewhere and is told the call
//!   may have run. A request in a session this process must take over from the store gets its
//!   head and priming event once the store has made this process the owner, before the session
//!   is rebuilt (its upstreams started again), whatever the request (`post.rs`). The same as
//!   rmcp's front's early opening (`gateway/src/http/opening/mod.rs`).
//! - An idle session is an entry in the table (the core's per-session state, which both fronts
//!   have, and a clone of an rmcp `Peer` whose service has ended, one per revision: rmcp's
//!   dispatch reads the host's revision from it). It holds no task and no channel; one sweeper
//!   ends the idle ones for the table.
//! - `GET` opens the session's standalone stream: one task drains the session's outbox to it
//!   for as long as it is open (one per session; a second gets `409`). What is queued while no
//!   stream is open waits in the outbox (bounded, the same as rmcp's front).
//! - `DELETE` ends the session: `204`. An unknown session: `404`, unless the host-session store
//!   lets this process take it over (a fleet): then it is rebuilt from what the host said in its
//!   `initialize` and served.
//! - The guard in front of it is the same as rmcp's (tokens, JWT, rates, bounds, ownership of a
//!   session); `Host` and `Origin` are checked here with the same settings ([`checks`]).
//!
//! - A server's request to the host (sampling, elicitation, roots) rides the response of the
//!   host's request that caused it, which turns from JSON into an SSE stream at the first
//!   question; without one, the standalone stream; the host's answer (a `POST` in its session)
//!   reaches only its own session's question; bounded per session (`asks.rs`).
//!
//! - Every SSE stream has event ids and can be asked for again with `Last-Event-ID`
//!   (`resumable.rs`, `replay.rs`); a `Last-Event-ID` of another process (a replica gone, rmcp's
//!   front) is answered as lost.
//!
//! Not here (see `BENCHMARKS.md`, "The own front"): batches (refused).
//!
//! # Invariants
//!
//! 1. A request reaches only the session its `Mcp-Session-Id` names, and only if that session
//!    is in this process's table (or was just taken over from the store for it).
//! 2. Every way a session ends (`DELETE`, idle, taken by another replica, the end) goes through
//!    [`Own::close`]: it leaves the table, the hosts' table (its own upstreams shut down) and the
//!    admission counts, once.

use std::{sync::Arc, time::Duration};

use axum::{
    Router,
    body::Body,
    extract::{Request, State},
    http::{Method, StatusCode},
    response::{IntoResponse, Response},
    routing::any,
};
use rmcp::{
    RoleServer,
    transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService},
};
use tokio_util::sync::CancellationToken;

use super::{admit::Admission, hub::Hosts, maker::Make, refusal::refuse, sessions::Sessions};
use crate::{ProxyHandler, state::HostStore};

mod answer;
mod asks;
mod checks;
mod hooks;
mod open;
mod post;
mod progress;
mod questions;
mod replay;
mod resumable;
mod stream;
mod table;

pub(in crate::http) use hooks::OwnHooks;

use self::{checks::Checks, table::Table};

const SESSION_HEADER: &str = "mcp-session-id";

/// The own front.
pub(in crate::http) struct Own {
    table: Table,
    make: Make,
    hooks: Arc<OwnHooks>,
    /// rmcp's service, for the requests without a session.
    rmcp: StreamableHttpService<ProxyHandler, Sessions>,
    checks: Checks,
    max_body: usize,
    keep_alive: Duration,
    store: Arc<dyn HostStore>,
    hosts: Arc<Hosts>,
    admission: Admission,
    /// Cancelled when the drain's limit passes: a request still waiting for its answer to be
    /// written as one JSON body is answered as lost then (`asks.rs`).
    cut: CancellationToken,
    /// One take-over from the store at a time (two requests for a session held elsewhere
    /// rebuild it once).
    restoring: Arc<tokio::sync::Mutex<()>>,
    /// The peers rmcp's dispatch is given, by the revision a host asked for (`open.rs`).
    peers: std::sync::Mutex<std::collections::HashMap<String, rmcp::Peer<RoleServer>>>,
}

/// What the own front is built from.
pub(in crate::http) struct Parts {
    pub(in crate::http) make: Make,
    pub(in crate::http) hooks: Arc<OwnHooks>,
    pub(in crate::http) rmcp: StreamableHttpService<ProxyHandler, Sessions>,
    /// rmcp's settings: the own front checks `Host` and `Origin` as they say.
    pub(in crate::http) config: StreamableHttpServerConfig,
    pub(in crate::http) max_body: usize,
    pub(in crate::http) idle: Duration,
    pub(in crate::http) store: Arc<dyn HostStore>,
    pub(in crate::http) hosts: Arc<Hosts>,
    pub(in crate::http) admission: Admission,
    /// Ends the sweeper, and every session with the gateway.
    pub(in crate::http) ended: CancellationToken,
    /// The drain's limit (`gateway/src/http/drain.rs`).
    pub(in crate::http) cut: CancellationToken,
}

/// `/mcp` served by the own front (the guard goes in front of it, as of rmcp's).
pub(in crate::http) fn router(parts: Parts) -> Router {
    routed(build(parts))
}

/// `/mcp` served by `own`.
pub(in crate::http) fn routed(own: Arc<Own>) -> Router {
    Router::new().route("/mcp", any(serve).with_state(own))
}

/// The own front, its sweeper started.
pub(in crate::http) fn build(parts: Parts) -> Arc<Own> {
    let own = Arc::new(Own {
        table: Table::new(parts.idle),
        make: parts.make,
        hooks: parts.hooks,
        rmcp: parts.rmcp,
        checks: Checks::of(&parts.config),
        max_body: parts.max_body,
        keep_alive: parts
            .config
            .sse_keep_alive
            .unwrap_or(Duration::from_secs(15)),
        store: parts.store,
        hosts: parts.hosts,
        admission: parts.admission,
        cut: parts.cut,
        restoring: Arc::default(),
        peers: std::sync::Mutex::default(),
    });
    sweep(own.clone(), parts.ended);
    own
}

async fn serve(State(own): State<Arc<Own>>, request: Request) -> Response {
    if let Err(refused) = own.checks.allow(request.uri(), request.headers()) {
        return *refused;
    }
    let session = (request.headers().get(SESSION_HEADER))
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    match (request.method().clone(), session) {
        (Method::POST, session) => post::post(&own, request, session).await,
        (Method::GET, Some(id)) => stream::get(&own, request, &id).await,
        (Method::DELETE, Some(id)) => own.delete(&id).await,
        (Method::GET | Method::DELETE, None) => own.to_rmcp(request).await,
        _ => {
            let mut refused = refuse(StatusCode::METHOD_NOT_ALLOWED, "use POST, GET or DELETE");
            let allow = axum::http::HeaderValue::from_static("GET, POST, DELETE");
            refused
                .headers_mut()
                .insert(axum::http::header::ALLOW, allow);
            refused
        }
    }
}

impl Own {
    /// A request without a session, for rmcp's service.
    async fn to_rmcp(&self, request: Request) -> Response {
        self.rmcp.handle(request).await.map(Body::new)
    }

    async fn delete(&self, id: &str) -> Response {
        if self.table.get(id).is_none() {
            return refuse(StatusCode::NOT_FOUND, "no such session");
        }
        self.store.forget(id);
        self.close(id);
        StatusCode::NO_CONTENT.into_response()
    }

    /// What can be seen of session `id` from outside its requests (for the fuzz checks'
    /// invariant 1: input naming another session leaves this one as it was).
    #[cfg(feature = "fuzzing")]
    pub(in crate::http) fn state_of(&self, id: &str) -> Option<String> {
        let session = self.table.get(id)?;
        Some(format!(
            "{:p} {} hosts:{} held:{} owner:{:?}",
            Arc::as_ptr(&session),
            session.describe(),
            self.hosts.has(id),
            self.store.holds(id),
            self.admission.owner(id),
        ))
    }

    /// The ids of the sessions in the table.
    #[cfg(feature = "fuzzing")]
    pub(in crate::http) fn ids(&self) -> Vec<String> {
        self.table.ids().iter().map(|id| id.to_string()).collect()
    }

    /// Invariant 2.
    pub(in crate::http) fn close(&self, id: &str) {
        if let Some(session) = self.table.remove(id) {
            session.end();
        }
        self.hosts.close(id);
        self.admission.closed(id);
    }
}

/// What the drain's limit answers for `request` if its stream is still open then (the guard
/// reads it from the response: `gateway/src/http/drain.rs`).
fn unanswered(
    request: &rmcp::model::JsonRpcRequest<rmcp::model::ClientRequest>,
) -> super::lost::Unanswered {
    let call = matches!(
        request.request,
        rmcp::model::ClientRequest::CallToolRequest(_)
    );
    super::lost::Unanswered::new(call, request.id.clone())
}

/// The sweeper: ends idle sessions until `ended`, then every session.
fn sweep(own: Arc<Own>, ended: CancellationToken) {
    let every = own.table.sweep_every();
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(every);
        loop {
            tokio::select! {
                () = ended.cancelled() => break,
                _ = ticks.tick() => {}
            }
            for id in own.table.idle() {
                tracing::debug!("a host session idle past its bound is closed");
                own.close(&id);
            }
        }
        for id in own.table.ids() {
            own.close(&id);
        }
    });
}
