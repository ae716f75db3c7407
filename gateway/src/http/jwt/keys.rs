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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rsa(kid: &str, extra: serde_json::Value) -> serde_json::Value {
        let mut key = json!({"kty": "RSA", "kid": kid, "n": "sXchDaQebHnPiGvyDOAT4saGEUetSyo9MKLOoWFsueri23bOdgWp4Dy1WlUzewbgBHod5pcM9H95GQRV3JDXboIRROSBigeC5yjU1hGzHHyXss8UDprecbAYxknTcQkhslANGRUZmdTOQ5qTRsLAt6BTYuyvVRdhS8exSZEy_c4gs_7svlJJQ4H9_NxsiIoLwAEk7-Q3UXERGYw_75IDrGA84-lA_-Ct4eTlXHBIY2EaV7t7LjJaynVJCpkv4LKjTTAumiGUIuQhrNhZLuF_RJLqHpM2kgWFLU7-VTdL1VbC2tejvcI2BlMkEpk1BzBZI0KQB0GaDWFLN-aEAw3vRw", "e": "AQAB"});
        if let (Some(key), Some(extra)) = (key.as_object_mut(), extra.as_object()) {
            key.extend(extra.clone());
        }
        key
    }

    fn ec(kid: &str, crv: &str) -> serde_json::Value {
        json!({"kty": "EC", "kid": kid, "crv": crv,
            "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
            "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"})
    }

    fn set(keys: Vec<serde_json::Value>) -> KeySet {
        KeySet::from_document(json!({ "keys": keys }), Instant::now()).expect("a JWKS")
    }

    #[test]
    fn a_key_verifies_only_the_allowed_algorithms_of_its_own_family() {
        let keys = set(vec![
            rsa("r", json!({})),
            rsa("r256", json!({"alg": "RS256"})),
            ec("e", "P-256"),
        ]);
        assert!(keys.find(Some("r"), Algorithm::RS256).is_some());
        assert!(keys.find(Some("r"), Algorithm::PS256).is_some());
        assert!(
            keys.find(Some("r"), Algorithm::ES256).is_none(),
            "another family"
        );
        assert!(
            keys.find(Some("r"), Algorithm::HS256).is_none(),
            "never HMAC"
        );
        assert!(
            keys.find(Some("r256"), Algorithm::PS256).is_none(),
            "its alg narrows it"
        );
        assert!(keys.find(Some("e"), Algorithm::ES256).is_some());
        assert!(keys.find(Some("e"), Algorithm::RS256).is_none());
        assert!(keys.find(Some("nope"), Algorithm::RS256).is_none());
    }

    #[test]
    fn keys_that_cannot_sign_an_allowed_algorithm_are_left_out_and_the_set_is_bounded() {
        let mut keys = vec![
            rsa("enc", json!({"use": "enc"})),
            rsa("hs", json!({"alg": "HS256"})),
            ec("p384", "P-384"),
            json!({"kty": "oct", "kid": "secret", "k": "c2VjcmV0"}),
            json!({"kty": "whatever"}),
        ];
        keys.extend((0..40).map(|i| rsa(&format!("k{i}"), json!({}))));
        let set = set(keys);
        assert_eq!(set.len(), MAX_KEYS);
        for kid in ["enc", "hs", "p384", "secret"] {
            assert!(set.find(Some(kid), Algorithm::RS256).is_none(), "{kid}");
            assert!(set.find(Some(kid), Algorithm::ES256).is_none(), "{kid}");
        }
    }

    #[test]
    fn without_a_kid_only_a_sole_key_of_the_algorithm_is_used() {
        let one = set(vec![rsa("a", json!({})), ec("e", "P-256")]);
        assert!(one.find(None, Algorithm::RS256).is_some());
        let two = set(vec![rsa("a", json!({})), rsa("b", json!({}))]);
        assert!(two.find(None, Algorithm::RS256).is_none(), "which one?");
    }
}
