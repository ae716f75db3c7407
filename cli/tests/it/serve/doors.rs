//! JWT access tokens at `serve`'s door: an issuer (the mock's authorization server, in a
//! process of its own) signs tokens, hostile ones included, and the gateway lets in exactly
//! those of that issuer, for this gateway, in time, signed by a key the issuer publishes; its
//! keys are fetched again on an unknown key id no more often than the bound, and follow a
//! rotation.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{
    issuer::{Doors, STATIC, base, now},
    raw::initialize,
};
use crate::common::LIMIT;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_tokens_of_the_issuer_for_this_gateway_in_time_and_signed_by_its_keys_get_in() {
    let doors = Doors::start(&[]).await;
    let signed = json!({});
    // Let in: RS256, PS256, ES256; `typ` at+jwt, JWT or none; within the 60 s leeway.
    let good = [
        (json!({}), json!({})),
        (json!({}), json!({"alg": "PS256"})),
        (json!({}), json!({"alg": "ES256"})),
        (json!({}), json!({"typ": "JWT"})),
        (json!({}), json!({"typ": null})),
        (json!({"exp": now() - 20}), signed.clone()),
        (
            json!({"aud": ["https://other.example", doors.gateway.url()]}),
            signed.clone(),
        ),
        (
            json!({"nbf": now() + 20, "iat": now() + 20}),
            signed.clone(),
        ),
    ];
    for (claims, how) in good {
        let token = doors.mint(claims.clone(), how.clone()).await;
        let (status, challenge) = doors.knock(&token).await;
        assert_eq!(status, StatusCode::OK, "{claims} {how}: {challenge}");
    }
    // Refused, each saying why in the challenge.
    let stranger_jwks = format!("{}/jwks", base(&doors.upstream));
    let bad = [
        (
            "another audience",
            json!({"aud": "http://127.0.0.1:1/mcp"}),
            signed.clone(),
            "not for this resource",
        ),
        (
            "no audience",
            json!({"aud": null}),
            signed.clone(),
            "lacks a required claim",
        ),
        (
            "another issuer",
            json!({"iss": "http://127.0.0.1:1"}),
            signed.clone(),
            "another issuer",
        ),
        (
            "expired",
            json!({"exp": now() - 3600}),
            signed.clone(),
            "expired",
        ),
        (
            "no exp",
            json!({"exp": null}),
            signed.clone(),
            "lacks a required claim",
        ),
        (
            "skew past the leeway, exp",
            json!({"exp": now() - 120}),
            signed.clone(),
            "expired",
        ),
        (
            "skew past the leeway, nbf",
            json!({"nbf": now() + 120}),
            signed.clone(),
            "not valid yet",
        ),
        (
            "skew past the leeway, iat",
            json!({"iat": now() + 120}),
            signed.clone(),
            "not valid yet",
        ),
        (
            "an unknown key",
            json!({}),
            json!({"key": "stranger"}),
            "not one of the issuer's",
        ),
        (
            "a kid naming a published key",
            json!({}),
            json!({"key": "stranger", "kid": "rsa-1"}),
            "does not verify",
        ),
        (
            "jku and x5u pointing elsewhere",
            json!({}),
            json!({"key": "stranger", "header": {"jku": stranger_jwks, "x5u": stranger_jwks}}),
            "not one of the issuer's",
        ),
        (
            "alg none",
            json!({}),
            json!({"alg": "none"}),
            "not a JWT this gateway reads",
        ),
        (
            "HS256 keyed with the RSA public key",
            json!({}),
            json!({"alg": "HS256"}),
            "algorithm is not accepted",
        ),
        (
            "another typ",
            json!({}),
            json!({"typ": "dpop+jwt"}),
            "typ is not at+jwt",
        ),
    ];
    for (what, claims, how, why) in bad {
        let token = doors.mint(claims, how).await;
        let (status, challenge) = doors.knock(&token).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{what}");
        assert!(
            challenge.contains(r#"error="invalid_token""#),
            "{what}: {challenge}"
        );
        assert!(challenge.contains(why), "{what}: {challenge}");
        assert!(
            challenge.contains("resource_metadata="),
            "{what}: {challenge}"
        );
    }
    // The static token still opens the door beside the JWTs.
    assert_eq!(doors.knock(STATIC).await.0, StatusCode::OK);
    assert_eq!(
        doors.knock("static-token-wrong").await.0,
        StatusCode::UNAUTHORIZED
    );
    doors.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_with_unknown_key_ids_fetch_the_keys_at_most_once_per_refetch_interval() {
    let doors = Doors::start(&["--jwks-refetch", "30s"]).await;
    let started = tokio::time::Instant::now();
    let good = doors.mint(json!({}), json!({})).await;
    assert_eq!(doors.knock(&good).await.0, StatusCode::OK);
    let mut knocks = 0;
    for index in 0..40 {
        let kid = format!("unknown-{index}");
        let token = doors
            .mint(json!({}), json!({"key": "stranger", "kid": kid}))
            .await;
        assert_eq!(doors.knock(&token).await.0, StatusCode::UNAUTHORIZED);
        knocks += 1;
    }
    let fetches = doors.fetches().await;
    // One fetch for the first token, then at most one per 30 s, however many unknown ids.
    let allowed = 1 + started.elapsed().as_secs() / 30 + 1;
    assert!(
        fetches <= allowed,
        "{fetches} fetches for {knocks} unknown key ids"
    );
    eprintln!("{knocks} tokens with unknown key ids: {fetches} fetches of the JWKS");
    doors.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_key_is_fetched_and_old_tokens_work_while_the_issuer_still_publishes_theirs() {
    // The JWKS named outright, not found through the metadata.
    let flags = ["--jwks-refetch", "200ms", "--jwt-jwks-url", "{issuer}/jwks"];
    let doors = Doors::start(&flags).await;
    let first = doors.mint(json!({}), json!({})).await;
    assert_eq!(doors.knock(&first).await.0, StatusCode::OK);
    // The issuer rotates and keeps the old key published: the new key is learnt, the old
    // token still works.
    let rotated = doors
        .issuer
        .admin("oauth/rotate", json!({"keep_previous": true}))
        .await;
    assert_eq!(rotated["rsa"], "rsa-2");
    let second = doors.mint(json!({}), json!({})).await;
    doors.until_let_in(&second).await;
    assert_eq!(
        doors.knock(&first).await.0,
        StatusCode::OK,
        "the old key is still published"
    );
    // It rotates again and drops what it published before: the newest key is learnt; a token
    // of a key no longer published is refused once the gateway has the new set.
    doors
        .issuer
        .admin("oauth/rotate", json!({"keep_previous": false}))
        .await;
    let third = doors.mint(json!({}), json!({})).await;
    doors.until_let_in(&third).await;
    let (status, challenge) = doors.knock(&second).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "a withdrawn key");
    assert!(challenge.contains("not one of the issuer's"), "{challenge}");
    assert_eq!(doors.knock(&third).await.0, StatusCode::OK);
    doors.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metadata_names_this_resource_and_its_issuer_and_a_401_points_at_it() {
    let doors = Doors::start(&[]).await;
    let http = &doors.raw.http;
    let wanted = format!(
        "{}/.well-known/oauth-protected-resource/mcp",
        doors.gateway.base
    );
    for url in [
        wanted.clone(),
        format!(
            "{}/.well-known/oauth-protected-resource",
            doors.gateway.base
        ),
    ] {
        let answer = tokio::time::timeout(LIMIT, http.get(&url).send())
            .await
            .expect("in time")
            .expect("answered");
        assert_eq!(answer.status(), StatusCode::OK, "{url}");
        let document: Value = answer.json().await.expect("JSON");
        assert_eq!(document["resource"], json!(doors.gateway.url()), "{url}");
        assert_eq!(
            document["authorization_servers"],
            json!([base(&doors.issuer)]),
            "{url}"
        );
        assert_eq!(
            document["bearer_methods_supported"],
            json!(["header"]),
            "{url}"
        );
    }
    let none = doors.raw.post(&initialize(1), &[]).await;
    assert_eq!(none.status(), StatusCode::UNAUTHORIZED);
    let challenge = none.headers().get("www-authenticate").expect("a challenge");
    let challenge = challenge.to_str().expect("text");
    assert!(challenge.starts_with("Bearer "), "{challenge}");
    assert!(
        challenge.contains(&format!(r#"resource_metadata="{wanted}""#)),
        "{challenge}"
    );
    assert!(
        !challenge.contains("error="),
        "no token, no error: {challenge}"
    );
    doors.gateway.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jwt_settings_out_of_bounds_are_refused_before_listening() {
    // A leeway over its cap; an issuer that is neither https nor loopback.
    for (issuer, leeway, said) in [
        ("http://127.0.0.1:9", Some("10m"), "leeway"),
        ("http://id.example.com", None, "https"),
    ] {
        let mut args = vec!["--jwt-issuer", issuer];
        if let Some(leeway) = leeway {
            args.extend(["--jwt-leeway", leeway]);
        }
        args.extend(["--stdio", "--", "true"]);
        let output = super::gateway::refused(&args).await;
        assert_eq!(output.status.code(), Some(2), "a usage error");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(said), "{stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_jwks_url_is_the_only_place_keys_come_from() {
    let doors = Doors::start(&["--jwt-jwks-url", "{issuer}/no-such-jwks"]).await;
    let token = doors.mint(json!({}), json!({})).await;
    let (status, challenge) = doors.knock(&token).await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "no keys where it was told to look"
    );
    assert!(challenge.contains("not one of the issuer's"), "{challenge}");
    assert_eq!(
        doors.fetches().await,
        0,
        "the metadata's jwks_uri was not asked"
    );
    doors.gateway.stop().await;
}
