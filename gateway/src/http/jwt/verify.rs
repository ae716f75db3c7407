//! One token checked: its shape and header first (cheap, bounded), then its key, its signature
//! and its claims, then the name it gives its caller.

use std::{sync::Arc, time::Duration};

use jsonwebtoken::{Algorithm, Validation, errors::ErrorKind};
use serde_json::{Map, Value};

use super::{JwtConfigError, JwtOptions, cache::Jwks, keys::ALLOWED};

/// The longest token looked at.
pub(in crate::http) const MAX_TOKEN: usize = 8 * 1024;
/// The longest encoded JOSE header looked at.
const MAX_JOSE_HEADER: usize = 1024;
/// The longest identity, and the most names one token gives.
const MAX_IDENTITY: usize = 256;
const MAX_NAMES: usize = 32;

/// Why a token was refused: said to the host in `error_description`, so it names the check,
/// never a key or a claim's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::http) enum Rejected {
    /// Not a compact JWS within the bounds, or a header that does not parse (`alg: none`
    /// included).
    Malformed,
    /// A `typ` other than `at+jwt` or `JWT`.
    Type,
    /// An algorithm off the allow-list.
    Algorithm,
    /// No key of the issuer's JWKS for its `kid` and `alg`.
    UnknownKey,
    /// The signature does not verify.
    Signature,
    /// Another issuer.
    Issuer,
    /// Not for this gateway.
    Audience,
    /// Past its `exp`.
    Expired,
    /// Before its `nbf`, or issued in the future.
    NotYetValid,
    /// A required claim (`exp`, `iss`, `aud`, the identity claim) is missing or malformed.
    Claims,
}

impl Rejected {
    pub(in crate::http) fn description(self) -> &'static str {
        match self {
            Self::Malformed => "the token is not a JWT this gateway reads",
            Self::Type => "the token's typ is not at+jwt",
            Self::Algorithm => "the token's algorithm is not accepted",
            Self::UnknownKey => "the token's key is not one of the issuer's",
            Self::Signature => "the token's signature does not verify",
            Self::Issuer => "the token is from another issuer",
            Self::Audience => "the token is not for this resource",
            Self::Expired => "the token has expired",
            Self::NotYetValid => "the token is not valid yet",
            Self::Claims => "the token lacks a required claim",
        }
    }
}

/// Who a valid token says the caller is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::http) struct Verified {
    /// The identity claim's value as it is (the key of the caller's rate and sessions).
    pub(in crate::http) identity: Arc<str>,
    /// The names the access policy matches: the value, or each of its scopes or roles.
    pub(in crate::http) names: Vec<Arc<str>>,
}

/// Checks tokens of one issuer for one audience.
pub(in crate::http) struct Verifier {
    issuer: String,
    audience: String,
    leeway: Duration,
    identity_claim: String,
    jwks: Jwks,
}

impl std::fmt::Debug for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Verifier")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .finish_non_exhaustive()
    }
}

impl Verifier {
    /// Tokens as `options` say, for `audience` (the gateway's resource URL).
    pub(in crate::http) fn new(
        options: &JwtOptions,
        audience: String,
    ) -> Result<Self, JwtConfigError> {
        Ok(Self {
            jwks: Jwks::new(options)?,
            issuer: options.issuer.clone(),
            audience,
            leeway: options.leeway,
            identity_claim: options.identity_claim.clone(),
        })
    }

