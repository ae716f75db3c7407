//! The issuer's keys as the gateway has them: the last fetched set, and the one fetch that may
//! run (invariant 2 of the module).

use std::{
    sync::{Arc, PoisonError, RwLock},
    time::Duration,
};

use jsonwebtoken::Algorithm;
use tokio::{sync::Mutex, time::Instant};
use url::Url;

use super::{
    JwtOptions,
    fetch::{self, MAX_JWKS},
    keys::{Key, KeySet},
};

/// A set older than this is fetched again before it is used (rate-limited like any fetch), so
/// that a key the issuer withdrew stops working even if no token names an unknown key.
const MAX_AGE: Duration = Duration::from_secs(60 * 60);

/// The fetch's own state, held by the one fetch that runs.
#[derive(Default)]
struct Fetching {
    /// When the last fetch started.
    last: Option<Instant>,
    /// The JWKS's address once the metadata gave it (asked again after a failed fetch).
    jwks: Option<Url>,
}

/// The keys, and how to fetch them again.
pub(super) struct Jwks {
    issuer: Url,
    configured: Option<Url>,
    http: reqwest::Client,
    refetch_after: Duration,
    timeout: Duration,
    /// Replaced whole by a fetch that succeeded; read by every token check. Never held across
    /// an `.await`.
    keys: RwLock<Arc<KeySet>>,
    /// Held by the fetch in flight (others wait for it: at most the fetch timeout twice).
    fetching: Mutex<Fetching>,
}

impl Jwks {
    pub(super) fn new(options: &JwtOptions) -> Result<Self, super::JwtConfigError> {
        options.check()?;
        let issuer = fetch::web_url("issuer", &options.issuer)?;
        let configured = match &options.jwks_url {
            Some(url) => Some(fetch::web_url("JWKS URL", url)?),
            None => None,
        };
        Ok(Self {
            issuer,
            configured,
            http: fetch::client(),
            refetch_after: options.refetch_after,
            timeout: options.fetch_timeout,
            keys: RwLock::default(),
            fetching: Mutex::default(),
        })
    }

    fn snapshot(&self) -> Arc<KeySet> {
        self.keys
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The key for a token's `kid` and `alg`: from the set there is, or after one fetch when the
    /// set has no such key or is old (if a fetch may start now).
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: a fetch dropped midway leaves the previous set and counts as made.
    pub(super) async fn key(&self, kid: Option<&str>, alg: Algorithm) -> Option<Arc<Key>> {
        let set = self.snapshot();
        let fresh = set.fetched.is_some_and(|at| at.elapsed() < MAX_AGE);
        if fresh && let Some(key) = set.find(kid, alg) {
            return Some(key);
        }
        self.refresh().await;
        self.snapshot().find(kid, alg)
    }

    /// Fetches the JWKS again, unless a fetch started less than `refetch_after` ago.
    async fn refresh(&self) {
        let mut fetching = self.fetching.lock().await;
        if fetching
            .last
            .is_some_and(|at| at.elapsed() < self.refetch_after)
        {
            return;
        }
        fetching.last = Some(Instant::now());
        let jwks = match (&self.configured, &fetching.jwks) {
            (Some(url), _) | (None, Some(url)) => url.clone(),
            (None, None) => match fetch::discover(&self.http, &self.issuer, self.timeout).await {
                Ok(url) => url,
                Err(error) => {
                    tracing::warn!(error = ?error, "the issuer's metadata could not be read; the keys there were stay");
                    return;
                }
            },
        };
        let fetched = Instant::now();
        let document =
            fetch::get_json::<serde_json::Value>(&self.http, &jwks, MAX_JWKS, self.timeout)
                .await
                .and_then(|document| {
                    KeySet::from_document(document, fetched).map_err(|source| {
                        fetch::FetchError::Json {
                            url: jwks.to_string(),
                            source,
                        }
                    })
                });
        match document {
            Ok(set) => {
                tracing::info!(keys = set.len(), "the issuer's keys were fetched");
                fetching.jwks = Some(jwks);
                *self.keys.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(set);
            }
            Err(error) => {
                tracing::warn!(error = ?error, "the issuer's keys could not be fetched; the keys there were stay");
                fetching.jwks = None;
            }
        }
    }
}
