//! JWT access tokens (RFC 9068): the authorization server's signing keys, the JWKS it publishes
//! at `/jwks` (named by its metadata's `jwks_uri`), and their rotation.
//!
//! The keys are an RSA-2048 key (RS256 and PS256) and a P-256 key (ES256), made at start and
//! at each rotation, named `rsa-<n>` and `ec-<n>`. A rotation makes the next pair current and
//! keeps the last one published, or drops it. Tests mint tokens with any claims and header
//! (`POST /_mock/oauth/jwt`), hostile ones included: `alg: none`, an `HS256` token keyed with
//! the RSA key's public bytes, a key that is not published, a `kid` that names another key.
//!
//! # Invariants
//!
//! 1. The JWKS lists public parts only, and only of the current and (if kept) previous keys.
//! 2. The lock of the keys is never held across an `.await` (everything here is synchronous).

use aws_lc_rs::{
    encoding::{AsDer, PublicKeyX509Der},
    hmac,
    rand::SystemRandom,
    rsa::KeySize,
    signature::{
        ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair, RSA_PKCS1_SHA256, RSA_PSS_SHA256,
        RsaKeyPair,
    },
};
use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// One generation of keys.
struct Pair {
    rsa: (String, RsaKeyPair),
    ec: (String, EcdsaKeyPair),
}

impl Pair {
    fn new(generation: u32, prefix: &str) -> Result<Self, String> {
        let rsa = RsaKeyPair::generate(KeySize::Rsa2048).map_err(|e| e.to_string())?;
        let ec =
            EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).map_err(|e| e.to_string())?;
        Ok(Self {
            rsa: (format!("{prefix}rsa-{generation}"), rsa),
            ec: (format!("{prefix}ec-{generation}"), ec),
        })
    }

    fn jwks(&self) -> [Value; 2] {
        let public = self.rsa.1.public_key();
        let point = self.ec.1.public_key().as_ref();
        // An uncompressed P-256 point: 0x04, then x and y of 32 bytes each.
        let (x, y) = point
            .get(1..)
            .unwrap_or_default()
            .split_at(32.min(point.len().saturating_sub(1)));
        [
            json!({
                "kty": "RSA", "use": "sig", "kid": self.rsa.0,
                "n": URL_SAFE_NO_PAD.encode(public.modulus().big_endian_without_leading_zero()),
                "e": URL_SAFE_NO_PAD.encode(public.exponent().big_endian_without_leading_zero()),
            }),
            json!({
                "kty": "EC", "use": "sig", "alg": "ES256", "crv": "P-256", "kid": self.ec.0,
                "x": URL_SAFE_NO_PAD.encode(x), "y": URL_SAFE_NO_PAD.encode(y),
            }),
        ]
    }
}

/// The keys: current, the previous one while kept, and how often the JWKS was fetched.
pub(crate) struct Signer {
    generation: u32,
    current: Pair,
    previous: Option<Pair>,
    /// `GET /jwks` answered so far.
    pub(super) fetches: u64,
}

/// What `POST /_mock/oauth/jwt` asks for.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Mint {
    /// The claims, as they are.
    claims: Map<String, Value>,
    /// `RS256` (default), `PS256`, `ES256`, `HS256` (keyed with the current RSA key's public
    /// key, DER) or `none` (no signature).
    #[serde(default = "rs256")]
    alg: String,
    /// `current` (default), `previous` (the kept previous pair) or `stranger` (a key made for
    /// this token alone, never published).
    #[serde(default = "current")]
    key: String,
    /// The header's `kid` instead of the signing key's own (`null` leaves it out).
    #[serde(default)]
    kid: Option<Option<String>>,
    /// The header's `typ` (default `at+jwt`; `null` leaves it out).
    #[serde(default)]
    typ: Option<Option<String>>,
    /// More header fields (`jku`, `x5u`, …).
    #[serde(default)]
    header: Map<String, Value>,
}

fn rs256() -> String {
    "RS256".to_owned()
}

fn current() -> String {
    "current".to_owned()
}

impl Signer {
    pub(crate) fn new() -> Result<Self, String> {
        Ok(Self {
            generation: 1,
            current: Pair::new(1, "")?,
            previous: None,
            fetches: 0,
        })
    }

    /// The JWKS (invariant 1).
    pub(super) fn jwks(&self) -> Value {
        let keys: Vec<Value> = std::iter::once(&self.current)
            .chain(self.previous.as_ref())
            .flat_map(Pair::jwks)
            .collect();
        json!({ "keys": keys })
    }

    /// The next pair becomes current; the current one is kept published or dropped. The new
    /// key ids.
    pub(super) fn rotate(&mut self, keep_previous: bool) -> Result<Value, String> {
        let next = Pair::new(self.generation + 1, "")?;
        self.generation += 1;
        let old = std::mem::replace(&mut self.current, next);
        self.previous = keep_previous.then_some(old);
        Ok(json!({"rsa": self.current.rsa.0, "ec": self.current.ec.0}))
    }

    /// A signed token as `mint` asks.
    pub(super) fn mint(&self, mint: Mint) -> Result<String, String> {
        let stranger;
        let pair = match mint.key.as_str() {
            "current" => &self.current,
            "previous" => self.previous.as_ref().ok_or("no previous key is kept")?,
            "stranger" => {
                stranger = Pair::new(0, "stranger-")?;
                &stranger
            }
            other => return Err(format!("unknown key {other:?}")),
        };
        let own_kid = match mint.alg.as_str() {
            "ES256" => pair.ec.0.clone(),
            _ => pair.rsa.0.clone(),
        };
        let mut header = mint.header;
        header.insert("alg".into(), json!(mint.alg));
        match mint.typ {
            None => {
                header.insert("typ".into(), json!("at+jwt"));
            }
            Some(Some(typ)) => {
                header.insert("typ".into(), json!(typ));
            }
            Some(None) => {}
        }
        if let Some(kid) = mint.kid.unwrap_or(Some(own_kid)) {
            header.insert("kid".into(), json!(kid));
        }
        let encode = |value: &Map<String, Value>| {
            URL_SAFE_NO_PAD.encode(Value::from(value.clone()).to_string())
        };
        let message = format!("{}.{}", encode(&header), encode(&mint.claims));
        let signature = sign(pair, &mint.alg, message.as_bytes())?;
        Ok(format!("{message}.{}", URL_SAFE_NO_PAD.encode(signature)))
    }
}

fn sign(pair: &Pair, alg: &str, message: &[u8]) -> Result<Vec<u8>, String> {
    let rng = SystemRandom::new();
    let rsa = |padding| {
        let mut signature = vec![0; pair.rsa.1.public_modulus_len()];
        (pair.rsa.1.sign(padding, &rng, message, &mut signature))
            .map(|()| signature)
            .map_err(|e| e.to_string())
    };
    match alg {
        "RS256" => rsa(&RSA_PKCS1_SHA256),
        "PS256" => rsa(&RSA_PSS_SHA256),
        "ES256" => (pair.ec.1.sign(&rng, message))
            .map(|s| s.as_ref().to_vec())
            .map_err(|e| e.to_string()),
        "HS256" => {
            // Algorithm confusion: the verifier's public key as the HMAC secret.
            let public: PublicKeyX509Der<'_> = pair
                .rsa
                .1
                .public_key()
                .as_der()
                .map_err(|e| e.to_string())?;
            let key = hmac::Key::new(hmac::HMAC_SHA256, public.as_ref());
            Ok(hmac::sign(&key, message).as_ref().to_vec())
        }
        "none" => Ok(Vec::new()),
        other => Err(format!("unknown alg {other:?}")),
    }
}
