//! Serving: the shared upstreams started, rmcp's Streamable HTTP service built with the
//! gateway's settings and mounted behind the guard, and the orderly stop.
//!
//! # Invariants
//!
//! 1. After `stop`: new requests get 503 at once; requests in flight get the drain; then every
//!    session and stream is ended, every session's own upstreams and then the shared ones are
//!    shut down (children reaped), and [`Gateway::serve`] returns. Each step is bounded.

use std::{
    net::{IpAddr, SocketAddr},
    sync::{Arc, atomic::AtomicUsize},
    time::Duration,
};

use axum::{Router, middleware, routing::get, serve::ListenerExt};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::{
    Gateway, HostFront, ServeError,
    access::rate::Buckets,
    admit::Admission,
    front::HttpFront,
    guard::{Gate, guard},
    health::{Readiness, healthz, readyz},
    hub::Hub,
    identify::Doors,
    jwt::Verifier,
    opening::Openings,
    own,
    prm::{Metadata, WELL_KNOWN},
    restore::Restore,
    sessions::Sessions,
};
use crate::outbox::NotificationBuffer;
use mcp_resilient::{ServerConfig, config::Sessions as UpstreamSessions};

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
        let options = self.options;
        if !address.ip().is_loopback()
            && options.tokens.is_empty()
            && options.jwt.is_none()
            && !options.allow_unauthenticated
        {
            return Err(ServeError::Unauthenticated(address));
        }
        warn_if_no_host_is_named(&options, address);
        let (doors, metadata) = doors(&options, address)?;
        let (own, common) = split(self.configs, &options.per_host)?;
        let buffer = NotificationBuffer::of(&[own.clone(), common.clone()].concat());
        let hub = Arc::new(
            Hub::start(common, self.mode, &options.proxy)
                .await
                .map_err(|failed| ServeError::Start {
                    server: failed.server,
                    source: failed.source,
                })?,
        );
        let admission = Admission::new(options.limits);
        let front = Arc::new(HttpFront {
            hosts: hub.hosts.clone(),
            policed: options.access.is_some(),
        });
        let sessions = Arc::new(Sessions::new(
            hub.hosts.clone(),
            admission.clone(),
            options.limits.session_idle,
            options.store.clone(),
        ));
        let ended = CancellationToken::new();
        let make = hub.maker(self.mode, own, &options, buffer);
        let rmcp_make = make.clone();
        let factory = move || Ok(rmcp_make(front.clone()));
        let openings = Arc::new(Openings::default());
        let config = rmcp_config(&options, address, ended.clone(), openings.clone());
        let service = StreamableHttpService::new(factory, sessions, config.clone());
        let gate = Arc::new(Gate {
            doors,
            metadata: metadata.clone(),
            rates: Buckets::default(),
            admission: admission.clone(),
            hosts: hub.hosts.clone(),
            openings,
            max_body: options.limits.max_body_bytes,
            open_sessions_early: options.front == HostFront::Rmcp,
            stopping: stop.clone(),
            in_flight: AtomicUsize::new(0),
            idle: Notify::new(),
        });
        let readiness = Arc::new(Readiness {
            hub: hub.clone(),
            gate: gate.clone(),
        });
        let mcp = own::route(
            &options,
            service,
            config,
            make,
            &hub,
            admission,
            ended.clone(),
        );
        let app = routes(mcp, gate.clone(), readiness, metadata);
        let server = tokio::spawn(run_server(listener, app, ended.clone()));
        tracing::info!(%address, "serving MCP at http://{address}/mcp");
        stop.cancelled().await;
        // Invariant 1: no new request; those in flight get the drain; then everything ends.
        let drain = options.proxy.drain;
        if tokio::time::timeout(drain, gate.quiet()).await.is_err() {
            tracing::info!("requests were still in flight after the drain; abandoned");
        }
        ended.cancel();
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

/// The servers with one upstream session per host session, and the shared ones.
fn split(
    configs: Vec<ServerConfig>,
    per_host: &[String],
) -> Result<(Vec<ServerConfig>, Vec<ServerConfig>), ServeError> {
    if let Some(unknown) = per_host
        .iter()
        .find(|name| !configs.iter().any(|c| c.name() == name.as_str()))
    {
        return Err(ServeError::UnknownPerHost(unknown.clone()));
    }
    Ok(configs.into_iter().partition(|c| {
        c.get_sessions() == UpstreamSessions::PerHost || per_host.iter().any(|n| n == c.name())
    }))
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

/// rmcp's service settings: the gateway's bounds, and `Host`/`Origin` as the options say.
fn rmcp_config(
    options: &super::ServeOptions,
    address: SocketAddr,
    ended: CancellationToken,
    openings: Arc<Openings>,
) -> StreamableHttpServerConfig {
    let loopback = address.ip().is_loopback();
    let mut hosts: Vec<String> = match loopback {
        true => vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
        false => vec![host_of(address.ip())],
    };
    hosts.extend(options.allowed_hosts.iter().cloned());
    let mut origins: Vec<String> = match loopback {
        true => vec!["http://localhost:*".into(), "http://127.0.0.1:*".into()],
        false => Vec::new(),
    };
    origins.extend(options.allowed_origins.iter().cloned());
    let mut config = StreamableHttpServerConfig::default()
        .with_sse_keep_alive(Some(options.sse_keep_alive))
        .with_sse_retry(Some(super::sessions::RESUME_AFTER))
        .with_cancellation_token(ended)
        .with_max_request_body_bytes(options.limits.max_body_bytes)
        .with_allowed_origins(origins)
        .enforce_origin_validation();
    config.session_store = Some(Arc::new(Restore(options.store.clone(), openings)));
    match hosts.iter().any(|h| h == "*") {
        true => config.disable_allowed_hosts(),
        false => config.with_allowed_hosts(hosts),
    }
}

fn host_of(ip: IpAddr) -> String {
    ip.to_string()
}
