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
//! 5. A renewal, once begun, runs to its end on a task of its own, whoever asked for it and
//!    whether or not they still wait (a probe gives up after its timeout): a refresh spends the
//!    refresh token it carries, and an answer dropped with a caller that gave up would leave
//!    nothing to renew with but a new login; a person's authorization abandoned would be asked
//!    of them again at the next probe. A refresh holds the refresh lock until its answer is
//!    stored; each exchange is bounded by [`EXCHANGE_LIMIT`], a person's part by the prompt's
//!    wait. When the server is shut down ([`Authorizer::close`]) a renewal ends, except a token
//!    exchange already under way: it finishes (within [`EXCHANGE_LIMIT`]) so that its answer is
//!    stored, for the same reason.

use std::{
    fmt,
    future::Future,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU32, AtomicU64, Ordering},
    },
    time::Duration,
};

use rmcp::transport::auth::AuthorizationManager;
use url::Url;

mod busy;
mod refusal;
mod renewal;

pub(crate) use refusal::{Denied, Refusal};

use super::{Auth, FileTokenStore, Grant, OAuthConfig, flow::Bound};

/// Most step-ups in a row without a request getting through (invariant 3).
pub(in crate::auth) const STEP_UPS: u32 = 2;

/// The most a refresh (or a client credentials exchange) may take, lock wait included.
const EXCHANGE_LIMIT: Duration = Duration::from_secs(30);

/// How long a running supervisor waits for a person to finish an authorization it started.
const PROMPT_WAIT: Duration = Duration::from_secs(300);

/// The authorization of one server (see the module docs).
pub(crate) struct Authorizer {
    name: String,
    url: Url,
    method: Method,
    /// The last reason a token could not be had; read by the supervisor for its `failed` detail.
    last_denial: Mutex<Option<String>>,
    step_ups: AtomicU32,
    /// Requests the server refused for their token, renewed or not: read by probes, for which
    /// a refusal is an answer (`session::probe`, invariant 5).
    refusals: AtomicU64,
    /// Cancelled when the server is shut down: a renewal still running (a person's
    /// authorization, say) ends with it.
    closed: tokio_util::sync::CancellationToken,
    /// Exchanges in flight with the authorization server (`detached`, `obtain`), read by the
    /// hedge.
    busy: busy::Busy,
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
    pub(crate) fn new(
        name: &str,
        url: &Url,
        auth: &Auth,
    ) -> Result<Option<Arc<Self>>, crate::auth::StoreError> {
        let method = match auth {
            Auth::None => return Ok(None),
            Auth::Bearer { env } => Method::Bearer { env: env.clone() },
            Auth::OAuth(config) => {
                let store = match &config.store {
                    Some(store) => store.clone(),
                    None => Arc::new(FileTokenStore::for_server(name)?),
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
            refusals: AtomicU64::new(0),
            closed: tokio_util::sync::CancellationToken::new(),
            busy: busy::Busy::default(),
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

    /// `exchange` (a token request, which may refresh: a few HTTP requests) within
    /// [`EXCHANGE_LIMIT`], on a task of its own (invariant 5): a caller that stops waiting
    /// (a probe's timeout, a cancelled call) leaves it to finish.
    async fn detached<T: Send + 'static>(
        &self,
        exchange: impl Future<Output = T> + Send + 'static,
    ) -> Result<T, Denied> {
        let _busy = self.busy.enter();
        let task = tokio::spawn(tokio::time::timeout(EXCHANGE_LIMIT, exchange));
        match task.await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(_)) => Err(self.unavailable(format!(
                "the authorization server did not answer within {EXCHANGE_LIMIT:?}"
            ))),
            Err(failed) => Err(self.unavailable(format!("the token exchange failed: {failed}"))),
        }
    }

    /// The server is shut down: a renewal still running ends now.
    pub(crate) fn close(&self) {
        self.closed.cancel();
    }

    /// Requests the server refused for their token so far.
    pub(crate) fn refusals(&self) -> u64 {
        self.refusals.load(Ordering::Relaxed)
    }

    /// `None` while an exchange with the authorization server is in flight (discovery, a token
    /// request, a person's authorization); otherwise how long since the last one ended
    /// (`Duration::MAX`: never). See `busy`.
    pub(crate) fn since_exchange(&self) -> Option<Duration> {
        self.busy.since()
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
    ///
    /// The token's fetch is boxed, and a renewal runs on a task of its own: each is a future of
    /// kilobytes (a token request, a lock on the shared store), and inline they made every
    /// request's future that large, copied each time its task moved it (BENCHMARKS.md § 26:
    /// legacy SSE's `POST`s).
    pub(crate) async fn send<T, F, Fut>(
        self: &Arc<Self>,
        send: F,
        refusal: impl Fn(&T) -> Option<Refusal>,
    ) -> Result<T, Denied>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = T>,
    {
        let token = Box::pin(self.token()).await?;
        let answer = send(token.clone()).await;
        let Some(refused) = refusal(&answer) else {
            self.accepted();
            return Ok(answer);
        };
        self.refusals.fetch_add(1, Ordering::Relaxed);
        // On a task of its own (invariant 5): a renewal may wait minutes for a person, and one
        // abandoned with a probe that gave up would be asked of them again at the next probe.
        let this = Arc::clone(self);
        let renewal = tokio::spawn(async move {
            let renewal = async {
                match refused {
                    Refusal::Unauthorized(challenge) => {
                        this.renew(token.as_deref(), &challenge).await
                    }
                    Refusal::InsufficientScope(challenge) => this.step_up(&challenge).await,
                }
            };
            tokio::select! {
                renewed = renewal => renewed,
                // Not the authorization server's fault: not logged as its unavailability.
                () = this.closed.cancelled() => Err(Denied {
                    detail: "the server is shutting down".to_owned(),
                    transient: true,
                }),
            }
        });
        let renewed = renewal.await.unwrap_or_else(|failed| {
            Err(self.unavailable(format!("the token renewal failed: {failed}")))
        });
        crate::telemetry::auth_renewal(&self.name, renewed.as_ref().err().map(|d| d.transient));
        let renewed = renewed?;
        let answer = send(Some(renewed)).await;
        if refusal(&answer).is_none() {
            self.accepted();
        }
        Ok(answer)
    }
}
