//! DNS rebinding, as rmcp's front checks it, with the same settings (`serve.rs`'s
//! `rmcp_config`): the `Host` (or HTTP/2 `:authority`) must be an allowed host (any port unless
//! the entry names one; an empty list allows every host), and an `Origin`, when there is one, an
//! allowed origin (`scheme://host`, `:port` exact or `:*`, a default port when the origin omits
//! it; `null` only if listed). Refusals: `400` for a malformed header, `403` for a disallowed one.

use axum::{
    http::{HeaderMap, StatusCode, Uri, header, uri::Authority},
    response::Response,
};
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;

use crate::http::refusal::refuse;

/// The allowed hosts and origins.
pub(super) struct Checks {
    hosts: Vec<(String, Option<u16>)>,
    origins: Vec<Allowed>,
}

/// An allowed origin.
enum Allowed {
    Null,
    Tuple {
        scheme: String,
        host: String,
        /// `None` for any port (`:*`, or none named: rmcp's reading, for now).
        port: Option<u16>,
    },
}

impl Checks {
    pub(super) fn of(config: &StreamableHttpServerConfig) -> Self {
        let hosts = (config.allowed_hosts.iter())
            .filter_map(|allowed| {
                let allowed = allowed.trim();
                if allowed.is_empty() {
                    return None;
                }
                Some(match Authority::try_from(allowed) {
                    Ok(authority) => (normal(authority.host()), authority.port_u16()),
                    Err(_) => (normal(allowed), None),
                })
            })
            .collect();
        let origins = (config.allowed_origins.iter())
            .filter_map(|allowed| allowed_origin(allowed))
            .collect();
        Self { hosts, origins }
    }

    /// Whether a request with `headers` (to `uri`) may come in; else the refusal.
    pub(super) fn allow(&self, uri: &Uri, headers: &HeaderMap) -> Result<(), Box<Response>> {
        let authority = match headers.get(header::HOST) {
            Some(host) => (host.to_str().ok()).and_then(|host| Authority::try_from(host).ok()),
            None => uri.authority().cloned(),
        };
        let Some(authority) = authority else {
            return Err(refused(
                StatusCode::BAD_REQUEST,
                "the Host header is missing or malformed",
            ));
        };
        let (host, port) = (normal(authority.host()), authority.port_u16());
        let host_allowed = self.hosts.is_empty()
            || (self.hosts.iter()).any(|(h, p)| *h == host && p.is_none_or(|p| Some(p) == port));
        if !host_allowed {
            tracing::warn!(%host, "a request naming a host not allowed was refused (DNS rebinding?)");
            return Err(refused(
                StatusCode::FORBIDDEN,
                "the Host header is not allowed",
            ));
        }
        let Some(origin) = headers.get(header::ORIGIN) else {
            return Ok(());
        };
        let origin = origin.to_str().ok().map(str::trim).unwrap_or_default();
        let allowed = match origin.eq_ignore_ascii_case("null") {
            true => self.origins.iter().any(|a| matches!(a, Allowed::Null)),
            false => {
                let Some((scheme, host, port)) = origin_tuple(origin) else {
                    return Err(refused(
                        StatusCode::FORBIDDEN,
                        "the Origin header is malformed",
                    ));
                };
                let port = port.or_else(|| default_port(&scheme));
                self.origins.iter().any(|allowed| match allowed {
                    Allowed::Null => false,
                    Allowed::Tuple {
                        scheme: s,
                        host: h,
                        port: p,
                    } => *s == scheme && *h == host && p.is_none_or(|p| Some(p) == port),
                })
            }
        };
        if !allowed {
            tracing::warn!(origin, "a request from an origin not allowed was refused");
            return Err(refused(
                StatusCode::FORBIDDEN,
                "the Origin header is not allowed",
            ));
        }
        Ok(())
    }
}

fn refused(status: StatusCode, message: &str) -> Box<Response> {
    Box::new(refuse(status, message))
}