    /// Whether `token` has a JWT's shape (three base64url parts), so that a static token that
    /// does not match is not read as one.
    pub(in crate::http) fn looks_like_jwt(token: &[u8]) -> bool {
        token.iter().filter(|b| **b == b'.').count() == 2
            && token
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(b))
    }

    /// The caller a token names, or why it is refused.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: it may wait for a fetch of the keys, which stays whole or counts as made.
    pub(in crate::http) async fn verify(&self, token: &[u8]) -> Result<Verified, Rejected> {
        if token.len() > MAX_TOKEN || !Self::looks_like_jwt(token) {
            return Err(Rejected::Malformed);
        }
        let encoded_header = token.split(|b| *b == b'.').next().unwrap_or_default();
        if encoded_header.len() > MAX_JOSE_HEADER {
            return Err(Rejected::Malformed);
        }
        let header = jsonwebtoken::decode_header(token).map_err(|_| Rejected::Malformed)?;
        let typ_ok = header.typ.as_deref().is_none_or(|typ| {
            let typ = typ.to_ascii_lowercase();
            let typ = typ.strip_prefix("application/").unwrap_or(&typ);
            typ == "at+jwt" || typ == "jwt"
        });
        if !typ_ok {
            return Err(Rejected::Type);
        }
        if !ALLOWED.contains(&header.alg) {
            return Err(Rejected::Algorithm);
        }
        // Only the JWKS's keys: `jku`, `x5u`, `x5c` and `jwk` are never looked at.
        let key =
            (self.jwks.key(header.kid.as_deref(), header.alg).await).ok_or(Rejected::UnknownKey)?;
        let claims = jsonwebtoken::decode::<Map<String, Value>>(
            token,
            &key.decoding,
            &self.validation(header.alg),
        )
        .map_err(|error| rejected(error.kind()))?
        .claims;
        self.issued_in_the_past(&claims)?;
        self.identity(&claims)
    }

    fn validation(&self, alg: Algorithm) -> Validation {
        let mut validation = Validation::new(alg);
        validation.leeway = self.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation
    }

    /// `iat`, when present, is a number not later than now plus the leeway.
    fn issued_in_the_past(&self, claims: &Map<String, Value>) -> Result<(), Rejected> {
        let Some(iat) = claims.get("iat") else {
            return Ok(());
        };
        let iat = iat.as_f64().ok_or(Rejected::Claims)?;
        let now = jsonwebtoken::get_current_timestamp() as f64;
        match iat <= now + self.leeway.as_secs_f64() {
            true => Ok(()),
            false => Err(Rejected::NotYetValid),
        }
    }

    fn identity(&self, claims: &Map<String, Value>) -> Result<Verified, Rejected> {
        let value = claims.get(&self.identity_claim).ok_or(Rejected::Claims)?;
        let (identity, names): (String, Vec<String>) = match value {
            Value::String(text) if self.identity_claim == "scope" => (
                text.clone(),
                text.split_ascii_whitespace().map(str::to_owned).collect(),
            ),
            Value::String(text) => (text.clone(), vec![text.clone()]),
            Value::Array(items) => {
                let names: Option<Vec<String>> = items
                    .iter()
                    .map(|item| item.as_str().map(str::to_owned))
                    .collect();
                let names = names.ok_or(Rejected::Claims)?;
                (names.join(" "), names)
            }
            _ => return Err(Rejected::Claims),
        };
        if identity.is_empty() || identity.len() > MAX_IDENTITY || names.len() > MAX_NAMES {
            return Err(Rejected::Claims);
        }
        Ok(Verified {
            identity: identity.into(),
            names: names.into_iter().map(Arc::from).collect(),
        })
    }
}

fn rejected(kind: &ErrorKind) -> Rejected {
    match kind {
        ErrorKind::InvalidSignature => Rejected::Signature,
        ErrorKind::InvalidIssuer => Rejected::Issuer,
        ErrorKind::InvalidAudience => Rejected::Audience,
        ErrorKind::ExpiredSignature => Rejected::Expired,
        ErrorKind::ImmatureSignature => Rejected::NotYetValid,
        ErrorKind::MissingRequiredClaim(_) | ErrorKind::InvalidClaimFormat(_) => Rejected::Claims,
        ErrorKind::InvalidAlgorithm | ErrorKind::MissingAlgorithm => Rejected::Algorithm,
        _ => Rejected::Malformed,
    }
}
