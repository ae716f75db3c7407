//! The authorization of one supervised server while it runs: the token each request carries,
//! and what to do when the server refuses it.
//!
//! The transports ask three things of an [`Authorizer`]: the token to send now
//! ([`Authorizer::token`]: refreshed shortly before it expires), a new token after a 401
//! ([`Authorizer::renew`]), and a token with more scopes after a 403 `insufficient_scope`
//! ([`Authorizer::step_up`]). The request is then sent once more: a refused request never ran.
//! None of this touches the session, so a refreshed token never costs a generation.
//!
//! # Invariants
//!
//! 1. Token values are never logged, formatted into errors, or kept anywhere but the store and
//!    the manager; the `Debug` of an authorizer shows its kind and server only.
//! 2. Renewals are serialised per server, and a renewal first looks at the store: when another
//!    request (or another process) already replaced the refused token, that token is used and
//!    nothing is refreshed again.
//! 3. A step-up is tried at most [`STEP_UPS`] times without a request getting through in
//!    between, so a server that keeps asking for scopes it never accepts cannot loop us.
//! 4. An authorization server that does not answer (network, 5xx, [`EXCHANGE_LIMIT`]) is a
//!    transient fault ([`Denied::transient`]), never a refusal: an unexpired token is still
//!    sent, the grant is kept, no login is asked for. Only an answer that says no (`invalid_grant`,
//!    no refresh token, a refused client) denies.

use std::{
    fmt,
    future::Future,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU32, Ordering},
    },
    time::Duration,
};

use oauth2::TokenResponse;
use rmcp::transport::auth::{AuthError, AuthorizationManager, WWWAuthenticateParams};
use url::Url;

use super::{
    Auth, FileTokenStore, Grant, OAuthConfig,
    flow::{self, Ask, Bound},
};

/// Most step-ups in a row without a request getting through (invariant 3).
pub(crate) const STEP_UPS: u32 = 2;

/// The most a refresh (or a client credentials exchange) may take, lock wait included.
const EXCHANGE_LIMIT: Duration = Duration::from_secs(30);

/// How long a running supervisor waits for a person to finish an authorization it started.
const PROMPT_WAIT: Duration = Duration::from_secs(300);

/// An answer that refused the request for its token, with the server's `WWW-Authenticate`.
pub(crate) enum Refusal {
    /// HTTP 401: the token is missing, expired or revoked.
    Unauthorized(String),
    /// HTTP 403 `insufficient_scope`: the token lacks a scope.
    InsufficientScope(String),
}

/// Why no token can be had. `detail` is safe to show (it never holds a secret).
#[derive(Debug, Clone)]
pub(crate) struct Denied {
    pub(crate) detail: String,
    /// The authorization server could not be reached or did not answer (a network failure, a
    /// 5xx, a timeout): nothing says the grant is gone, so this is a transient fault (the
    /// request never ran), not `unauthorized`, and no login is asked for.
    pub(crate) transient: bool,
}

/// Whether an rmcp auth error means "the authorization server did not answer", as opposed to
/// "it answered no". rmcp documents `TokenRefreshFailed` as the retryable refresh failure (a
/// definitive rejection is `TokenRefreshRejected`).
fn unanswered(error: &AuthError) -> bool {
    matches!(
        error,
        AuthError::TokenRefreshFailed(_)
            | AuthError::HttpError(_)
            | AuthError::DiscoveryRequestFailed { .. }
    )
}

/// What an [`unanswered`] error says, without rmcp's prefix where it repeats ours.
fn unanswered_detail(what: &str, error: &AuthError) -> String {
    let why = match error {
        AuthError::TokenRefreshFailed(why) => why.clone(),
        other => other.to_string(),
    };
    format!("the authorization server did not answer {what}: {why}")
}

/// The authorization of one server (see the module docs).
pub(crate) struct Authorizer {
    name: String,
    url: Url,
    method: Method,
    /// The last reason a token could not be had; read by the supervisor for its `failed` detail.
    last_denial: Mutex<Option<String>>,
    step_ups: AtomicU32,
}

enum Method {
    Bearer { env: String },
    OAuth(Box<OAuth>),
}

struct OAuth {
    config: OAuthConfig,
    /// The store, bound to the server's URL, with the refresh lock.
    bound: Bound,
    /// The manager holding the current client and tokens, with that client's id; built on first
    /// use (discovery), and again when the store holds another client's tokens (a new login).
    manager: tokio::sync::Mutex<Option<(Arc<AuthorizationManager>, String)>>,
    /// Serialises renewals and step-ups (invariant 2).
    renewing: tokio::sync::Mutex<()>,
}

