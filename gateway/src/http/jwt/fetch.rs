//! The issuer's documents over HTTP: its metadata (where the JWKS is) and the JWKS itself, each
//! read through a size bound and within the fetch timeout, never through a redirect.

use std::time::Duration;

use serde::Deserialize;
use url::Url;

use super::JwtConfigError;

/// The largest metadata document read.
const MAX_METADATA: usize = 64 * 1024;
/// The largest JWKS read.
pub(super) const MAX_JWKS: usize = 64 * 1024;

/// Why a fetch gave nothing (logged; the keys there were stay).
#[derive(Debug, thiserror::Error)]
pub(super) enum FetchError {
    #[error("GET {url} answered {status}")]
    Status { url: String, status: u16 },
    #[error("GET {url} failed")]
    Http {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("GET {url} took longer than {0:?}", .limit)]
    Timeout { url: String, limit: Duration },
    #[error("{url} is over {max} bytes")]
    TooLarge { url: String, max: usize },
    #[error("{url} is not the document expected")]
    Json {
        url: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("no metadata of issuer {0} names it as issuer with a jwks_uri")]
    NoMetadata(String),
}

/// `url` parsed, if it is `https`, or `http` to a loopback host.
pub(super) fn web_url(what: &'static str, url: &str) -> Result<Url, JwtConfigError> {
    let refused = || JwtConfigError::Url {
        what,
        url: url.to_owned(),
    };
    let parsed = Url::parse(url).map_err(|_| refused())?;
    let loopback = match parsed.host() {
        Some(url::Host::Domain(name)) => name == "localhost",
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => return Err(refused()),
    };
    match parsed.scheme() {
        "https" => Ok(parsed),
        "http" if loopback => Ok(parsed),
        _ => Err(refused()),
    }
}

/// The HTTP client of the fetches: no redirect followed (a JWKS is where the issuer says).
pub(super) fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap_or_default()
}

/// GETs `url` as JSON of type `T`, reading at most `max` bytes, within `limit`.
pub(super) async fn get_json<T: serde::de::DeserializeOwned>(
    http: &reqwest::Client,
    url: &Url,
    max: usize,
    limit: Duration,
) -> Result<T, FetchError> {
    let text = url.to_string();
    let read = async {
        let http_error = |source| FetchError::Http {
            url: text.clone(),
            source,
        };
        let mut response = http
            .get(url.clone())
            .header("accept", "application/json")
            .send()
            .await
            .map_err(http_error)?;
        if !response.status().is_success() {
            return Err(FetchError::Status {
                url: text.clone(),
                status: response.status().as_u16(),
            });
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(http_error)? {
            if body.len() + chunk.len() > max {
                return Err(FetchError::TooLarge {
                    url: text.clone(),
                    max,
                });
            }
            body.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&body).map_err(|source| FetchError::Json {
            url: text.clone(),
            source,
        })
    };
    tokio::time::timeout(limit, read).await.unwrap_or_else(|_| {
        Err(FetchError::Timeout {
            url: text.clone(),
            limit,
        })
    })
}

/// What the metadata says of the keys.
#[derive(Deserialize)]
struct Metadata {
    issuer: Option<String>,
    jwks_uri: Option<String>,
}

/// The JWKS's address, from the issuer's metadata: RFC 8414's well-known URL (the suffix
/// between the host and the issuer's path), then OpenID Connect's (appended to the issuer).
pub(super) async fn discover(
    http: &reqwest::Client,
    issuer: &Url,
    limit: Duration,
) -> Result<Url, FetchError> {
    let path = issuer.path().trim_end_matches('/');
    let mut oauth = issuer.clone();
    oauth.set_path(&format!("/.well-known/oauth-authorization-server{path}"));
    let mut openid = issuer.clone();
    openid.set_path(&format!("{path}/.well-known/openid-configuration"));
    let wanted = issuer.as_str().trim_end_matches('/');
    let mut last = None;
    for url in [oauth, openid] {
        match get_json::<Metadata>(http, &url, MAX_METADATA, limit).await {
            Ok(Metadata {
                issuer: Some(named),
                jwks_uri: Some(jwks),
            }) if named.trim_end_matches('/') == wanted => {
                // The JWKS must be as safe to reach as the issuer is.
                if let Ok(jwks) = web_url("jwks_uri", &jwks) {
                    return Ok(jwks);
                }
            }
            Ok(_) => {}
            Err(error) => last = Some(error),
        }
    }
    Err(last.unwrap_or_else(|| FetchError::NoMetadata(issuer.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_or_loopback_http_urls_are_taken() {
        assert!(web_url("issuer", "https://id.example.com/realms/a").is_ok());
        assert!(web_url("issuer", "http://127.0.0.1:9000").is_ok());
        assert!(web_url("issuer", "http://localhost:9000").is_ok());
        assert!(web_url("issuer", "http://[::1]:9000").is_ok());
        assert!(web_url("issuer", "http://id.example.com").is_err());
        assert!(web_url("issuer", "file:///etc/passwd").is_err());
        assert!(web_url("issuer", "not a url").is_err());
    }
}
