//! Serving: the shared upstreams started, rmcp's Streamable HTTP service built with the
//! gateway's settings and mounted behind the guard, and the orderly stop.
//!
//! # Invariants
//!
//! 1. After `stop`: the drain (`gateway/src/http/drain.rs`: `/readyz` 503 at once, new sessions
//!    refused, the requests of the sessions held here served until quiet or the limit); then
//!    every request is refused, the host sessions are written to the store, every session and
//!    stream is ended, every session's own upstreams and then the shared ones are shut down
//!    (children reaped), and [`Gateway::serve`] returns. Each step is bounded.

use std::{net::SocketAddr, sync::Arc, time::Duration};

use axum::{Router, middleware, routing::get, serve::ListenerExt};
use tokio_util::sync::CancellationToken;

use super::{
    Gateway, HostFront, ServeError,
    access::rate::Buckets,
    drain::{Drain, Ended},
    guard::{Gate, guard},
    health::{Readiness, healthz, readyz},
    hub::Hub,
    identify::Doors,
    jwt::Verifier,
    maker::split,
    operate::Operated,
    parts::FrontParts,
    prm::{Metadata, WELL_KNOWN},
};
use crate::outbox::NotificationBuffer;

/// How long the HTTP server may take to let go of its connections once everything is closed.
const LET_GO: Duration = Duration::from_millis(300);

impl Gateway {
    /// Serves hosts on `listener` until `stop` is cancelled, then closes everything in order
    /// (invariant 1) and returns.
    ///
    /// # Cancel safety
    ///
    /// Not cancel-safe: dropping the future skips the orderly stop (upstreams are asked to stop
    /// without waiting). Cancel `stop` and await the future instead.
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        stop: CancellationToken,
    ) -> Result<(), ServeError> {
        let address = listener.local_addr().map_err(ServeError::Listen)?;
        self.check_address(address)?;
        let options = self.options;
        warn_if_no_host_is_named(&options, address);
        let (doors, metadata) = doors(&options, address)?;
        let (own, common) = split(self.configs, &options.per_host)?;
        let per_host = own.clone();
        let buffer = NotificationBuffer::of(&[own.clone(), common.clone()].concat());
        let hub = Arc::new(
            Hub::start(common, self.mode, &options.proxy)
                .await
                .map_err(|failed| ServeError::Start {
                    server: failed.server,
                    source: failed.source,
                })?,
        );
        let parts = FrontParts::new(&hub, self.mode, own, &options, address, buffer);
        let ended = parts.ended.clone();
        let drain = Arc::new(Drain::new(options.drain, stop.clone()));
        let gate = Arc::new(Gate {
            doors,
            metadata: metadata.clone(),
            rates: Buckets::default(),
            admission: parts.admission.clone(),
            hosts: hub.hosts.clone(),
            openings: parts.openings.clone(),
            max_body: options.limits.max_body_bytes,
            drain: drain.clone(),
            open_sessions_early: options.front == HostFront::Rmcp,
        });
        let readiness = Arc::new(Readiness {
            hub: hub.clone(),
            gate: gate.clone(),
        });
        let counts = parts.counts.clone();
        let operated = Operated::start(&hub, &gate, &options, address, counts, per_host);
        let mcp = parts.route(&options, &hub, drain.cut.clone());
        let app = routes(mcp, gate.clone(), readiness, metadata).merge(operated.routes());
        let server = tokio::spawn(run_server(listener, app, ended.clone()));
        tracing::info!(%address, front = options.front.name(), "serving MCP at http://{address}/mcp");
        stop.cancelled().await;
        drained(&drain, &*options.store).await;
        ended.cancel();
        operated.close().await;
        hub.shutdown().await;
        tracing::debug!("every session and upstream is closed");
        let mut server = server;
        match tokio::time::timeout(LET_GO, &mut server).await {
            Ok(Ok(Err(error))) => return Err(ServeError::Listen(error)),
            Ok(_) => {}
            Err(_) => server.abort(),
        }
        tracing::debug!("the gateway stopped");
        Ok(())
    }
}

