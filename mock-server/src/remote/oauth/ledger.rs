//! The books of the authorization server: clients, codes and tokens, and the grants that turn
//! one into another. Plain data and logic with the time passed in;
//! [`Authority`](super::authority::Authority) keeps it behind its lock. Its unit tests are in
//! `oauth/tests.rs`.
//!
//! # Invariants
//!
//! 1. A code is spent by the first `/token` request naming it, whatever the outcome (a wrong
//!    verifier cannot be retried).
//! 2. A refresh token is spent by the first request of its client that presents it; when the
//!    grant succeeds its successor carries the same client and scopes (rotation), so at most
//!    one live refresh token descends from each authorization.
//! 3. Only [`Ledger::expire_access`] and the TTL end an access token; only
//!    [`Ledger::revoke_refresh`] and rotation end a refresh token.

use std::collections::HashMap;
use std::time::Duration;

use tokio::time::Instant;

use super::clients::{Client, ClientAuth};
use super::grant::{Issued, TokenError};
use super::options::{OAuthOptions, OAuthStats};
use super::secret::{random_token, verifies};

/// An authorization code waiting for its exchange.
pub(super) struct Code {
    pub(super) client_id: String,
    pub(super) redirect_uri: String,
    /// The S256 challenge.
    pub(super) challenge: String,
    pub(super) scopes: Vec<String>,
    pub(super) expires: Instant,
}

struct Access {
    scopes: Vec<String>,
    expires: Instant,
}

/// What a refresh token stands for.
struct Grant {
    client_id: String,
    scopes: Vec<String>,
}

/// Which grant issued an access token (for the counters).
#[derive(Clone, Copy)]
enum Kind {
    Code,
    Refresh,
    Credentials,
}

pub(super) struct Ledger {
    /// Pre-registered at start; grown only by `/register`.
    clients: HashMap<String, Client>,
    /// Added by `/authorize`; each removed by the first exchange naming it (expired ones are
    /// dropped when a code is added).
    codes: HashMap<String, Code>,
    /// Added by every successful grant; emptied by `expire_access` (expired ones are dropped
    /// when a token is issued).
    access: HashMap<String, Access>,
    /// Added by the code and refresh grants; each removed by its rotation, all by
    /// `revoke_refresh`.
    refresh: HashMap<String, Grant>,
    access_ttl: Duration,
    /// Grown by the grants, `/register` and the guard; its `valid_*` fields stay 0 (they are
    /// filled in by [`Ledger::stats`]).
    pub(super) counters: OAuthStats,
    /// How many more `/token` requests answer 503 (set by `fail_token_requests`).
    token_outage: u64,
}

impl Ledger {
    pub(super) fn new(opts: &OAuthOptions) -> Self {
        let clients = opts
            .clients
            .iter()
            .map(|(id, secret)| (id.clone(), Client::preregistered(secret.clone())))
            .collect();
        Self {
            clients,
            codes: HashMap::new(),
            access: HashMap::new(),
            refresh: HashMap::new(),
            access_ttl: opts.access_ttl,
            counters: OAuthStats::default(),
            token_outage: 0,
        }
    }

    /// The next `count` `/token` requests answer 503; returns how many were still to fail.
    pub(super) fn fail_token_requests(&mut self, count: u64) -> u64 {
        std::mem::replace(&mut self.token_outage, count)
    }

    /// Whether this `/token` request is one of the failing ones (and counts it).
    pub(super) fn token_unavailable(&mut self) -> bool {
        if self.token_outage == 0 {
            return false;
        }
        self.token_outage -= 1;
        self.counters.token_unavailable += 1;
        true
    }

    pub(super) fn client(&self, id: &str) -> Option<&Client> {
        self.clients.get(id)
    }

    /// Adds a client registered through `/register`.
    pub(super) fn register(&mut self, id: String, client: Client) {
        self.clients.insert(id, client);
        self.counters.registered += 1;
    }

    /// The client `auth` names, if its credentials are right.
    pub(super) fn authenticate(&self, auth: &ClientAuth) -> Result<&Client, TokenError> {
        match self.clients.get(&auth.id) {
            Some(client) if client.accepts(auth.secret.as_deref()) => Ok(client),
            _ => Err(TokenError::invalid_client()),
        }
    }

