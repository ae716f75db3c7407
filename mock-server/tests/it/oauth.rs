//! OAuth mode, in-process and as a binary, driven with plain HTTP: discovery, dynamic client
//! registration, `/authorize` + PKCE, `/token` (code, refresh rotation, client credentials),
//! 401/403 on the MCP routes of both transports and both protocol eras, the admin controls and
//! the counters.

use crate::common;
use crate::oauth_flow;
use crate::raw;

use std::process::Stdio;
use std::time::Duration;

use common::{sse_events, within};
use futures::StreamExt;
use mcp_mock_server::{IssuedTokens, MockTransport, OAuthOptions};
use oauth_flow::{
    REDIRECT, VERIFIER, admin_post, admin_post_json, authorize, challenge, challenge_of, client,
    code, field, get_json, login, mcp, public_client, refresh, register, start, token, token_with,
};
use raw::{INITIALIZED, call, first_message, header, initialize, request};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

#[tokio::test]
async fn discovery_documents_describe_the_resource_and_the_authorization_server() {
    let server = start(MockTransport::Both, OAuthOptions::default()).await;
    let base = server.base_url();
    let scopes = json!(["mcp:read", "mcp:admin"]);
    for (path, resource) in [("/mcp", "/mcp"), ("/sse", "/sse"), ("", "/mcp")] {
        let url = format!("{base}/.well-known/oauth-protected-resource{path}");
        let document = get_json(&url).await;
        assert_eq!(document["resource"], json!(format!("{base}{resource}")));
        assert_eq!(document["authorization_servers"], json!([base]));
        assert_eq!(document["scopes_supported"], scopes);
        assert_eq!(document["bearer_methods_supported"], json!(["header"]));
    }
    let metadata = get_json(&format!("{base}/.well-known/oauth-authorization-server")).await;
    assert_eq!(metadata["issuer"], json!(base));
    for (name, path) in [
        ("authorization_endpoint", "/authorize"),
        ("token_endpoint", "/token"),
        ("registration_endpoint", "/register"),
    ] {
        assert_eq!(metadata[name], json!(format!("{base}{path}")));
    }
    assert_eq!(metadata["response_types_supported"], json!(["code"]));
    let grants = json!(["authorization_code", "refresh_token", "client_credentials"]);
    assert_eq!(metadata["grant_types_supported"], grants);
    assert_eq!(
        metadata["code_challenge_methods_supported"],
        json!(["S256"])
    );
    let methods = json!(["none", "client_secret_basic", "client_secret_post"]);
    assert_eq!(metadata["token_endpoint_auth_methods_supported"], methods);
    assert_eq!(metadata["scopes_supported"], scopes);
    assert_eq!(
        metadata["authorization_response_iss_parameter_supported"],
        json!(true)
    );
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn registration_gives_public_and_confidential_clients() {
    let server = start(MockTransport::Http, OAuthOptions::default()).await;
    let body = json!({
        "redirect_uris": [REDIRECT],
        "grant_types": ["authorization_code", "refresh_token"],
        "client_name": "public one",
    });
    let (status, public) = register(&server, body).await;
    assert_eq!(status, StatusCode::CREATED);
    assert!(!field(&public, "client_id").is_empty());
    assert_eq!(public["token_endpoint_auth_method"], json!("none"));
    assert_eq!(public["client_secret"], Value::Null);
    assert_eq!(public["redirect_uris"], json!([REDIRECT]));
    assert_eq!(
        public["grant_types"],
        json!(["authorization_code", "refresh_token"])
    );
    assert_eq!(public["client_name"], json!("public one"));

    let body =
        json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "client_secret_basic"});
    let (status, confidential) = register(&server, body).await;
    assert_eq!(status, StatusCode::CREATED);
    assert!(!field(&confidential, "client_secret").is_empty());
    assert_ne!(confidential["client_id"], public["client_id"]);

    for (body, error) in [
        (
            json!({"redirect_uris": ["https://example.com/cb"]}),
            "invalid_redirect_uri",
        ),
        (json!({"redirect_uris": []}), "invalid_redirect_uri"),
        (
            json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "private_key_jwt"}),
            "invalid_client_metadata",
        ),
    ] {
        let (status, refused) = register(&server, body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(refused["error"], json!(error));
    }
    let stats = server.faults().oauth_stats().expect("oauth mode");
    assert_eq!(stats.registered, 2);
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn authorize_refuses_bad_requests_with_400_and_no_redirect() {
    let opts = OAuthOptions {
        clients: vec![("pre".to_owned(), None)],
        ..OAuthOptions::default()
    };
    let server = start(MockTransport::Http, opts).await;
    let client_id = public_client(&server).await;
    let challenge = challenge(VERIFIER);
    let good = [
        ("response_type", "code"),
        ("client_id", client_id.as_str()),
        ("redirect_uri", REDIRECT),
        ("code_challenge", challenge.as_str()),
        ("code_challenge_method", "S256"),
    ];
    // `good` with `name` set to `value` (`None` removes it).
    let variant = |changes: &[(&str, Option<&str>)]| {
        let mut query: Vec<(&str, &str)> = good.to_vec();
        for (name, value) in changes {
            query.retain(|(k, _)| k != name);
            query.extend(value.map(|value| (*name, value)));
        }
        query
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect::<Vec<_>>()
    };
    for changes in [
        &[("client_id", Some("nobody"))][..],
        &[("client_id", None)],
        &[("redirect_uri", Some("http://127.0.0.1:10/other"))],
        &[("code_challenge_method", Some("plain"))],
        &[("code_challenge_method", None)],
        &[("code_challenge", None)],
        &[("code_challenge", Some("short"))],
        &[("response_type", Some("token"))],
        &[("scope", Some("root"))],
        &[
            ("client_id", Some("pre")),
            ("redirect_uri", Some("https://127.0.0.1/cb")),
        ],
        &[
            ("client_id", Some("pre")),
            ("redirect_uri", Some("http://example.com/cb")),
        ],
    ] {
        let query = variant(changes);
        let (status, pairs) = authorize(&server, &query).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{changes:?}");
        assert!(pairs.is_empty(), "{changes:?}");
    }
    // A pre-registered client may use any loopback redirect.
    let pre = variant(&[("client_id", Some("pre")), ("redirect_uri", Some(REDIRECT))]);
    let (status, pairs) = authorize(&server, &pre).await;
    assert_eq!(status, StatusCode::FOUND);
    assert!(pairs.iter().any(|(k, _)| k == "code"), "{pairs:?}");
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn a_pkce_code_buys_a_token_that_the_mcp_route_accepts() {
    let server = start(MockTransport::Http, OAuthOptions::default()).await;
    let client_id = public_client(&server).await;
    let wrong = code(&server, &client_id, None).await;
    let mut exchange = vec![
        ("grant_type", "authorization_code"),
        ("code", wrong.as_str()),
        (
            "code_verifier",
            "a-wrong-verifier-that-is-long-enough-for-pkce-rules-000",
        ),
        ("redirect_uri", REDIRECT),
        ("client_id", client_id.as_str()),
    ];
    let (status, refused) = token(&server, &exchange).await;
    assert_eq!(
        (status, &refused["error"]),
        (StatusCode::BAD_REQUEST, &json!("invalid_grant"))
    );
    // The code was spent by the failed attempt.
    exchange[2].1 = VERIFIER;
    let (status, refused) = token(&server, &exchange).await;
    assert_eq!(
        (status, &refused["error"]),
        (StatusCode::BAD_REQUEST, &json!("invalid_grant"))
    );

    let right = code(&server, &client_id, None).await;
    exchange[1].1 = &right;
    exchange[3].1 = "http://127.0.0.1:9/elsewhere";
    let (status, refused) = token(&server, &exchange).await;
    assert_eq!(
        (status, &refused["error"]),
        (StatusCode::BAD_REQUEST, &json!("invalid_grant"))
    );

    let right = code(&server, &client_id, None).await;
    exchange[1].1 = &right;
    exchange[3].1 = REDIRECT;
    let (status, tokens) = token(&server, &exchange).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    assert_eq!(tokens["token_type"], json!("Bearer"));
    assert_eq!(tokens["expires_in"], json!(3600));
    assert_eq!(tokens["scope"], json!("mcp:read"));
    assert!(!field(&tokens, "refresh_token").is_empty());
    let access = field(&tokens, "access_token");

    let metadata = format!(
        "{}/.well-known/oauth-protected-resource/mcp",
        server.base_url()
    );
    let anonymous = mcp(&server, None, None, &initialize(json!(1))).await;
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    let expected = format!("Bearer scope=\"mcp:read\", resource_metadata=\"{metadata}\"");
    assert_eq!(challenge_of(&anonymous), expected);
    let forged = mcp(&server, Some("forged"), None, &initialize(json!(1))).await;
    assert_eq!(forged.status(), StatusCode::UNAUTHORIZED);
    let expected = format!(
        "Bearer error=\"invalid_token\", scope=\"mcp:read\", resource_metadata=\"{metadata}\""
    );
    assert_eq!(challenge_of(&forged), expected);

    let accepted = mcp(&server, Some(access), None, &initialize(json!(1))).await;
    assert_eq!(accepted.status(), StatusCode::OK);
    assert!(header(&accepted, "mcp-session-id").is_some());
    let reply = first_message(accepted).await;
    assert_eq!(
        reply["result"]["serverInfo"]["name"],
        json!("mcp-mock-server")
    );

    let stats = server.faults().oauth_stats().expect("oauth mode");
    assert_eq!(stats.issued.authorization_code, 1);
    assert_eq!((stats.invalid_grant, stats.unauthorized), (3, 2));
    assert_eq!(
        (stats.valid_access_tokens, stats.valid_refresh_tokens),
        (1, 1)
    );
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn a_2026_discover_needs_a_token_too() {
    let server = start(MockTransport::Http, OAuthOptions::default()).await;
    let (_, tokens) = login(&server, None).await;
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let discover = request(json!(1), "server/discover", json!({"_meta": meta}));
    // A 2026-07-28 request carries its version (and method) in headers too.
    let send = |token: Option<&str>| {
        let request = raw::post(&server.http_url(), None, &discover)
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "server/discover");
        let request = match token {
            Some(token) => request.bearer_auth(token),
            None => request,
        };
        within("server/discover", request.send())
    };
    let refused = send(None).await.expect("answer");
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    assert!(challenge_of(&refused).contains("resource_metadata="));
    let served = send(Some(field(&tokens, "access_token")))
        .await
        .expect("answer");
    assert_eq!(served.status(), StatusCode::OK);
    let reply = first_message(served).await;
    assert_eq!(reply["id"], json!(1), "{reply}");
    assert!(reply["result"]["supportedVersions"].is_array(), "{reply}");
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn refresh_tokens_rotate_and_a_spent_one_is_invalid_grant() {
    let server = start(MockTransport::Http, OAuthOptions::default()).await;
    let (client_id, first) = login(&server, Some("mcp:read mcp:admin")).await;
    let old = field(&first, "refresh_token");
    let (status, second) = refresh(&server, &client_id, old).await;
    assert_eq!(status, StatusCode::OK, "{second}");
    assert_eq!(second["scope"], json!("mcp:read mcp:admin"));
    assert_ne!(second["refresh_token"], first["refresh_token"]);
    assert_ne!(second["access_token"], first["access_token"]);

    let (status, reused) = refresh(&server, &client_id, old).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(reused["error"], json!("invalid_grant"));
    // Another client cannot use this client's refresh token either.
    let other = public_client(&server).await;
    let (_, stolen) = refresh(&server, &other, field(&second, "refresh_token")).await;
    assert_eq!(stolen["error"], json!("invalid_grant"));
    let (status, third) = refresh(&server, &client_id, field(&second, "refresh_token")).await;
    assert_eq!(status, StatusCode::OK, "{third}");

    let stats = server.faults().oauth_stats().expect("oauth mode");
    let issued = IssuedTokens {
        authorization_code: 1,
        refresh_token: 2,
        client_credentials: 0,
    };
    assert_eq!(stats.issued, issued);
    assert_eq!((stats.refreshed, stats.invalid_grant), (2, 2));
    assert_eq!(
        (stats.valid_access_tokens, stats.valid_refresh_tokens),
        (3, 1)
    );
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn overlapping_refreshes_spend_the_token_once() {
    let opts = OAuthOptions {
        refresh_delay: Duration::from_millis(300),
        ..OAuthOptions::default()
    };
    let server = start(MockTransport::Http, opts).await;
    let (client_id, tokens) = login(&server, None).await;
    let old = field(&tokens, "refresh_token");
    let (a, b) = tokio::join!(
        refresh(&server, &client_id, old),
        refresh(&server, &client_id, old)
    );
    let mut statuses = [a.0, b.0];
    statuses.sort();
    assert_eq!(
        statuses,
        [StatusCode::OK, StatusCode::BAD_REQUEST],
        "{a:?} {b:?}"
    );
    let stats = server.faults().oauth_stats().expect("oauth mode");
    assert_eq!((stats.refreshed, stats.invalid_grant), (1, 1));
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn an_expired_access_token_does_not_end_the_session() {
    let server = start(MockTransport::Http, OAuthOptions::default()).await;
    let (client_id, tokens) = login(&server, None).await;
    let access = field(&tokens, "access_token");
    let init = mcp(&server, Some(access), None, &initialize(json!(1))).await;
    assert_eq!(init.status(), StatusCode::OK);
    let session = header(&init, "mcp-session-id").expect("session").to_owned();
    drop(init);
    let initialized = serde_json::from_str(INITIALIZED).expect("json");
    let sent = mcp(&server, Some(access), Some(&session), &initialized).await;
    assert!(sent.status().is_success());

    assert_eq!(
        admin_post(&server, "expire-access").await["expired"],
        json!(1)
    );
    let list = request(json!(2), "tools/list", json!({}));
    let refused = mcp(&server, Some(access), Some(&session), &list).await;
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    assert!(challenge_of(&refused).starts_with("Bearer error=\"invalid_token\""));

    let (status, fresh) = refresh(&server, &client_id, field(&tokens, "refresh_token")).await;
    assert_eq!(status, StatusCode::OK);
    let listed = mcp(
        &server,
        Some(field(&fresh, "access_token")),
        Some(&session),
        &list,
    )
    .await;
    assert_eq!(listed.status(), StatusCode::OK);
    let reply = first_message(listed).await;
    assert_eq!(reply["id"], json!(2), "{reply}");
    assert!(reply["result"]["tools"].is_array(), "{reply}");
    assert_eq!(server.faults().state().await.sessions, 1);
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn revoked_refresh_tokens_are_invalid_grant() {
    let server = start(MockTransport::Http, OAuthOptions::default()).await;
    let (client_id, tokens) = login(&server, None).await;
    assert_eq!(
        admin_post(&server, "revoke-refresh").await["revoked"],
        json!(1)
    );
    let (status, refused) = refresh(&server, &client_id, field(&tokens, "refresh_token")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(refused["error"], json!("invalid_grant"));
    // The access token lives on until it expires.
    let init = mcp(
        &server,
        Some(field(&tokens, "access_token")),
        None,
        &initialize(json!(1)),
    )
    .await;
    assert_eq!(init.status(), StatusCode::OK);
    // The in-process controls do the same.
    let (_, again) = login(&server, None).await;
    assert_eq!(server.faults().revoke_refresh_tokens(), 1);
    assert_eq!(server.faults().expire_access_tokens(), 2);
    let (_, refused) = refresh(&server, &client_id, field(&again, "refresh_token")).await;
    assert_eq!(refused["error"], json!("invalid_grant"));
    within("shutdown", server.shutdown()).await;
}

/// `fail_token_requests`: the authorization server briefly down. The next N `/token` requests
/// answer 503 `temporarily_unavailable` (the refresh token is not spent by them), then it
/// answers again.
#[tokio::test]
async fn the_token_endpoint_fails_on_request_and_recovers() {
    let server = start(MockTransport::Http, OAuthOptions::default()).await;
    let (client_id, tokens) = login(&server, None).await;
    let refresh_token = field(&tokens, "refresh_token");
    assert_eq!(server.faults().fail_token_requests(2), 0);
    for _ in 0..2 {
        let (status, down) = refresh(&server, &client_id, refresh_token).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{down}");
        assert_eq!(down["error"], json!("temporarily_unavailable"));
    }
    let (status, fresh) = refresh(&server, &client_id, refresh_token).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "the refresh token was not spent: {fresh}"
    );
    // The admin route does the same, and says how many were still to fail.
    let body = json!({ "count": 3 });
    assert_eq!(
        admin_post_json(&server, "token-outage", &body).await["previous"],
        json!(0)
    );
    assert_eq!(server.faults().fail_token_requests(0), 3);
    let (status, _) = refresh(&server, &client_id, field(&fresh, "refresh_token")).await;
    assert_eq!(status, StatusCode::OK);
    let stats = server.faults().oauth_stats().expect("oauth mode");
    assert_eq!((stats.token_unavailable, stats.refreshed), (2, 2));
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn the_step_up_tool_needs_its_scope() {
    let opts = OAuthOptions {
        step_up: Some(("add".to_owned(), "mcp:admin".to_owned())),
        ..OAuthOptions::default()
    };
    let server = start(MockTransport::Http, opts).await;
    let (_, reader) = login(&server, None).await;
    let access = field(&reader, "access_token");
    let add = call(3, "add", json!({"a": 1, "b": 2}));
    let refused = mcp(&server, Some(access), None, &add).await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    let metadata = format!(
        "{}/.well-known/oauth-protected-resource/mcp",
        server.base_url()
    );
    let expected = format!(
        "Bearer error=\"insufficient_scope\", scope=\"mcp:read mcp:admin\", resource_metadata=\"{metadata}\""
    );
    assert_eq!(challenge_of(&refused), expected);
    // The same token still reaches the server for everything else.
    let init = mcp(&server, Some(access), None, &initialize(json!(1))).await;
    assert_eq!(init.status(), StatusCode::OK);

    let (_, admin) = login(&server, Some("mcp:read mcp:admin")).await;
    let admin = field(&admin, "access_token");
    let init = mcp(&server, Some(admin), None, &initialize(json!(1))).await;
    let session = header(&init, "mcp-session-id").expect("session").to_owned();
    drop(init);
    let initialized = serde_json::from_str(INITIALIZED).expect("json");
    let _ = mcp(&server, Some(admin), Some(&session), &initialized).await;
    let added = mcp(&server, Some(admin), Some(&session), &add).await;
    assert_eq!(added.status(), StatusCode::OK);
    let reply = first_message(added).await;
    assert_eq!(reply["result"]["content"][0]["text"], json!("3"), "{reply}");

    let stats = server.faults().oauth_stats().expect("oauth mode");
    assert_eq!((stats.forbidden, stats.unauthorized), (1, 0));
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn client_credentials_serve_preregistered_confidential_clients() {
    let opts = OAuthOptions {
        clients: vec![
            ("svc".to_owned(), Some("s3cret".to_owned())),
            ("cli".to_owned(), None),
        ],
        ..OAuthOptions::default()
    };
    let server = start(MockTransport::Http, opts).await;
    let url = format!("{}/token", server.base_url());
    let grant = [("grant_type", "client_credentials")];
    let basic = client().post(&url).basic_auth("svc", Some("s3cret"));
    let (status, tokens) = token_with(basic, &grant).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    assert_eq!(tokens["scope"], json!("mcp:read"));
    assert_eq!(tokens["refresh_token"], Value::Null);
    let init = mcp(
        &server,
        Some(field(&tokens, "access_token")),
        None,
        &initialize(json!(1)),
    )
    .await;
    assert_eq!(init.status(), StatusCode::OK);

    let post = [
        ("grant_type", "client_credentials"),
        ("client_id", "svc"),
        ("client_secret", "s3cret"),
        ("scope", "mcp:admin"),
    ];
    let (status, tokens) = token(&server, &post).await;
    assert_eq!(
        (status, &tokens["scope"]),
        (StatusCode::OK, &json!("mcp:admin"))
    );

    let wrong = client().post(&url).basic_auth("svc", Some("guess"));
    let (status, refused) = token_with(wrong, &grant).await;
    assert_eq!(
        (status, &refused["error"]),
        (StatusCode::UNAUTHORIZED, &json!("invalid_client"))
    );
    let public = [("grant_type", "client_credentials"), ("client_id", "cli")];
    let (status, refused) = token(&server, &public).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(refused["error"], json!("unauthorized_client"));
    let (status, refused) =
        token(&server, &[("grant_type", "password"), ("client_id", "cli")]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(refused["error"], json!("unsupported_grant_type"));

    let stats = server.faults().oauth_stats().expect("oauth mode");
    assert_eq!(stats.issued.client_credentials, 2);
    assert_eq!(
        (stats.valid_access_tokens, stats.valid_refresh_tokens),
        (2, 0)
    );
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn legacy_sse_needs_a_token_and_keeps_its_session_across_expiry() {
    let opts = OAuthOptions {
        step_up: Some(("add".to_owned(), "mcp:admin".to_owned())),
        ..OAuthOptions::default()
    };
    let server = start(MockTransport::Sse, opts).await;
    let metadata = format!(
        "{}/.well-known/oauth-protected-resource/sse",
        server.base_url()
    );
    let refused = within("GET /sse", client().get(server.sse_url()).send())
        .await
        .expect("get");
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    let expected = format!("Bearer scope=\"mcp:read\", resource_metadata=\"{metadata}\"");
    assert_eq!(challenge_of(&refused), expected);

    let (client_id, tokens) = login(&server, None).await;
    let access = field(&tokens, "access_token").to_owned();
    let stream = client().get(server.sse_url()).bearer_auth(&access).send();
    let stream = within("GET /sse", stream).await.expect("get");
    assert_eq!(stream.status(), StatusCode::OK);
    let mut events = sse_events(stream);
    let endpoint = within("endpoint", events.next()).await.expect("endpoint");
    let url = format!("{}{}", server.base_url(), endpoint.data);
    let post = |token: Option<&str>, body: String| {
        let request = client().post(&url).body(body);
        let request = match token {
            Some(token) => request.bearer_auth(token),
            None => request,
        };
        within("POST /message", request.send())
    };
    let anonymous = post(None, initialize(json!(1)).to_string())
        .await
        .expect("post");
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    assert!(challenge_of(&anonymous).ends_with(&format!("resource_metadata=\"{metadata}\"")));
    let accepted = post(Some(&access), initialize(json!(1)).to_string())
        .await
        .expect("post");
    assert_eq!(accepted.status(), StatusCode::ACCEPTED);
    let reply = within("reply", events.next()).await.expect("reply");
    assert_eq!(
        serde_json::from_str::<Value>(&reply.data).expect("json")["id"],
        json!(1)
    );
    let sent = post(Some(&access), INITIALIZED.to_owned())
        .await
        .expect("post");
    assert_eq!(sent.status(), StatusCode::ACCEPTED);

    let forbidden = post(
        Some(&access),
        call(2, "add", json!({"a": 1, "b": 1})).to_string(),
    );
    let forbidden = forbidden.await.expect("post");
    assert_eq!(forbidden.status(), StatusCode::FORBIDDEN);
    assert!(challenge_of(&forbidden).contains("error=\"insufficient_scope\""));

    server.faults().expire_access_tokens();
    let list = request(json!(3), "tools/list", json!({})).to_string();
    let expired = post(Some(&access), list.clone()).await.expect("post");
    assert_eq!(expired.status(), StatusCode::UNAUTHORIZED);
    let (_, fresh) = refresh(&server, &client_id, field(&tokens, "refresh_token")).await;
    let listed = post(Some(field(&fresh, "access_token")), list)
        .await
        .expect("post");
    assert_eq!(listed.status(), StatusCode::ACCEPTED);
    let reply = within("tools/list reply", events.next())
        .await
        .expect("reply");
    let reply: Value = serde_json::from_str(&reply.data).expect("json");
    assert_eq!(reply["id"], json!(3), "{reply}");
    assert!(reply["result"]["tools"].is_array(), "{reply}");
    within("shutdown", server.shutdown()).await;
}

#[tokio::test]
async fn the_admin_routes_report_the_same_counters_as_the_handle() {
    let server = start(MockTransport::Http, OAuthOptions::default()).await;
    let (client_id, tokens) = login(&server, None).await;
    let _ = refresh(&server, &client_id, field(&tokens, "refresh_token")).await;
    let _ = refresh(&server, &client_id, field(&tokens, "refresh_token")).await;
    let _ = mcp(&server, None, None, &initialize(json!(1))).await;
    let url = format!("{}/_mock/oauth/stats", server.base_url());
    let over_http = get_json(&url).await;
    let stats = server.faults().oauth_stats().expect("oauth mode");
    assert_eq!(over_http, serde_json::to_value(stats).expect("json"));
    assert_eq!(
        over_http,
        json!({
            "issued": {"authorization_code": 1, "refresh_token": 1, "client_credentials": 0},
            "refreshed": 1,
            "invalid_grant": 1,
            "token_unavailable": 0,
            "unauthorized": 1,
            "forbidden": 0,
            "registered": 1,
            "valid_access_tokens": 2,
            "valid_refresh_tokens": 1,
        })
    );
    within("shutdown", server.shutdown()).await;

    // Without OAuth mode the routes refuse and the handle reports nothing.
    let plain = raw::start(MockTransport::Http).await;
    assert!(plain.faults().oauth_stats().is_none());
    assert_eq!(plain.faults().expire_access_tokens(), 0);
    let (status, body) = raw::admin(&plain, "oauth/expire-access", json!({})).await;
    assert_eq!(
        (status, &body["ok"]),
        (StatusCode::BAD_REQUEST, &json!(false))
    );
    let token_route = client().post(format!("{}/token", plain.base_url())).send();
    let token_route = within("token", token_route).await.expect("answer");
    assert_eq!(token_route.status(), StatusCode::NOT_FOUND);
    within("shutdown", plain.shutdown()).await;
}

#[tokio::test]
async fn the_binary_takes_the_oauth_flags() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-mock-server"))
        .args([
            "--transport",
            "http",
            "--oauth",
            "--oauth-client",
            "svc:s3cret",
            "--oauth-access-ttl",
            "60",
            "--oauth-step-up",
            "add:mcp:write",
            "--oauth-refresh-delay-ms",
            "10",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn mock server");
    let stdout = child.stdout.take().expect("stdout");
    let line = within("LISTENING", BufReader::new(stdout).lines().next_line())
        .await
        .expect("read")
        .expect("a line");
    let addr = line.strip_prefix("LISTENING ").expect("LISTENING line");
    let base = format!("http://{addr}");
    let metadata = get_json(&format!("{base}/.well-known/oauth-authorization-server")).await;
    assert_eq!(
        metadata["scopes_supported"],
        json!(["mcp:read", "mcp:admin", "mcp:write"])
    );
    let request = client()
        .post(format!("{base}/token"))
        .basic_auth("svc", Some("s3cret"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("grant_type=client_credentials");
    let answer = within("token", request.send()).await.expect("token");
    assert_eq!(answer.status(), StatusCode::OK);
    let tokens: Value = within("json body", answer.json()).await.expect("json");
    assert_eq!(tokens["expires_in"], json!(60));
    let anonymous = within(
        "mcp",
        raw::post(&format!("{base}/mcp"), None, &initialize(json!(1))).send(),
    )
    .await
    .expect("post");
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    child.start_kill().expect("SIGKILL");
    within("killed", child.wait()).await.expect("wait");
}
