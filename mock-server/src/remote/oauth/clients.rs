//! OAuth clients: pre-registered ones ([`OAuthOptions::clients`](super::OAuthOptions)) and
//! those registered through `POST /register` (RFC 7591), their redirect URIs and their
//! credentials.

use axum::http::Uri;
use serde::{Deserialize, Serialize};

use super::secret::random_token;

/// The token endpoint authentication methods the server accepts (and advertises).
pub(super) const AUTH_METHODS: [&str; 3] = ["none", "client_secret_basic", "client_secret_post"];

/// The grant types the server accepts (and advertises).
pub(super) const GRANT_TYPES: [&str; 3] =
    ["authorization_code", "refresh_token", "client_credentials"];

/// One known client.
pub(super) struct Client {
    /// `None`: a public client, which authenticates with its id alone.
    secret: Option<String>,
    /// `None`: any loopback redirect URI (pre-registered clients); otherwise exactly these.
    redirect_uris: Option<Vec<String>>,
}

impl Client {
    /// A client from [`OAuthOptions::clients`](super::OAuthOptions).
    pub(super) fn preregistered(secret: Option<String>) -> Self {
        Self {
            secret,
            redirect_uris: None,
        }
    }

    /// Whether `/authorize` may send this client's code to `uri`.
    pub(super) fn allows_redirect(&self, uri: &str) -> bool {
        loopback(uri)
            && self
                .redirect_uris
                .as_ref()
                .is_none_or(|uris| uris.iter().any(|u| u == uri))
    }

    /// Whether the client has a secret (and so may use `client_credentials`).
    pub(super) fn is_confidential(&self) -> bool {
        self.secret.is_some()
    }

    /// Whether `secret` authenticates this client (a public client needs none).
    pub(super) fn accepts(&self, secret: Option<&str>) -> bool {
        match &self.secret {
            None => true,
            Some(expected) => secret == Some(expected.as_str()),
        }
    }
}

/// `http://127.0.0.1[:port]/…` or `http://localhost[:port]/…`, without a fragment.
pub(super) fn loopback(uri: &str) -> bool {
    let Ok(parsed) = uri.parse::<Uri>() else {
        return false;
    };
    !uri.contains('#')
        && parsed.scheme_str() == Some("http")
        && matches!(parsed.host(), Some("127.0.0.1" | "localhost"))
}

/// Who a `/token` request says it is: from the `Authorization: Basic` header
/// (`client_secret_basic`) or the form's `client_id` and `client_secret`.
pub(super) struct ClientAuth {
    pub(super) id: String,
    pub(super) secret: Option<String>,
}

/// The body of `POST /register`; fields not listed are ignored.
#[derive(Debug, Deserialize)]
pub(super) struct RegistrationRequest {
    #[serde(default)]
    redirect_uris: Vec<String>,
    token_endpoint_auth_method: Option<String>,
    grant_types: Option<Vec<String>>,
    client_name: Option<String>,
    scope: Option<String>,
}

/// The answer to a successful registration (RFC 7591 §3.2.1).
#[derive(Debug, Serialize)]
pub(super) struct Registration {
    pub(super) client_id: String,
    client_id_issued_at: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    client_secret: Option<String>,
    /// 0 (never) when there is a secret.
    #[serde(skip_serializing_if = "Option::is_none")]
    client_secret_expires_at: Option<u64>,
    token_endpoint_auth_method: String,
    redirect_uris: Vec<String>,
    grant_types: Vec<String>,
    response_types: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    client_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    scope: Option<String>,
}

/// A refused registration (RFC 7591 §3.2.2): `error` is `invalid_redirect_uri` or
/// `invalid_client_metadata`.
#[derive(Debug, Serialize)]
pub(super) struct RegistrationError {
    pub(super) error: &'static str,
    pub(super) error_description: String,
}

fn metadata_error(description: String) -> RegistrationError {
    RegistrationError {
        error: "invalid_client_metadata",
        error_description: description,
    }
}

impl RegistrationRequest {
    /// Checks the request and makes the client with a new random id (and secret, if its
    /// authentication method needs one).
    pub(super) fn register(
        self,
        now_secs: u64,
    ) -> Result<(Client, Registration), RegistrationError> {
        let method = self
            .token_endpoint_auth_method
            .unwrap_or_else(|| "none".to_owned());
        if !AUTH_METHODS.contains(&method.as_str()) {
            return Err(metadata_error(format!(
                "token_endpoint_auth_method {method:?} is not supported"
            )));
        }
        let grant_types = self
            .grant_types
            .unwrap_or_else(|| vec!["authorization_code".to_owned(), "refresh_token".to_owned()]);
        if let Some(unknown) = grant_types
            .iter()
            .find(|g| !GRANT_TYPES.contains(&g.as_str()))
        {
            return Err(metadata_error(format!(
                "grant type {unknown:?} is not supported"
            )));
        }
        let public = method == "none";
        if public && grant_types.iter().any(|g| g == "client_credentials") {
            return Err(metadata_error(
                "client_credentials needs a confidential client".to_owned(),
            ));
        }
        let needs_redirect = grant_types.iter().any(|g| g == "authorization_code");
        let bad_uri = self.redirect_uris.iter().find(|uri| !loopback(uri));
        if bad_uri.is_some() || (needs_redirect && self.redirect_uris.is_empty()) {
            return Err(RegistrationError {
                error: "invalid_redirect_uri",
                error_description: match bad_uri {
                    Some(uri) => format!("{uri:?} is not an http loopback URI"),
                    None => "authorization_code needs redirect_uris".to_owned(),
                },
            });
        }
        let secret = (!public).then(random_token);
        let client = Client {
            secret: secret.clone(),
            redirect_uris: Some(self.redirect_uris.clone()),
        };
        let registration = Registration {
            client_id: random_token(),
            client_id_issued_at: now_secs,
            client_secret_expires_at: secret.as_ref().map(|_| 0),
            client_secret: secret,
            token_endpoint_auth_method: method,
            redirect_uris: self.redirect_uris,
            grant_types,
            response_types: vec!["code".to_owned()],
            client_name: self.client_name,
            scope: self.scope,
        };
        Ok((client, registration))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_http_loopback_redirects_are_allowed() {
        for good in [
            "http://127.0.0.1:8080/callback",
            "http://localhost/cb?x=1",
            "http://127.0.0.1/",
        ] {
            assert!(loopback(good), "{good}");
        }
        for bad in [
            "https://127.0.0.1/cb",
            "http://example.com/cb",
            "http://localhost.example.com/cb",
            "http://127.0.0.1@example.com/cb",
            "http://127.0.0.1/cb#frag",
            "/relative",
            "",
        ] {
            assert!(!loopback(bad), "{bad}");
        }
    }

    #[test]
    fn registered_clients_need_an_exact_redirect_and_their_secret() {
        let request = RegistrationRequest {
            redirect_uris: vec!["http://127.0.0.1:9/cb".to_owned()],
            token_endpoint_auth_method: Some("client_secret_post".to_owned()),
            grant_types: None,
            client_name: Some("t".to_owned()),
            scope: None,
        };
        let (client, registration) = request.register(0).expect("valid");
        assert!(client.allows_redirect("http://127.0.0.1:9/cb"));
        assert!(!client.allows_redirect("http://127.0.0.1:10/cb"));
        assert!(client.is_confidential());
        assert!(!client.accepts(None));
        assert!(client.accepts(registration.client_secret.as_deref()));
        let public = Client::preregistered(None);
        assert!(public.allows_redirect("http://localhost:1234/anything"));
        assert!(public.accepts(None));
    }
}
