//! The `auth` key of a server entry: `"oauth"`, `"none"`, or an object.
//!
//! ```json
//! "auth": "oauth"
//! "auth": { "type": "oauth", "clientId": "abc", "clientSecretEnv": "ABC_SECRET",
//!           "scopes": ["read"], "callbackPort": 8976, "grant": "client_credentials",
//!           "clientMetadataUrl": "https://example.com/client.json" }
//! "auth": { "type": "bearer", "env": "MY_TOKEN" }
//! "auth": { "CLIENT_ID": "${env:LINEAR_CLIENT_ID}", "scopes": ["read"] }   // Cursor's shape
//! ```
//!
//! Secrets are never written here: a bearer token and a client secret are named by the
//! environment variable that holds them.

use serde::Deserialize;

use crate::{
    auth::{Auth, Grant, OAuthConfig},
    config::ConfigError};

/// `auth` as written.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum AuthJson {
    /// `"none"`, `"oauth"` (`"bearer"` needs an `env`, so it is an object).
    Kind(String),
    /// The object form.
    Object(AuthObject),
    /// Cursor's static OAuth client: `CLIENT_ID`, `CLIENT_SECRET`, `scopes`.
    Cursor(CursorAuth),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CursorAuth {
    #[serde(rename = "CLIENT_ID")]
    client_id: Option<String>,
    #[serde(rename = "CLIENT_SECRET")]
    client_secret: Option<String>,
    scopes: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct AuthObject {
    #[serde(rename = "type")]
    kind: String,
    env: Option<String>,
    client_id: Option<String>,
    client_secret_env: Option<String>,
    scopes: Option<Vec<String>>,
    callback_port: Option<u16>,
    grant: Option<String>,
    client_metadata_url: Option<String>,
}

impl AuthJson {
    /// The strings that take variables (client ids; Cursor's secret, to be refused as such).
    pub(super) fn strings(&mut self) -> Vec<(&'static str, &mut String)> {
        let mut out = Vec::new();
        match self {
            AuthJson::Kind(_) => {}
            AuthJson::Object(o) => {
                if let Some(id) = &mut o.client_id {
                    out.push(("auth.clientId", id));
                }
            }
            AuthJson::Cursor(c) => {
                if let Some(id) = &mut c.client_id {
                    out.push(("auth.CLIENT_ID", id));
                }
                if let Some(secret) = &mut c.client_secret {
                    out.push(("auth.CLIENT_SECRET", secret));
                }
            }
        }
        out
    }

    /// The [`Auth`] this says; errors name the key under `auth`.
    pub(super) fn into_auth(self) -> Result<Auth, ConfigError> {
        let object = match self {
            AuthJson::Cursor(cursor) => return cursor.into_auth(),
            AuthJson::Kind(kind) => match kind.as_str() {
                "none" => return Ok(Auth::None),
                "oauth" => return Ok(Auth::oauth()),
                "bearer" => {
                    return Err(ConfigError::new(
                        "auth",
                        "bearer needs the variable holding the token: {\"type\": \"bearer\", \"env\": \"MY_TOKEN\"}",
                    ));
                }
                other => {
                    return Err(ConfigError::new(
                        "auth",
                        format!("unknown auth `{other}`; expected none, oauth or bearer"),
                    ));
                }
            },
            AuthJson::Object(object) => object,
        };
        let oauth_only = [
            ("clientId", object.client_id.is_some()),
            ("clientSecretEnv", object.client_secret_env.is_some()),
            ("scopes", object.scopes.is_some()),
            ("callbackPort", object.callback_port.is_some()),
            ("grant", object.grant.is_some()),
            ("clientMetadataUrl", object.client_metadata_url.is_some()),
        ];
        match object.kind.as_str() {
            "none" | "bearer" => {
                if let Some((key, _)) = oauth_only.iter().find(|(_, set)| *set) {
                    return Err(ConfigError::new(
                        format!("auth.{key}"),
                        "applies only to `\"type\": \"oauth\"`",
                    ));
                }
                match (object.kind.as_str(), object.env) {
                    ("none", None) => Ok(Auth::None),
                    ("bearer", Some(env)) if !env.is_empty() => Ok(Auth::Bearer { env }),
                    ("bearer", _) => Err(ConfigError::new(
                        "auth.env",
                        "bearer needs the name of the variable holding the token",
                    )),
                    _ => Err(ConfigError::new("auth.env", "applies only to bearer")),
                }
            }
            "oauth" => {
                if object.env.is_some() {
                    return Err(ConfigError::new("auth.env", "applies only to bearer"));
                }
                let grant = match object.grant.as_deref() {
                    None | Some("authorization_code") => Grant::AuthorizationCode,
                    Some("client_credentials") => Grant::ClientCredentials,
                    Some(other) => {
                        return Err(ConfigError::new(
                            "auth.grant",
                            format!(
                                "unknown grant `{other}`; expected authorization_code or client_credentials"
                            ),
                        ));
                    }
                };
                let mut config = OAuthConfig::default().grant(grant);
                config.client_id = object.client_id;
                config.client_secret_env = object.client_secret_env;
                config.scopes = object.scopes.unwrap_or_default();
                config.callback_port = object.callback_port.unwrap_or(0);
                config.client_metadata_url = object.client_metadata_url;
                Ok(Auth::OAuth(config))
            }
            other => Err(ConfigError::new(
                "auth.type",
                format!("unknown auth `{other}`; expected none, oauth or bearer"),
            )),
        }
    }
}

impl CursorAuth {
    /// OAuth with Cursor's client id and scopes. A client secret written in the file is refused:
    /// secrets come from the environment here.
    fn into_auth(self) -> Result<Auth, ConfigError> {
        if self.client_secret.is_some_and(|s| !s.is_empty()) {
            return Err(ConfigError::new(
                "auth.CLIENT_SECRET",
                "mcp-resilient reads a client secret from the environment only: write \
                 {\"type\": \"oauth\", \"clientId\": \"…\", \"clientSecretEnv\": \"VAR\"}",
            ));
        }
        let mut config = OAuthConfig::default().scopes(self.scopes.unwrap_or_default());
        config.client_id = self.client_id.filter(|id| !id.is_empty());
        Ok(Auth::OAuth(config))
    }
}