impl fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.method {
            Method::Bearer { .. } => "bearer",
            Method::OAuth(_) => "oauth",
        };
        f.debug_struct("Authorizer")
            .field("server", &self.name)
            .field("kind", &kind)
            .finish_non_exhaustive()
    }
}

impl Authorizer {
    /// The authorizer `auth` asks for, or `None` for [`Auth::None`]. Fails only when the default
    /// file store has no directory to live in.
    pub(crate) fn new(name: &str, url: &Url, auth: &Auth) -> Result<Option<Arc<Self>>, String> {
        let method = match auth {
            Auth::None => return Ok(None),
            Auth::Bearer { env } => Method::Bearer { env: env.clone() },
            Auth::OAuth(config) => {
                let store = match &config.store {
                    Some(store) => store.clone(),
                    None => Arc::new(FileTokenStore::for_server(name).map_err(|e| e.to_string())?),
                };
                Method::OAuth(Box::new(OAuth {
                    config: config.clone(),
                    bound: Bound::new(store, url),
                    manager: tokio::sync::Mutex::new(None),
                    renewing: tokio::sync::Mutex::new(()),
                }))
            }
        };
        Ok(Some(Arc::new(Authorizer {
            name: name.to_owned(),
            url: url.clone(),
            method,
            last_denial: Mutex::new(None),
            step_ups: AtomicU32::new(0),
        })))
    }

    /// What to tell a user whose server refused us with `detail`: the last reason (unless
    /// `detail` already says it), and what to do about it.
    pub(crate) fn advice(&self, detail: &str) -> String {
        let last = self
            .last_denial
            .lock()
            .ok()
            .and_then(|l| l.clone())
            .filter(|last| !detail.contains(last.as_str()));
        let todo = match &self.method {
            Method::Bearer { env } => format!("check the token in `{env}`"),
            Method::OAuth(o) if o.config.grant == Grant::ClientCredentials => {
                "check the client id and secret".to_owned()
            }
            Method::OAuth(_) => format!("run `mcp-resilient login {}`", self.name),
        };
        match last {
            Some(last) => format!("{last}; {todo}"),
            None => todo,
        }
    }

    fn deny(&self, detail: impl Into<String>) -> Denied {
        let detail = detail.into();
        crate::telemetry::auth_refused(&self.name);
        tracing::warn!(server = %self.name, "authorization: {detail}");
        if let Ok(mut last) = self.last_denial.lock() {
            *last = Some(detail.clone());
        }
        Denied {
            detail,
            transient: false,
        }
    }

    /// The authorization server did not answer: the request fails, the grant stands. Not kept
    /// as the last denial (that one is the advice for a real refusal).
    fn unavailable(&self, detail: impl Into<String>) -> Denied {
        let detail = detail.into();
        tracing::warn!(server = %self.name, "authorization server unavailable: {detail}");
        Denied {
            detail,
            transient: true,
        }
    }

    /// `work` (a token exchange: a few HTTP requests) within [`EXCHANGE_LIMIT`].
    async fn within<T>(&self, work: impl Future<Output = T>) -> Result<T, Denied> {
        tokio::time::timeout(EXCHANGE_LIMIT, work)
            .await
            .map_err(|_| {
                self.unavailable(format!(
                    "the authorization server did not answer within {EXCHANGE_LIMIT:?}"
                ))
            })
    }

    /// A request got through with our token: the step-up count starts again.
    fn accepted(&self) {
        self.step_ups.store(0, Ordering::Relaxed);
    }

    /// Sends one request with the current token. When the answer is a refusal (`refusal` reads
    /// it: a 401, or a 403 `insufficient_scope`, with its `WWW-Authenticate`), renews the token
    /// (or steps up) and sends it once more: the refused request never ran. Any other answer is
    /// returned as it is; the outer `Err` is why no token could be had. Both remote transports
    /// send through here, each reading its own answer type.
    pub(crate) async fn send<T, F, Fut>(
        &self,
        send: F,
        refusal: impl Fn(&T) -> Option<Refusal>,
    ) -> Result<T, Denied>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = T>,
    {
        let token = self.token().await?;
        let answer = send(token.clone()).await;
        let renewed = match refusal(&answer) {
            None => {
                self.accepted();
                return Ok(answer);
            }
            Some(Refusal::Unauthorized(challenge)) => {
                self.renew(token.as_deref(), &challenge).await
            }
            Some(Refusal::InsufficientScope(challenge)) => self.step_up(&challenge).await,
        };
        crate::telemetry::auth_renewal(&self.name, renewed.as_ref().err().map(|d| d.transient));
        let renewed = renewed?;
        let answer = send(Some(renewed)).await;
        if refusal(&answer).is_none() {
            self.accepted();
        }
        Ok(answer)
    }

