//! rmcp's service settings for `/mcp`, and the `Host`s and `Origin`s allowed there and on the
//! status pages alike.

use std::{
    net::{IpAddr, SocketAddr},
    sync::Arc,
};

use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use tokio_util::sync::CancellationToken;

use super::{ServeOptions, restore::Restore, status::Doorway};

/// The allowed `Host`s and `Origin`s, for `/mcp` (rmcp's checks) and the status pages alike:
/// loopback names on loopback, else the listener's address; and those the options name.
pub(in crate::http) fn allowed(options: &ServeOptions, address: SocketAddr) -> Doorway {
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
    Doorway { hosts, origins }
}

/// rmcp's service settings: the gateway's bounds, and `Host`/`Origin` as the options say.
pub(in crate::http) fn rmcp_config(
    options: &ServeOptions,
    address: SocketAddr,
    ended: CancellationToken,
    restore: Restore,
) -> StreamableHttpServerConfig {
    let Doorway { hosts, origins } = allowed(options, address);
    let mut config = StreamableHttpServerConfig::default()
        .with_sse_keep_alive(Some(options.sse_keep_alive))
        .with_sse_retry(Some(super::sessions::RESUME_AFTER))
        .with_cancellation_token(ended)
        .with_max_request_body_bytes(options.limits.max_body_bytes)
        .with_allowed_origins(origins)
        .enforce_origin_validation();
    config.session_store = Some(Arc::new(restore));
    match hosts.iter().any(|h| h == "*") {
        true => config.disable_allowed_hosts(),
        false => config.with_allowed_hosts(hosts),
    }
}

fn host_of(ip: IpAddr) -> String {
    ip.to_string()
}
