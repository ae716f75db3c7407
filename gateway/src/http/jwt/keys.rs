//! The issuer's keys, as one fetched JWKS makes them: each key with the algorithms it may
//! verify, chosen by a token's `kid` and `alg` (invariant 3 of the module).

use std::sync::Arc;

use jsonwebtoken::{
    Algorithm, DecodingKey,
    jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse},
};
use serde::Deserialize;
use tokio::time::Instant;

/// The most keys kept of one JWKS (the first ones that can verify).
pub(super) const MAX_KEYS: usize = 32;

/// The algorithms accepted at all: the explicit allow-list.
pub(super) const ALLOWED: [Algorithm; 3] = [Algorithm::RS256, Algorithm::PS256, Algorithm::ES256];

/// One key of the set.
pub(super) struct Key {
    kid: Option<String>,
    /// The algorithms this key may verify: its family's allowed ones, narrowed by its `alg`.
    algorithms: Vec<Algorithm>,
    pub(super) decoding: DecodingKey,
}

/// The keys of one JWKS, and when it was fetched. Immutable: a fetch makes a new one.
#[derive(Default)]
pub(super) struct KeySet {
    keys: Vec<Arc<Key>>,
    pub(super) fetched: Option<Instant>,
}

/// A JWKS document: its keys, each read on its own (one that does not parse is skipped).
#[derive(Deserialize)]
struct Document {
    keys: Vec<serde_json::Value>,
}

impl KeySet {
    /// The keys of a JWKS document that can verify an allowed algorithm, at most [`MAX_KEYS`].
    pub(super) fn from_document(
        document: serde_json::Value,
        fetched: Instant,
    ) -> Result<Self, serde_json::Error> {
        let Document { keys } = serde_json::from_value(document)?;
        let usable: Vec<Arc<Key>> = keys
            .into_iter()
            .filter_map(|value| serde_json::from_value::<Jwk>(value).ok())
            .filter_map(|jwk| key(&jwk))
            .map(Arc::new)
            .take(MAX_KEYS)
            .collect();
        Ok(Self {
            keys: usable,
            fetched: Some(fetched),
        })
    }

    /// The key that verifies `alg` under `kid`; without a `kid`, the set's only key for `alg`.
    pub(super) fn find(&self, kid: Option<&str>, alg: Algorithm) -> Option<Arc<Key>> {
        let mut fits = self.keys.iter().filter(|k| k.algorithms.contains(&alg));
        match kid {
            Some(kid) => fits.find(|k| k.kid.as_deref() == Some(kid)).cloned(),
            None => {
                let only = fits.next()?;
                fits.next().is_none().then(|| only.clone())
            }
        }
    }

    /// How many keys the set holds.
    pub(super) fn len(&self) -> usize {
        self.keys.len()
    }
}

/// A JWK as a key, if it is a signing key of an allowed algorithm.
fn key(jwk: &Jwk) -> Option<Key> {
    if matches!(&jwk.common.public_key_use, Some(u) if *u != PublicKeyUse::Signature) {
        return None;
    }
    let family: &[Algorithm] = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => &[Algorithm::RS256, Algorithm::PS256],
        AlgorithmParameters::EllipticCurve(ec) if ec.curve == EllipticCurve::P256 => {
            &[Algorithm::ES256]
        }
        _ => return None,
    };
    let algorithms: Vec<Algorithm> = match jwk.common.key_algorithm {
        None => family.to_vec(),
        Some(named) => family
            .iter()
            .copied()
            .filter(|alg| KeyAlgorithm::from(*alg) == named)
            .collect(),
    };
    if algorithms.is_empty() {
        return None;
    }
    let decoding = DecodingKey::from_jwk(jwk).ok()?;
    Some(Key {
        kid: jwk.common.key_id.clone(),
        algorithms,
        decoding,
    })
}