/// Invariant 1's drain: once the stop came, the requests in flight and those still coming to
/// the sessions held here are served until it settles; past its limit those in flight are
/// answered as lost. Then no request is let in, and the host sessions are written to the store.
async fn drained(drain: &Drain, store: &dyn crate::state::HostStore) {
    let started = tokio::time::Instant::now();
    tracing::info!(
        limit = ?drain.options.limit,
        in_flight = drain.in_flight(),
        "draining: /readyz answers 503, new sessions are refused"
    );
    let ended = drain.settle().await;
    drain.over.cancel();
    if let Ended::Limit(in_flight) = ended {
        tracing::warn!(
            in_flight,
            "the drain limit passed with requests in flight; they are answered as lost (may have run)"
        );
        drain.cut.cancel();
        drain.answered(LET_GO).await;
    }
    store.settle().await;
    tracing::info!(took = ?started.elapsed(), "drained");
}

/// Who may come in ([`Doors`]) and the metadata a 401 points at, for a listener on `address`:
/// the resource is the configured one, or `http://<address>/mcp`.
fn doors(
    options: &super::ServeOptions,
    address: SocketAddr,
) -> Result<(Doors, Arc<Metadata>), ServeError> {
    let resource = (options.resource.clone()).unwrap_or_else(|| format!("http://{address}/mcp"));
    let jwt = match &options.jwt {
        Some(jwt) => Some(Verifier::new(jwt, resource.clone()).map_err(ServeError::Jwt)?),
        None => None,
    };
    let doors = Doors {
        tokens: options.tokens.clone(),
        jwt,
        access: options.access.clone(),
    };
    let issuer = options.jwt.as_ref().map(|jwt| jwt.issuer.as_str());
    Ok((doors, Arc::new(Metadata::new(&resource, issuer))))
}

/// The routes: `/mcp` (either front) behind the guard, the probes, and the protected resource
/// metadata (at the root form and the `/mcp` suffixed one, RFC 9728 §3.1).
fn routes(
    mcp: Router,
    gate: Arc<Gate>,
    readiness: Arc<Readiness>,
    metadata: Arc<Metadata>,
) -> Router {
    let document = move || {
        let metadata = metadata.clone();
        async move { metadata.answer() }
    };
    mcp.layer(middleware::from_fn_with_state(gate, guard))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz).with_state(readiness))
        .route(WELL_KNOWN, get(document.clone()))
        .route(&format!("{WELL_KNOWN}/mcp"), get(document))
}

/// The HTTP server: `app` on `listener`'s connections until `closed`, then the connections
/// it still has are let go gracefully.
async fn run_server(
    listener: tokio::net::TcpListener,
    app: Router,
    closed: CancellationToken,
) -> std::io::Result<()> {
    // Answers are small writes: without TCP_NODELAY, Nagle's algorithm holds one back until
    // the host's delayed ACK (40 ms on Linux) for every call.
    let listener = listener.tap_io(|tcp| {
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!(%error, "TCP_NODELAY not set on a host connection");
        }
    });
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { closed.cancelled().await })
        .await
}

/// On `0.0.0.0` (or `::`) every name is as good as another, so none is known: the DNS-rebinding
/// check refuses every host unless allowed hosts are named. Said at start, rather than left to
/// the operator to learn from the hosts' 403s.
fn warn_if_no_host_is_named(options: &super::ServeOptions, address: SocketAddr) {
    if address.ip().is_unspecified() && options.allowed_hosts.is_empty() {
        tracing::warn!(
            "serving on {address}, and no allowed host is named: requests are refused (403) \
             unless their Host is {}; name the hosts' names for this gateway (--allowed-host)",
            address.ip()
        );
    }
}
