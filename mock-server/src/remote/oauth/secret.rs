//! Random tokens and the PKCE S256 check (RFC 7636).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::Rng;
use sha2::{Digest, Sha256};

/// Bytes of randomness in every code, token, client id and secret.
const TOKEN_BYTES: usize = 32;

/// A fresh unguessable token: 32 random bytes (the thread's CSPRNG), base64url without padding.
pub(super) fn random_token() -> String {
    let mut bytes = [0u8; TOKEN_BYTES];
    rand::rng().fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// `BASE64URL-NOPAD(SHA256(verifier))`, the S256 code challenge of `verifier`.
pub(super) fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// Whether `value` is 43–128 characters of the PKCE alphabet (`[A-Za-z0-9-._~]`), as a code
/// verifier must be (an S256 challenge is such a string too: 43 base64url characters).
pub(super) fn well_formed(value: &str) -> bool {
    (43..=128).contains(&value.len())
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
}

/// Whether `verifier` is well formed and its S256 challenge is `challenge`.
pub(super) fn verifies(verifier: &str, challenge: &str) -> bool {
    well_formed(verifier) && s256(verifier) == challenge
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s256_matches_the_rfc_7636_example() {
        // RFC 7636 appendix B.
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
        assert_eq!(s256(verifier), challenge);
        assert!(verifies(verifier, challenge));
        assert!(!verifies("short", &s256("short")));
    }

    #[test]
    fn tokens_are_fresh_and_url_safe() {
        let (a, b) = (random_token(), random_token());
        assert_ne!(a, b);
        assert_eq!(a.len(), 43);
        assert!(well_formed(&a));
    }
}
