//! The authorization server of one mock server: its options, its address and its
//! [`Ledger`] behind a lock.
//!
//! # Invariants
//!
//! 1. The lock is only held by synchronous code (never across an `.await`), so a handler that
//!    is dropped mid-request leaves the ledger consistent.
//! 2. Nothing here logs a code, token, secret or client id: logs carry grant types and counts.

use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::time::Instant;

use super::ledger::Ledger;
use super::options::{OAuthOptions, OAuthStats};
use super::signer::Signer;

/// Which protected resource a request is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resource {
    /// Streamable HTTP (`MockOptions::mcp_path`).
    Mcp,
    /// Legacy SSE: the stream (`MockOptions::sse_path`) and `POST /message`.
    Sse,
}

pub(crate) struct Authority {
    pub(super) opts: OAuthOptions,
    /// `http://127.0.0.1:<port>`: the issuer and the origin of every resource.
    pub(super) base: String,
    mcp_path: String,
    sse_path: String,
    /// Changed by `/register`, `/authorize`, `/token`, the guard (its counters) and the
    /// admin controls.
    ledger: Mutex<Ledger>,
    /// The JWT signing keys, made on first use (an RSA key takes a while to make). Changed by
    /// `/jwks` (its count), the mint and the rotation.
    signer: Mutex<Option<Signer>>,
}

impl Authority {
    pub(crate) fn new(opts: OAuthOptions, base: String, mcp_path: &str, sse_path: &str) -> Self {
        Self {
            ledger: Mutex::new(Ledger::new(&opts)),
            signer: Mutex::new(None),
            opts,
            base,
            mcp_path: mcp_path.to_owned(),
            sse_path: sse_path.to_owned(),
        }
    }

    pub(super) fn ledger(&self) -> MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `work` on the signing keys, made first if they are not yet.
    pub(super) fn signer<T>(
        &self,
        work: impl FnOnce(&mut Signer) -> Result<T, String>,
    ) -> Result<T, String> {
        let mut signer = self.signer.lock().unwrap_or_else(PoisonError::into_inner);
        if signer.is_none() {
            *signer = Some(Signer::new()?);
        }
        match signer.as_mut() {
            Some(signer) => work(signer),
            None => Err("no signing keys".to_owned()),
        }
    }

    /// Which resource a request to `path` is for.
    pub(crate) fn resource_of(&self, path: &str) -> Resource {
        match path == "/message" || (path == self.sse_path && path != self.mcp_path) {
            true => Resource::Sse,
            false => Resource::Mcp,
        }
    }

    /// The path of `resource` on this server.
    pub(super) fn path(&self, resource: Resource) -> &str {
        match resource {
            Resource::Mcp => &self.mcp_path,
            Resource::Sse => &self.sse_path,
        }
    }

    /// `<base><path>`: the resource identifier (RFC 9728 `resource`).
    pub(super) fn resource_url(&self, resource: Resource) -> String {
        format!("{}{}", self.base, self.path(resource))
    }

    /// Where the protected resource metadata of `resource` is (RFC 9728 §3.1: the well-known
    /// prefix goes between the origin and the path).
    pub(super) fn metadata_url(&self, resource: Resource) -> String {
        let path = self.path(resource);
        format!("{}/.well-known/oauth-protected-resource{path}", self.base)
    }

    /// Ends every access token now; returns how many were valid.
    pub(crate) fn expire_access(&self) -> usize {
        let expired = self.ledger().expire_access(Instant::now());
        tracing::info!(expired, "oauth: access tokens expired on request");
        expired
    }

    /// Revokes every refresh token; returns how many there were.
    pub(crate) fn revoke_refresh(&self) -> usize {
        let revoked = self.ledger().revoke_refresh();
        tracing::info!(revoked, "oauth: refresh tokens revoked on request");
        revoked
    }

    /// The next `count` `/token` requests answer 503; returns how many were still to fail.
    pub(crate) fn fail_token_requests(&self, count: u64) -> u64 {
        tracing::info!(count, "oauth: the token endpoint fails on request");
        self.ledger().fail_token_requests(count)
    }

    pub(crate) fn stats(&self) -> OAuthStats {
        self.ledger().stats(Instant::now())
    }
}
