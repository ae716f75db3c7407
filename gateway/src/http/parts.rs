//! The parts `/mcp` is served with, made in one place for `serve` (`serve.rs`) and for the fuzz
//! checks' front (`fuzz.rs`): the admission counts, rmcp's session manager and service with the
//! gateway's settings, the maker of a session's handler, and the own front built from them.

use std::{net::SocketAddr, sync::Arc};

use axum::Router;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::{
    HostFront, ServeOptions,
    admit::Admission,
    front::HttpFront,
    hub::Hub,
    maker::Make,
    opening::Openings,
    own,
    restore::{Restore, StoreCounts},
    sessions::Sessions,
    settings::rmcp_config,
};
use mcp_resilient::ServerConfig;

use crate::{Mode, ProxyHandler, outbox::NotificationBuffer};

/// What `/mcp` is served with.
pub(in crate::http) struct FrontParts {
    pub(in crate::http) admission: Admission,
    /// rmcp's service (the whole front with `--front rmcp`; behind the own front, the requests
    /// without a session).
    pub(in crate::http) service: StreamableHttpService<ProxyHandler, Sessions>,
    pub(in crate::http) config: StreamableHttpServerConfig,
    pub(in crate::http) make: Make,
    /// The openings of requests waiting on a take-over (the guard's).
    pub(in crate::http) openings: Arc<Openings>,
    /// The store's counts (the status page's).
    pub(in crate::http) counts: Arc<StoreCounts>,
    /// Ends every session and stream, and the own front's sweeper.
    pub(in crate::http) ended: CancellationToken,
}

impl FrontParts {
    /// The parts for `hub`'s upstreams in `mode` (`own`: each session's own upstreams) served at
    /// `address` with `options`.
    pub(in crate::http) fn new(
        hub: &Hub,
        mode: Mode,
        own: Vec<ServerConfig>,
        options: &ServeOptions,
        address: SocketAddr,
        buffer: NotificationBuffer,
    ) -> Self {
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
        let make = hub.maker(mode, own, options, buffer);
        let rmcp_make = make.clone();
        let factory = move || Ok(rmcp_make(front.clone()));
        let openings = Arc::new(Openings::default());
        let counts = Arc::new(StoreCounts::default());
        let restore = Restore(options.store.clone(), openings.clone(), counts.clone());
        let config = rmcp_config(options, address, ended.clone(), restore);
        let service = StreamableHttpService::new(factory, sessions, config.clone());
        Self {
            admission,
            service,
            config,
            make,
            openings,
            counts,
            ended,
        }
    }

    /// The own front's parts (`cut`: the drain's limit).
    pub(in crate::http) fn own(
        &self,
        options: &ServeOptions,
        hub: &Hub,
        cut: CancellationToken,
    ) -> own::Parts {
        own::Parts {
            make: self.make.clone(),
            hooks: Arc::new(own::OwnHooks {
                hosts: hub.hosts.clone(),
                policed: options.access.is_some(),
            }),
            rmcp: self.service.clone(),
            config: self.config.clone(),
            max_body: options.limits.max_body_bytes,
            idle: options.limits.session_idle,
            store: options.store.clone(),
            hosts: hub.hosts.clone(),
            admission: self.admission.clone(),
            ended: self.ended.clone(),
            cut,
        }
    }

    /// `/mcp`: rmcp's service, or the own front with rmcp's service behind it for the requests
    /// without a session (`gateway/src/http/own/`).
    pub(in crate::http) fn route(
        &self,
        options: &ServeOptions,
        hub: &Hub,
        cut: CancellationToken,
    ) -> Router {
        match options.front {
            HostFront::Rmcp => Router::new().route_service("/mcp", self.service.clone()),
            HostFront::Own => own::router(self.own(options, hub, cut)),
        }
    }
}
