//! The books of the authorization server ([`super::ledger`]), checked without a server: codes
//! are single-use, refresh tokens rotate, access tokens expire.

use std::time::Duration;

use tokio::time::Instant;

use super::ledger::{Code, Ledger};
use super::options::OAuthOptions;
use super::secret::s256;

const VERIFIER: &str = "a-verifier-that-is-long-enough-to-pass-the-pkce-check-0123";

fn ledger_with_code(now: Instant) -> (Ledger, String) {
    let opts = OAuthOptions {
        clients: vec![("app".to_owned(), None)],
        ..OAuthOptions::default()
    };
    let mut ledger = Ledger::new(&opts);
    let code = Code {
        client_id: "app".to_owned(),
        redirect_uri: "http://127.0.0.1:1/cb".to_owned(),
        challenge: s256(VERIFIER),
        scopes: vec!["mcp:read".to_owned()],
        expires: now + Duration::from_secs(60),
    };
    let value = ledger.add_code(code, now);
    (ledger, value)
}

#[test]
fn a_code_is_spent_even_by_a_failed_exchange() {
    let now = Instant::now();
    let (mut ledger, code) = ledger_with_code(now);
    let wrong = "x".repeat(43);
    let error = ledger
        .exchange_code("app", &code, &wrong, "http://127.0.0.1:1/cb", now)
        .expect_err("wrong verifier");
    assert_eq!(error.error, "invalid_grant");
    let again = ledger.exchange_code("app", &code, VERIFIER, "http://127.0.0.1:1/cb", now);
    assert!(again.is_err());
}

#[test]
fn refresh_tokens_rotate_and_keep_their_scopes() {
    let now = Instant::now();
    let (mut ledger, code) = ledger_with_code(now);
    let first = ledger
        .exchange_code("app", &code, VERIFIER, "http://127.0.0.1:1/cb", now)
        .expect("exchange");
    let old = first.refresh_token.clone().expect("refresh token");
    let second = ledger.refresh("app", &old, now).expect("refresh");
    assert_eq!(second.scope, "mcp:read");
    assert!(ledger.refresh("app", &old, now).is_err());
    let stats = ledger.stats(now);
    assert_eq!((stats.valid_refresh_tokens, stats.refreshed), (1, 1));
    assert_eq!(stats.valid_access_tokens, 2);
    assert_eq!(ledger.expire_access(now), 2);
    assert!(ledger.access_scopes(&second.access_token, now).is_none());
    assert_eq!(ledger.revoke_refresh(), 1);
}

#[test]
fn access_tokens_end_after_their_ttl() {
    let now = Instant::now();
    let (mut ledger, _) = ledger_with_code(now);
    let issued = ledger.client_credentials("app", vec!["mcp:read".to_owned()], now);
    assert!(issued.refresh_token.is_none());
    assert!(ledger.access_scopes(&issued.access_token, now).is_some());
    let later = now + Duration::from_secs(3600);
    assert!(ledger.access_scopes(&issued.access_token, later).is_none());
}