    /// Stores `code` (dropping expired ones) and returns its value.
    pub(super) fn add_code(&mut self, code: Code, now: Instant) -> String {
        self.codes.retain(|_, c| c.expires > now);
        let value = random_token();
        self.codes.insert(value.clone(), code);
        value
    }

    /// The `authorization_code` grant for the authenticated client `client_id`.
    pub(super) fn exchange_code(
        &mut self,
        client_id: &str,
        code: &str,
        verifier: &str,
        redirect_uri: &str,
        now: Instant,
    ) -> Result<Issued, TokenError> {
        let Some(stored) = self.codes.remove(code) else {
            return Err(TokenError::invalid_grant("unknown or spent code"));
        };
        if stored.expires <= now {
            return Err(TokenError::invalid_grant("expired code"));
        }
        if stored.client_id != client_id {
            return Err(TokenError::invalid_grant("code issued to another client"));
        }
        if stored.redirect_uri != redirect_uri {
            return Err(TokenError::invalid_grant("redirect_uri does not match"));
        }
        if !verifies(verifier, &stored.challenge) {
            return Err(TokenError::invalid_grant("PKCE verification failed"));
        }
        Ok(self.issue(client_id, stored.scopes, Kind::Code, now))
    }

    /// The `refresh_token` grant: spends `token` and issues its successor.
    pub(super) fn refresh(
        &mut self,
        client_id: &str,
        token: &str,
        now: Instant,
    ) -> Result<Issued, TokenError> {
        let owned = self.refresh.get(token).map(|g| g.client_id == client_id);
        match owned {
            None => Err(TokenError::invalid_grant(
                "unknown, spent or revoked refresh token",
            )),
            Some(false) => Err(TokenError::invalid_grant("refresh token of another client")),
            Some(true) => {
                let grant = self.refresh.remove(token);
                let scopes = grant.map(|g| g.scopes).unwrap_or_default();
                self.counters.refreshed += 1;
                Ok(self.issue(client_id, scopes, Kind::Refresh, now))
            }
        }
    }

    /// The `client_credentials` grant for an authenticated confidential client.
    pub(super) fn client_credentials(
        &mut self,
        client_id: &str,
        scopes: Vec<String>,
        now: Instant,
    ) -> Issued {
        self.issue(client_id, scopes, Kind::Credentials, now)
    }

    /// A new access token (and, except for `client_credentials`, a refresh token).
    fn issue(&mut self, client_id: &str, scopes: Vec<String>, kind: Kind, now: Instant) -> Issued {
        self.access.retain(|_, a| a.expires > now);
        let access_token = random_token();
        let access = Access {
            scopes: scopes.clone(),
            expires: now + self.access_ttl,
        };
        self.access.insert(access_token.clone(), access);
        let issued = &mut self.counters.issued;
        let refresh = match kind {
            Kind::Code => {
                issued.authorization_code += 1;
                true
            }
            Kind::Refresh => {
                issued.refresh_token += 1;
                true
            }
            Kind::Credentials => {
                issued.client_credentials += 1;
                false
            }
        };
        let refresh_token = refresh.then(|| {
            let token = random_token();
            let grant = Grant {
                client_id: client_id.to_owned(),
                scopes: scopes.clone(),
            };
            self.refresh.insert(token.clone(), grant);
            token
        });
        Issued::new(access_token, self.access_ttl, refresh_token, &scopes)
    }

    /// The scopes of `token` if it is a valid access token now.
    pub(super) fn access_scopes(&self, token: &str, now: Instant) -> Option<&[String]> {
        self.access
            .get(token)
            .filter(|a| a.expires > now)
            .map(|a| a.scopes.as_slice())
    }

    /// Ends every access token; returns how many were valid.
    pub(super) fn expire_access(&mut self, now: Instant) -> usize {
        let valid = self.valid_access(now);
        self.access.clear();
        valid
    }

    /// Ends every refresh token; returns how many there were.
    pub(super) fn revoke_refresh(&mut self) -> usize {
        let live = self.refresh.len();
        self.refresh.clear();
        live
    }

    fn valid_access(&self, now: Instant) -> usize {
        self.access.values().filter(|a| a.expires > now).count()
    }

    pub(super) fn stats(&self, now: Instant) -> OAuthStats {
        OAuthStats {
            valid_access_tokens: self.valid_access(now),
            valid_refresh_tokens: self.refresh.len(),
            ..self.counters
        }
    }
}
