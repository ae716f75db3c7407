//! An issuer (the mock's authorization server, in a process of its own), an upstream and a
//! `serve` that takes the issuer's JWTs: the harness of the door tests (`doors.rs`,
//! `doors_access.rs`).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{
    gateway::{FAST, Gateway},
    raw::{Raw, initialize},
};
use crate::common::{LIMIT, process::MockProcess};

/// A static token that stays valid beside the JWTs.
pub const STATIC: &str = "static-token-0123456789";

/// An issuer, an upstream and a gateway that takes the issuer's tokens.
pub struct Doors {
    pub issuer: MockProcess,
    pub upstream: MockProcess,
    pub gateway: Gateway,
    pub raw: Raw,
    _dir: tempfile::TempDir,
}

impl Doors {
    /// The three, with `extra` flags for `serve` (`{issuer}` in one stands for the issuer's
    /// address).
    pub async fn start(extra: &[&str]) -> Doors {
        Self::start_with_tokens("", extra).await
    }

    /// [`start`](Self::start), with these lines in the token file besides the static one.
    pub async fn start_with_tokens(more: &str, extra: &[&str]) -> Doors {
        let issuer = MockProcess::start_with("http", &["--oauth"]).await;
        let upstream = MockProcess::start("http").await;
        let dir = tempfile::tempdir().expect("temp dir");
        let tokens = dir.path().join("tokens");
        std::fs::write(&tokens, format!("static-host:{STATIC}\n{more}")).expect("token file");
        let (issuer_base, url) = (base(&issuer), upstream.url());
        let tokens = tokens.display().to_string();
        let mut args: Vec<&str> = FAST.to_vec();
        args.extend(["--jwt-issuer", &issuer_base, "--auth-token-file", &tokens]);
        // `{issuer}` in a flag stands for the issuer's address.
        let extra: Vec<String> = (extra.iter())
            .map(|flag| flag.replace("{issuer}", &issuer_base))
            .collect();
        args.extend(extra.iter().map(String::as_str));
        args.extend(["--name", "mock", "--protocol", "2025-11-25", "--url", &url]);
        let gateway = Gateway::start(&args).await;
        let raw = Raw::new(&gateway.url());
        Doors {
            issuer,
            upstream,
            gateway,
            raw,
            _dir: dir,
        }
    }

    /// A token the issuer signs: `claims` over the defaults (`iss` the issuer, `aud` the
    /// gateway, `sub` `alice`, an hour to live), `how` the rest of the mint request.
    pub async fn mint(&self, claims: Value, how: Value) -> String {
        let mut all = json!({
            "iss": base(&self.issuer), "aud": self.gateway.url(), "sub": "alice",
            "exp": now() + 3600, "iat": now(), "client_id": "test-client",
        });
        for (key, value) in claims.as_object().expect("claims").clone() {
            match value {
                Value::Null => all.as_object_mut().expect("object").remove(&key),
                value => all.as_object_mut().expect("object").insert(key, value),
            };
        }
        let mut request = how;
        request["claims"] = all;
        let minted = self.issuer.admin("oauth/jwt", request).await;
        minted["token"].as_str().expect("a token").to_owned()
    }

    /// The status of an `initialize` with `token`, and the `WWW-Authenticate` it got.
    pub async fn knock(&self, token: &str) -> (StatusCode, String) {
        let auth = format!("Bearer {token}");
        let response = self
            .raw
            .post(&initialize(1), &[("authorization", auth.as_str())])
            .await;
        let challenge = response
            .headers()
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        (response.status(), challenge)
    }

    /// How often the issuer's JWKS was fetched.
    pub async fn fetches(&self) -> u64 {
        let counted = self.issuer.admin_get("oauth/jwks-fetches").await;
        counted["fetches"].as_u64().expect("a count")
    }

    /// Knocks with `token` until it is let in, within [`LIMIT`]: a key the gateway learns
    /// only at its next fetch, which the refetch bound may hold back.
    pub async fn until_let_in(&self, token: &str) {
        let let_in = tokio::time::timeout(LIMIT, async {
            while self.knock(token).await.0 != StatusCode::OK {
                // Pacing only: the condition above is what is waited for.
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
        })
        .await;
        assert!(let_in.is_ok(), "the token was never let in");
    }
}

/// `http://127.0.0.1:PORT`: the mock's issuer.
pub fn base(mock: &MockProcess) -> String {
    mock.url().trim_end_matches("/mcp").to_owned()
}

/// Seconds since the epoch.
pub fn now() -> i64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH);
    since.map_or(0, |d| d.as_secs() as i64)
}
