//! Who is calling: a host's bearer token read as one of the static [`Tokens`] or as a JWT of
//! the configured issuer, and what the [`Access`] policy grants it. The guard asks once per
//! request; the answer rides in the request's extensions to the core.
//!
//! # Invariants
//!
//! 1. A token that matches a static token is that token's caller, and is never sent to the
//!    issuer's keys; only a token of a JWT's shape is verified as one.
//! 2. Without static tokens and without an issuer, every host is one anonymous caller (the
//!    gateway's behaviour before tokens), whatever it sends.

use std::sync::Arc;

use super::{
    Tokens,
    access::{Access, Grant},
    auth::bearer,
    jwt::{Rejected, Verifier},
};

/// Which caller a request is, for the counts kept per caller (sessions, session-less requests,
/// the rate).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(in crate::http) enum TokenKey {
    /// No authentication.
    Anyone,
    /// A static token, by its place in [`Tokens`].
    Static(u32),
    /// A JWT's identity claim.
    Jwt(Arc<str>),
}

/// A request's caller: its key, and what the policy grants it (none without a policy).
#[derive(Debug, Clone)]
pub(in crate::http) struct Caller {
    pub(in crate::http) key: TokenKey,
    /// What the caller is called in logs and rates.
    pub(in crate::http) label: Arc<str>,
    pub(in crate::http) grant: Option<Arc<Grant>>,
}

/// Why a request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::http) enum Refused {
    /// No `Authorization: Bearer` header.
    Missing,
    /// A token that is not one of ours.
    Invalid,
    /// A JWT that did not pass, and why.
    Jwt(Rejected),
}

/// The doors a host may come in by.
#[derive(Debug)]
pub(in crate::http) struct Doors {
    pub(in crate::http) tokens: Tokens,
    pub(in crate::http) jwt: Option<Verifier>,
    pub(in crate::http) access: Option<Access>,
}

impl Doors {
    /// Whether any door is locked.
    pub(in crate::http) fn locked(&self) -> bool {
        !self.tokens.is_empty() || self.jwt.is_some()
    }

    /// The caller of a request whose `Authorization` header is `header`.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe (see [`Verifier::verify`]).
    pub(in crate::http) async fn identify(&self, header: Option<&[u8]>) -> Result<Caller, Refused> {
        if !self.locked() {
            return Ok(self.caller(TokenKey::Anyone, "anyone".into(), &[]));
        }
        let token = bearer(header).ok_or(Refused::Missing)?;
        if let Some(index) = self.tokens.find(token) {
            let name = self.tokens.name(index).cloned();
            let label = name
                .clone()
                .unwrap_or_else(|| format!("token #{}", index + 1).into());
            let names: Vec<Arc<str>> = name.into_iter().collect();
            return Ok(self.caller(TokenKey::Static(index), label, &names));
        }
        match &self.jwt {
            Some(verifier) if Verifier::looks_like_jwt(token) => {
                let verified = verifier.verify(token).await.map_err(Refused::Jwt)?;
                let key = TokenKey::Jwt(verified.identity.clone());
                Ok(self.caller(key, verified.identity, &verified.names))
            }
            _ => Err(Refused::Invalid),
        }
    }

    /// What caller `key` is called on the status page: its token's name, `token #N`, a JWT's
    /// identity, or `anyone`; never the token.
    pub(in crate::http) fn label(&self, key: &TokenKey) -> Arc<str> {
        match key {
            TokenKey::Anyone => "anyone".into(),
            TokenKey::Static(index) => (self.tokens.name(*index).cloned())
                .unwrap_or_else(|| format!("token #{}", index + 1).into()),
            TokenKey::Jwt(identity) => identity.clone(),
        }
    }

    fn caller(&self, key: TokenKey, label: Arc<str>, names: &[Arc<str>]) -> Caller {
        let grant = self
            .access
            .as_ref()
            .map(|access| Arc::new(access.grant(names)));
        Caller { key, label, grant }
    }
}
