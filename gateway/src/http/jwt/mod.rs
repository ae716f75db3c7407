//! JWT access tokens (RFC 9068) checked against their issuer's published keys (JWKS), beside
//! the static tokens of [`Tokens`](super::Tokens).
//!
//! A token passes when it is a compact JWS whose header says `typ` `at+jwt` (or `JWT`, or
//! nothing), whose `alg` is one of RS256, PS256 and ES256, and whose `kid` names a key of the
//! issuer's JWKS of that algorithm's family; its signature verifies with that key; `iss` is the
//! configured issuer, `aud` holds this gateway's resource URL, `exp` is present and not past,
//! and `nbf` and `iat` are not in the future, each within the leeway. The key is always the
//! JWKS's: the header's `jku`, `x5u`, `x5c` and `jwk` are never followed, and the token's `alg`
//! only picks among the algorithms the key's own family allows (an `HS256` token signed with
//! an RSA key's public bytes is refused before any key is touched).
//!
//! Keys: the JWKS comes from the issuer's metadata (`/.well-known/oauth-authorization-server`,
//! then `/.well-known/openid-configuration`; its `issuer` must be the configured one) or from
//! a configured URL, on the first token. A token whose `kid` is not in the set, or a set older
//! than an hour, starts a new fetch, at most one every
//! [`refetch_after`](JwtOptions::refetch_after) whatever the hosts send, so a host cannot make
//! the gateway hammer the issuer. Rotation: a new key is found by that fetch; a fetched set
//! replaces the previous one whole, so an old key keeps working exactly as long as the issuer
//! still publishes it (issuers publish the next key before they use it and keep the last one
//! for as long as its tokens live); a key the issuer withdrew stops working at the next fetch.
//! A fetch that fails keeps the set there was.
//!
//! # Invariants
//!
//! 1. Everything a host or an issuer controls is bounded before it is parsed: the token's
//!    length and its header's, the metadata and JWKS documents' sizes, the keys kept, the
//!    identity's length, each fetch's time.
//! 2. At most one fetch runs at a time, and a fetch starts at most once per `refetch_after`.
//! 3. The key that verifies a token is chosen by the token's `kid` among the JWKS's keys, and
//!    the algorithm must be allowed for that key; nothing in a token names where a key is.

mod cache;
mod fetch;
mod keys;
mod verify;

use std::time::Duration;

pub(in crate::http) use verify::{Rejected, Verifier};

/// The default leeway on `exp`, `nbf` and `iat`.
const DEFAULT_LEEWAY: Duration = Duration::from_secs(60);
/// The largest leeway accepted.
pub const MAX_LEEWAY: Duration = Duration::from_secs(5 * 60);
/// The default least time between two fetches of the JWKS.
const DEFAULT_REFETCH_AFTER: Duration = Duration::from_secs(30);
/// The default bound on one fetch.
const DEFAULT_FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// Where JWT access tokens come from, and how they are checked. The audience a token must name
/// is the gateway's resource URL ([`ServeOptions::resource`](super::ServeOptions::resource)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct JwtOptions {
    /// The issuer (`iss`) tokens must name; its metadata gives the JWKS's address unless
    /// [`jwks_url`](Self::jwks_url) is set. `https`, or `http` on a loopback host.
    pub issuer: String,
    /// Where the issuer's JWKS is, when its metadata is not to be asked.
    ///
    /// # Default
    /// None: the `jwks_uri` of the issuer's metadata.
    pub jwks_url: Option<String>,
    /// How far `exp`, `nbf` and `iat` may be off (clocks differ); at most [`MAX_LEEWAY`].
    ///
    /// # Default
    /// 60 s
    pub leeway: Duration,
    /// The claim that names the caller for [`Access`](super::Access): a string claim (`sub`,
    /// `client_id`, `azp`, …), or `scope` (each space-separated scope is a name) or `scp`, `roles`
    /// (arrays of names).
    ///
    /// # Default
    /// `sub`
    pub identity_claim: String,
    /// The least time between two fetches of the JWKS (a token with an unknown `kid` fetches
    /// it again, no sooner than this after the last fetch).
    ///
    /// # Default
    /// 30 s
    pub refetch_after: Duration,
    /// How long one fetch (metadata or JWKS) may take.
    ///
    /// # Default
    /// 5 s
    pub fetch_timeout: Duration,
}

impl JwtOptions {
    /// Tokens of `issuer`, the other settings at their defaults.
    pub fn new(issuer: impl Into<String>) -> Self {
        Self {
            issuer: issuer.into(),
            jwks_url: None,
            leeway: DEFAULT_LEEWAY,
            identity_claim: "sub".to_owned(),
            refetch_after: DEFAULT_REFETCH_AFTER,
            fetch_timeout: DEFAULT_FETCH_TIMEOUT,
        }
    }

    /// Whether the settings make sense: URLs that are `https` (or `http` to loopback), a
    /// leeway within [`MAX_LEEWAY`], a fetch timeout above zero.
    pub fn check(&self) -> Result<(), JwtConfigError> {
        fetch::web_url("issuer", &self.issuer)?;
        if let Some(url) = &self.jwks_url {
            fetch::web_url("JWKS URL", url)?;
        }
        if self.leeway > MAX_LEEWAY {
            return Err(JwtConfigError::Leeway {
                leeway: self.leeway,
                max: MAX_LEEWAY,
            });
        }
        if self.fetch_timeout.is_zero() {
            return Err(JwtConfigError::FetchTimeout);
        }
        if self.identity_claim.is_empty() {
            return Err(JwtConfigError::IdentityClaim);
        }
        Ok(())
    }
}

/// Why [`JwtOptions`] cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum JwtConfigError {
    /// A URL that does not parse, or is neither `https` nor `http` to a loopback host.
    #[error("the {what} {url:?} must be an https URL (or http to a loopback host)")]
    Url {
        /// Which URL.
        what: &'static str,
        /// The URL.
        url: String,
    },
    /// A leeway over [`MAX_LEEWAY`].
    #[error("a leeway of {leeway:?} is over the most allowed, {max:?}")]
    Leeway {
        /// The leeway asked for.
        leeway: Duration,
        /// The bound.
        max: Duration,
    },
    /// A fetch timeout of zero.
    #[error("the JWKS fetch timeout must be above zero")]
    FetchTimeout,
    /// No identity claim.
    #[error("the identity claim must be named")]
    IdentityClaim,
}