    /// The token to send now, if there is one. An OAuth token close to its expiry is refreshed
    /// first. `Ok(None)`: send without one (the server's 401 will say what it wants).
    async fn token(&self) -> Result<Option<String>, Denied> {
        match &self.method {
            Method::Bearer { env } => match std::env::var(env) {
                Ok(token) if !token.is_empty() => Ok(Some(token)),
                _ => Err(self.deny(format!("the token variable `{env}` is not set"))),
            },
            Method::OAuth(oauth) => {
                let token = match self.manager(oauth, false).await? {
                    None => None,
                    // May refresh (the token is about to expire): an HTTP exchange, bounded.
                    Some(manager) => {
                        let unavailable = match self.within(manager.get_access_token()).await {
                            Ok(Ok(token)) => return Ok(Some(token)),
                            Ok(Err(AuthError::AuthorizationRequired)) => None,
                            Ok(Err(e)) if unanswered(&e) => {
                                Some(self.unavailable(unanswered_detail("a refresh", &e)))
                            }
                            Err(timeout) => Some(timeout),
                            Ok(Err(e)) => {
                                return Err(self.deny(format!("could not refresh the token: {e}")));
                            }
                        };
                        match unavailable {
                            // The early refresh found the authorization server down: while the
                            // token has not expired it is still good, so send it.
                            Some(unavailable) => {
                                Some(self.fresher_than(oauth, None).await.ok_or(unavailable)?)
                            }
                            None => None,
                        }
                    }
                };
                if token.is_some() || oauth.config.grant != Grant::ClientCredentials {
                    return Ok(token);
                }
                // Client credentials need no person: get a token now rather than send the
                // request without one and wait for the 401.
                let _one_at_a_time = oauth.renewing.lock().await;
                if let Some(token) = self.fresher_than(oauth, None).await {
                    return Ok(Some(token));
                }
                self.obtain(oauth, None, Vec::new()).await.map(Some)
            }
        }
    }

