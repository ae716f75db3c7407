//! The DNS-rebinding checks for the gateway's own pages (`/status` and what it reads): the
//! same allowed `Host`s and `Origin`s rmcp's service is given for `/mcp`
//! (`gateway/src/http/serve.rs`, `allowed`), read the way rmcp reads them: a host with or
//! without a port, `*` for any host; an origin as scheme, host and port, `:*` for any port,
//! an origin without a port for any port; a request without `Origin` (not a browser's
//! cross-site request) passes.

use axum::http::{HeaderMap, Uri, header, uri::Authority};

/// The allowed hosts and origins.
#[derive(Debug, Clone)]
pub(in crate::http) struct Doorway {
    pub(in crate::http) hosts: Vec<String>,
    pub(in crate::http) origins: Vec<String>,
}

impl Doorway {
    /// Whether a request with these headers may come in: `Err` names the header refused.
    pub(in crate::http) fn check(&self, headers: &HeaderMap) -> Result<(), &'static str> {
        if !self.hosts.iter().any(|h| h == "*") {
            let host = (headers.get(header::HOST))
                .and_then(|v| v.to_str().ok())
                .and_then(|v| Authority::try_from(v).ok())
                .ok_or("Host")?;
            let (name, port) = (normal(host.host()), host.port_u16());
            // As rmcp reads an entry: an authority, else a bare name (`::1`) with any port.
            let allowed = self
                .hosts
                .iter()
                .map(|h| match Authority::try_from(h.trim()) {
                    Ok(a) => (normal(a.host()), a.port_u16()),
                    Err(_) => (normal(h.trim()), None),
                });
            if !allowed
                .into_iter()
                .any(|(a, a_port)| a == name && a_port.is_none_or(|p| port == Some(p)))
            {
                return Err("Host");
            }
        }
        let Some(origin) = headers.get(header::ORIGIN) else {
            return Ok(());
        };
        let origin = origin.to_str().ok().and_then(parse).ok_or("Origin")?;
        match self.origins.iter().any(|allowed| matches(allowed, &origin)) {
            true => Ok(()),
            false => Err("Origin"),
        }
    }
}

fn normal(host: &str) -> String {
    host.trim_matches(['[', ']']).to_ascii_lowercase()
}

/// An origin as `(scheme, host, port)`.
fn parse(value: &str) -> Option<(String, String, Option<u16>)> {
    let uri = Uri::try_from(value.trim()).ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let authority = uri.authority()?;
    Some((scheme, normal(authority.host()), authority.port_u16()))
}

fn matches(allowed: &str, (scheme, host, port): &(String, String, Option<u16>)) -> bool {
    let (base, any_port) = match allowed.trim().strip_suffix(":*") {
        Some(base) => (base, true),
        None => (allowed.trim(), false),
    };
    let Some((a_scheme, a_host, a_port)) = parse(base) else {
        return false;
    };
    let default = |scheme: &str| match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    };
    a_scheme == *scheme
        && a_host == *host
        && (any_port || a_port.is_none_or(|p| port.or_else(|| default(scheme)) == Some(p)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(host: &str, origin: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_str(host).unwrap());
        if let Some(origin) = origin {
            headers.insert(header::ORIGIN, HeaderValue::from_str(origin).unwrap());
        }
        headers
    }

    fn loopback() -> Doorway {
        Doorway {
            hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            origins: vec!["http://localhost:*".into(), "http://127.0.0.1:*".into()],
        }
    }

    #[test]
    fn loopback_names_and_origins_pass_and_others_are_refused() {
        let door = loopback();
        assert_eq!(door.check(&headers("127.0.0.1:8808", None)), Ok(()));
        assert_eq!(door.check(&headers("[::1]:8808", None)), Ok(()));
        let same = headers("localhost:8808", Some("http://localhost:8808"));
        assert_eq!(door.check(&same), Ok(()));
        let rebound = headers("evil.example:8808", None);
        assert_eq!(door.check(&rebound), Err("Host"));
        let cross = headers("127.0.0.1:8808", Some("http://evil.example"));
        assert_eq!(door.check(&cross), Err("Origin"));
        let https = headers("127.0.0.1:8808", Some("https://127.0.0.1:8808"));
        assert_eq!(door.check(&https), Err("Origin"));
    }

    #[test]
    fn a_named_port_is_the_only_one_allowed() {
        let door = Doorway {
            hosts: vec!["gw.example:443".into()],
            origins: vec![
                "https://app.example".into(),
                "https://ui.example:8443".into(),
            ],
        };
        assert_eq!(door.check(&headers("gw.example:443", None)), Ok(()));
        assert_eq!(door.check(&headers("gw.example:80", None)), Err("Host"));
        let named = headers("gw.example:443", Some("https://ui.example:8443"));
        assert_eq!(door.check(&named), Ok(()));
        let other = headers("gw.example:443", Some("https://ui.example"));
        assert_eq!(door.check(&other), Err("Origin"));
    }
}