fn normal(host: &str) -> String {
    host.trim_matches(['[', ']']).to_ascii_lowercase()
}

/// `scheme://host[:port]`.
fn origin_tuple(origin: &str) -> Option<(String, String, Option<u16>)> {
    let uri = Uri::try_from(origin).ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let authority = uri.authority()?;
    Some((scheme, normal(authority.host()), authority.port_u16()))
}

fn allowed_origin(allowed: &str) -> Option<Allowed> {
    let allowed = allowed.trim();
    if allowed.eq_ignore_ascii_case("null") {
        return Some(Allowed::Null);
    }
    let (base, any) = match allowed.strip_suffix(":*") {
        Some(base) => (base, true),
        None => (allowed, false),
    };
    let (scheme, host, port) = origin_tuple(base)?;
    if any && port.is_some() {
        return None;
    }
    Some(Allowed::Tuple { scheme, host, port })
}

/// The port a scheme implies (RFC 6454 §4).
fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn checks(hosts: &[&str], origins: &[&str]) -> Checks {
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(hosts.iter().map(|h| h.to_string()))
            .with_allowed_origins(origins.iter().map(|o| o.to_string()));
        Checks::of(&config)
    }

    fn status(checks: &Checks, host: Option<&str>, origin: Option<&str>) -> Option<StatusCode> {
        let mut headers = HeaderMap::new();
        if let Some(host) = host {
            headers.insert(header::HOST, HeaderValue::from_str(host).expect("a header"));
        }
        if let Some(origin) = origin {
            headers.insert(
                header::ORIGIN,
                HeaderValue::from_str(origin).expect("a header"),
            );
        }
        let uri = Uri::from_static("/mcp");
        checks
            .allow(&uri, &headers)
            .err()
            .map(|refused| refused.status())
    }

    #[test]
    fn hosts_are_allowed_by_name_and_by_port_when_the_entry_names_one() {
        let checks = checks(&["localhost", "127.0.0.1:8808", "::1"], &[]);
        assert_eq!(status(&checks, Some("localhost:1234"), None), None);
        assert_eq!(status(&checks, Some("LOCALHOST"), None), None);
        assert_eq!(status(&checks, Some("127.0.0.1:8808"), None), None);
        assert_eq!(status(&checks, Some("[::1]:9"), None), None);
        let forbidden = Some(StatusCode::FORBIDDEN);
        assert_eq!(status(&checks, Some("127.0.0.1:8809"), None), forbidden);
        assert_eq!(status(&checks, Some("evil.example"), None), forbidden);
        assert_eq!(status(&checks, None, None), Some(StatusCode::BAD_REQUEST));
        assert_eq!(
            status(&checks, Some("a b"), None),
            Some(StatusCode::BAD_REQUEST)
        );
    }

    #[test]
    fn origins_are_allowed_by_scheme_host_and_port() {
        let checks = checks(
            &["localhost"],
            &["http://localhost:*", "https://app.example", "null"],
        );
        let host = Some("localhost");
        assert_eq!(
            status(&checks, host, None),
            None,
            "no Origin: not a browser"
        );
        assert_eq!(status(&checks, host, Some("http://localhost:3000")), None);
        assert_eq!(status(&checks, host, Some("https://app.example")), None);
        assert_eq!(status(&checks, host, Some("null")), None);
        let forbidden = Some(StatusCode::FORBIDDEN);
        assert_eq!(
            status(&checks, host, Some("https://localhost:3000")),
            forbidden
        );
        assert_eq!(
            status(&checks, host, Some("http://evil.example")),
            forbidden
        );
        assert_eq!(status(&checks, host, Some("not an origin")), forbidden);
        let strict = super::tests::checks(&["localhost"], &["https://app.example:8443"]);
        assert_eq!(
            status(&strict, host, Some("https://app.example")),
            forbidden
        );
        assert_eq!(status(&strict, host, Some("null")), forbidden);
    }
}
