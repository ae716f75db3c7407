//! A server's origin (`host:port`), as the reconnect pacing watches and budgets it.

use url::Url;

/// The `host:port` of `url` to watch; `None` when no watch can say anything about the server:
/// another scheme, or a request that goes through a configured HTTP proxy.
pub(crate) fn origin_of(url: &Url) -> Option<String> {
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    let host = url.host_str()?;
    let loopback = matches!(host, "localhost" | "127.0.0.1" | "[::1]");
    let proxied = ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"]
        .iter()
        .any(|name| {
            std::env::var_os(name).is_some() || std::env::var_os(name.to_lowercase()).is_some()
        });
    if proxied && !loopback {
        return None;
    }
    Some(format!("{host}:{}", url.port_or_known_default()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_origin_is_the_host_and_port_of_a_web_url() {
        let of = |u: &str| origin_of(&Url::parse(u).unwrap());
        assert_eq!(
            of("http://127.0.0.1:8000/mcp").as_deref(),
            Some("127.0.0.1:8000")
        );
        assert_eq!(of("http://localhost/mcp").as_deref(), Some("localhost:80"));
        assert_eq!(of("ftp://localhost/mcp"), None);
    }
}