    /// The current manager, restored from the store on first use. `Ok(None)`: nothing stored.
    ///
    /// With `recheck` (a renewal), a cached manager is first checked against the store: when the
    /// store holds another client's tokens, it is built again. A request's token does not need
    /// that (rmcp reads the token from the store itself), so it skips the extra read.
    async fn manager(
        &self,
        oauth: &OAuth,
        recheck: bool,
    ) -> Result<Option<Arc<AuthorizationManager>>, Denied> {
        let mut slot = oauth.manager.lock().await;
        if let (Some((manager, _)), false) = (slot.as_ref(), recheck) {
            return Ok(Some(manager.clone()));
        }
        let stored = oauth.bound.record().await.ok().flatten();
        if let Some((manager, client_id)) = slot.as_ref() {
            match &stored {
                // A login since (maybe in another process) registered another client: its
                // refresh token is refused to the old one, so the manager is built again.
                Some(record) if record.credentials.client_id != *client_id => {
                    tracing::info!(server = %self.name, "stored authorization changed; using the new one");
                }
                _ => return Ok(Some(manager.clone())),
            }
        }
        let restored = flow::restore(&self.url, &oauth.config, &oauth.bound).await;
        match restored {
            Ok(Some(manager)) => {
                let manager = Arc::new(manager);
                let client_id = stored.map(|r| r.credentials.client_id).unwrap_or_default();
                *slot = Some((manager.clone(), client_id));
                Ok(Some(manager))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(self.deny(format!("stored authorization unusable: {e}"))),
        }
    }

    /// After a 401 to a request that carried `sent`: a token to send it again with.
    async fn renew(&self, sent: Option<&str>, challenge: &str) -> Result<String, Denied> {
        let oauth = match &self.method {
            Method::Bearer { env } => {
                return Err(self.deny(format!("the server refused the token in `{env}`")));
            }
            Method::OAuth(oauth) => oauth,
        };
        let _one_at_a_time = oauth.renewing.lock().await;
        // Under the refresh lock: a refresh another task or process has under way is awaited
        // and its token used, rather than a second refresh made with a spent refresh token.
        let exclusive = oauth
            .bound
            .exclusive()
            .await
            .map_err(|e| self.deny(format!("token store: {e}")))?;
        if let Some(token) = self.fresher_than(oauth, sent).await {
            return Ok(token);
        }
        let manager = self.manager(oauth, true).await?;
        let refreshed = match (&manager, sent) {
            (Some(manager), Some(_)) => {
                Some(self.within(Bound::holding(manager.refresh_token())).await?)
            }
            _ => None,
        };
        // Not held across a new authorization, which may wait minutes for a person.
        drop(exclusive);
        if let Some(refreshed) = refreshed {
            match refreshed {
                Ok(response) => return Ok(response.access_token().secret().to_owned()),
                Err(AuthError::TokenRefreshRejected(_)) => {
                    self.deny("the refresh token was rejected");
                }
                Err(AuthError::AuthorizationRequired) => {}
                Err(e) if unanswered(&e) => {
                    return Err(self.unavailable(unanswered_detail("a refresh", &e)));
                }
                Err(e) => return Err(self.deny(format!("refresh failed: {e}"))),
            }
        }
        self.obtain(oauth, Some(challenge), Vec::new()).await
    }

    /// After a 403 `insufficient_scope`: a token that also has the scopes `challenge` names.
    async fn step_up(&self, challenge: &str) -> Result<String, Denied> {
        let oauth = match &self.method {
            Method::Bearer { env } => {
                return Err(self.deny(format!(
                    "the token in `{env}` lacks a scope the server asks for"
                )));
            }
            Method::OAuth(oauth) => oauth,
        };
        let _one_at_a_time = oauth.renewing.lock().await;
        if self.step_ups.fetch_add(1, Ordering::Relaxed) >= STEP_UPS {
            return Err(self.deny("the server keeps asking for more scopes; giving up"));
        }
        let params = WWWAuthenticateParams::parse(challenge, &self.url);
        let mut wanted: Vec<String> = params
            .scope
            .as_deref()
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        if let Some((manager, _)) = oauth.manager.lock().await.clone() {
            for granted in manager.get_current_scopes().await {
                if !wanted.contains(&granted) {
                    wanted.push(granted);
                }
            }
        }
        self.obtain(oauth, Some(challenge), wanted).await
    }

    /// The stored token, when it is not the one that was refused and is not about to expire.
    async fn fresher_than(&self, oauth: &OAuth, sent: Option<&str>) -> Option<String> {
        let record = oauth.bound.record().await.ok()??;
        let token = record.credentials.token_response.as_ref()?;
        let value = token.access_token().secret();
        let fresh = record
            .expires_at()
            .is_none_or(|at| at > super::store::now_secs() + 1);
        (sent != Some(value.as_str()) && fresh).then(|| value.clone())
    }

    /// Runs the configured grant (with the prompt, if any) and installs the new manager.
    async fn obtain(
        &self,
        oauth: &OAuth,
        challenge: Option<&str>,
        scopes: Vec<String>,
    ) -> Result<String, Denied> {
        let ask = Ask {
            url: &self.url,
            config: &oauth.config,
            bound: &oauth.bound,
            challenge,
            scopes,
        };
        // The person's part is bounded by PROMPT_WAIT inside; discovery and the exchanges too.
        let obtained = flow::obtain(ask, oauth.config.prompt.as_deref(), PROMPT_WAIT);
        let obtained = tokio::time::timeout(PROMPT_WAIT + EXCHANGE_LIMIT, obtained)
            .await
            .unwrap_or_else(|_| {
                Err(AuthError::AuthorizationFailed(
                    "the authorization did not finish in time".to_owned(),
                ))
            });
        let manager = match obtained {
            Ok(manager) => manager,
            Err(AuthError::AuthorizationRequired) => {
                let last = self.last_denial.lock().ok().and_then(|l| l.clone());
                return Err(self.deny(
                    last.unwrap_or_else(|| "the server asks for an authorization".to_owned()),
                ));
            }
            Err(e) if unanswered(&e) => {
                return Err(self.unavailable(unanswered_detail("the authorization", &e)));
            }
            Err(e) => return Err(self.deny(format!("authorization failed: {e}"))),
        };
        let token = manager
            .get_access_token()
            .await
            .map_err(|e| self.deny(format!("no token after the authorization: {e}")))?;
        let client_id = oauth
            .bound
            .record()
            .await
            .ok()
            .flatten()
            .map(|r| r.credentials.client_id)
            .unwrap_or_default();
        *oauth.manager.lock().await = Some((Arc::new(manager), client_id));
        tracing::info!(server = %self.name, "authorized");
        Ok(token)
    }
}
