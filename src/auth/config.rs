//! How a remote server is authorized: [`Auth`] and [`OAuthConfig`].

use std::{fmt, sync::Arc};

use super::{Prompt, TokenStore};

/// How requests to a remote server are authorized.
///
/// Secrets are never part of a configuration: a bearer token and a client secret are read from
/// environment variables when a connection is made, so a config file can be committed.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub enum Auth {
    /// No `Authorization` header (beyond any configured in `headers`).
    #[default]
    None,
    /// `Authorization: Bearer <token>`, the token read from the environment variable `env` at each
    /// connection attempt.
    Bearer {
        /// The variable holding the token.
        env: String,
    },
    /// MCP authorization: OAuth 2.1 with PKCE, discovery, registration, refresh and step-up.
    OAuth(OAuthConfig),
}

impl Auth {
    /// A bearer token read from `env`.
    pub fn bearer_env(env: impl Into<String>) -> Self {
        Auth::Bearer { env: env.into() }
    }

    /// OAuth with every [`OAuthConfig`] field at its default.
    pub fn oauth() -> Self {
        Auth::OAuth(OAuthConfig::default())
    }

    /// `none`, `bearer` or `oauth`.
    pub fn kind(&self) -> &'static str {
        match self {
            Auth::None => "none",
            Auth::Bearer { .. } => "bearer",
            Auth::OAuth(_) => "oauth",
        }
    }
}

/// Which OAuth grant obtains tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Grant {
    /// Authorization code with PKCE: a person approves in a browser (`mcp-resilient login`),
    /// tokens are stored and refreshed.
    #[default]
    AuthorizationCode,
    /// Client credentials (machine to machine): `client_id` and the secret in
    /// `client_secret_env` obtain a token directly, again whenever it expires.
    ClientCredentials,
}

/// OAuth settings of one server. Every field is optional: with none set, the client registers
/// itself dynamically (RFC 7591) and asks for the scopes the server suggests.
#[derive(Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct OAuthConfig {
    /// A client id registered with the authorization server beforehand.
    ///
    /// # Default
    /// none: a client metadata document URL if set, else dynamic registration
    pub(crate) client_id: Option<String>,
    /// The environment variable holding that client's secret (confidential clients).
    ///
    /// # Default
    /// none (a public client)
    pub(crate) client_secret_env: Option<String>,
    /// That client's secret, handed over by a host that keeps it elsewhere (a keychain, a
    /// vault); wins over `client_secret_env`. Rust only: a configuration file names a variable.
    ///
    /// # Default
    /// none
    pub(in crate::auth) client_secret: Option<ClientSecret>,
    /// The scopes to ask for.
    ///
    /// # Default
    /// empty: the scopes the server's `WWW-Authenticate` challenge or metadata suggest
    pub(crate) scopes: Vec<String>,
    /// The loopback port of the login redirect (`http://127.0.0.1:<port>/callback`). Pre-registered
    /// clients usually need a fixed one.
    ///
    /// # Default
    /// 0: any free port
    pub(crate) callback_port: u16,
    /// The grant that obtains tokens.
    ///
    /// # Default
    /// [`Grant::AuthorizationCode`]
    pub(crate) grant: Grant,
    /// An HTTPS URL of this client's metadata document (CIMD), used as its client id where the
    /// authorization server supports it.
    ///
    /// # Default
    /// none
    pub(crate) client_metadata_url: Option<String>,
    /// Where tokens are kept.
    ///
    /// # Default
    /// none: [`FileTokenStore::for_server`](super::FileTokenStore::for_server) of the server's name
    pub(in crate::auth) store: Option<Arc<dyn TokenStore>>,
    /// Who takes a person through an authorization the supervisor finds it needs (no tokens
    /// stored, a rejected refresh token, a step-up to more scopes) while it runs.
    ///
    /// # Default
    /// none: the server becomes `failed` with cause `unauthorized`, and the message says to run
    /// `mcp-resilient login <name>`
    pub(in crate::auth) prompt: Option<Arc<dyn Prompt>>,
}

impl OAuthConfig {
    /// Sets where tokens are kept.
    ///
    /// Default: none; a [`FileTokenStore::for_server`](super::FileTokenStore::for_server) of
    /// the server's name.
    pub fn store(mut self, store: impl TokenStore + 'static) -> Self {
        self.store = Some(Arc::new(store));
        self
    }

    /// Sets who takes a person through an authorization the supervisor finds it needs while it
    /// runs (no tokens stored, a rejected refresh token, a step-up to more scopes).
    ///
    /// Default: none; the server becomes `failed` with cause `unauthorized`, and the message
    /// says to run `mcp-resilient login <name>`.
    pub fn prompt(mut self, prompt: impl Prompt + 'static) -> Self {
        self.prompt = Some(Arc::new(prompt));
        self
    }

    /// Sets the scopes to ask for.
    ///
    /// Default: none; the scopes the server's `WWW-Authenticate` challenge or metadata suggest.
    pub fn scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, scopes: I) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets a client id registered with the authorization server beforehand.
    ///
    /// Default: none; a client metadata document URL if set, else dynamic registration.
    pub fn client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// Sets the environment variable holding that client's secret (confidential clients).
    ///
    /// Default: none (a public client).
    pub fn client_secret_env(mut self, env: impl Into<String>) -> Self {
        self.client_secret_env = Some(env.into());
        self
    }

    /// Sets the grant that obtains tokens.
    ///
    /// Default: [`Grant::AuthorizationCode`].
    pub fn grant(mut self, grant: Grant) -> Self {
        self.grant = grant;
        self
    }

    /// Sets that client's secret, handed over by a host that keeps it elsewhere (a keychain, a
    /// vault); it wins over [`client_secret_env`](Self::client_secret_env). Rust only: a
    /// configuration file names a variable.
    ///
    /// Default: none.
    pub fn client_secret(mut self, secret: ClientSecret) -> Self {
        self.client_secret = Some(secret);
        self
    }

    /// Sets the loopback port of the login redirect (`http://127.0.0.1:<port>/callback`).
    /// Pre-registered clients usually need a fixed one.
    ///
    /// Default: 0, any free port.
    pub fn callback_port(mut self, port: u16) -> Self {
        self.callback_port = port;
        self
    }

    /// Sets an HTTPS URL of this client's metadata document (CIMD), used as its client id where
    /// the authorization server supports it.
    ///
    /// Default: none.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }
}

/// A client secret; its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientSecret(String);

impl ClientSecret {
    /// Wraps `secret`.
    pub fn new(secret: impl Into<String>) -> Self {
        ClientSecret(secret.into())
    }

    /// The secret itself, for the token request.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ClientSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ClientSecret(<redacted>)")
    }
}

impl fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("client_id", &self.client_id)
            .field("client_secret_env", &self.client_secret_env)
            .field("client_secret", &self.client_secret)
            .field("scopes", &self.scopes)
            .field("callback_port", &self.callback_port)
            .field("grant", &self.grant)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("store", &self.store.as_ref().map(|s| s.location()))
            .field("prompt", &self.prompt.is_some())
            .finish()
    }
}

impl PartialEq for dyn TokenStore {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::addr_eq(self, other)
    }
}

impl PartialEq for dyn Prompt {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::addr_eq(self, other)
    }
}
