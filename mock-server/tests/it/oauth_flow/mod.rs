//! The OAuth flow by hand for `tests/it/oauth.rs`: registration, `/authorize` (redirects read,
//! not followed), `/token` and bearer MCP requests, all with plain reqwest.
#![allow(dead_code, unreachable_pub)]

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mcp_mock_server::{MockOptions, MockServer, MockTransport, OAuthOptions};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::common::within;
use crate::raw::{self, header};

/// The redirect URI every test client registers (nothing listens there: it is only read).
pub const REDIRECT: &str = "http://127.0.0.1:9/callback";
/// The PKCE code verifier of every flow here.
pub const VERIFIER: &str = "the-verifier-of-this-test-it-must-be-at-least-43-characters";

/// An in-process server in OAuth mode.
pub async fn start(transport: MockTransport, oauth: OAuthOptions) -> MockServer {
    let opts = MockOptions {
        transport,
        oauth: Some(oauth),
        ..MockOptions::default()
    };
    within("start", MockServer::start(opts))
        .await
        .expect("start")
}

/// A client that does not follow redirects (the `/authorize` answer is read, not followed).
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(0)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("reqwest client")
}

/// The S256 challenge of `verifier`, computed independently of the server.
pub fn challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// `pairs` form-encoded.
pub fn form<K: AsRef<str>, V: AsRef<str>>(pairs: &[(K, V)]) -> String {
    let mut form = form_urlencoded::Serializer::new(String::new());
    for (name, value) in pairs {
        form.append_pair(name.as_ref(), value.as_ref());
    }
    form.finish()
}

/// A GET that must answer 200 with JSON.
pub async fn get_json(url: &str) -> Value {
    let response = within(url, client().get(url).send()).await.expect("get");
    assert_eq!(response.status(), StatusCode::OK, "{url}");
    within("json body", response.json::<Value>())
        .await
        .expect("json")
}

/// `POST /register` with `body`: the status and JSON answer.
pub async fn register(server: &MockServer, body: Value) -> (StatusCode, Value) {
    let url = format!("{}/register", server.base_url());
    let response = within("register", client().post(url).json(&body).send())
        .await
        .expect("register");
    (
        response.status(),
        within("json body", response.json::<Value>())
            .await
            .expect("json"),
    )
}

/// Registers a public client redirecting to [`REDIRECT`]; returns its id.
pub async fn public_client(server: &MockServer) -> String {
    let body = json!({"redirect_uris": [REDIRECT], "client_name": "oauth test"});
    let (status, registered) = register(server, body).await;
    assert_eq!(status, StatusCode::CREATED, "{registered}");
    registered["client_id"]
        .as_str()
        .expect("client_id")
        .to_owned()
}

/// `GET /authorize`: the answer's status and its query pairs (from `Location`, if any).
pub async fn authorize<K: AsRef<str>, V: AsRef<str>>(
    server: &MockServer,
    query: &[(K, V)],
) -> (StatusCode, Vec<(String, String)>) {
    let url = format!("{}/authorize?{}", server.base_url(), form(query));
    let response = within("authorize", client().get(url).send())
        .await
        .expect("authorize");
    let status = response.status();
    let pairs = match header(&response, "location") {
        None => Vec::new(),
        Some(location) => {
            assert!(location.starts_with(REDIRECT), "{location}");
            let query = location.split_once('?').map_or("", |(_, q)| q);
            form_urlencoded::parse(query.as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect()
        }
    };
    (status, pairs)
}

/// A code for `client_id` with the test's verifier and `scope`.
pub async fn code(server: &MockServer, client_id: &str, scope: Option<&str>) -> String {
    let challenge = challenge(VERIFIER);
    let mut query = vec![
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", REDIRECT),
        ("code_challenge", challenge.as_str()),
        ("code_challenge_method", "S256"),
        ("state", "st&te=1"),
    ];
    query.extend(scope.map(|scope| ("scope", scope)));
    let (status, pairs) = authorize(server, &query).await;
    assert_eq!(status, StatusCode::FOUND);
    let value = |name: &str| {
        let pair = pairs.iter().find(|(k, _)| k == name);
        pair.map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("{name} in {pairs:?}"))
    };
    assert_eq!(value("state"), "st&te=1");
    assert_eq!(value("iss"), server.base_url());
    value("code")
}

/// `POST /token` with `pairs`: the status and JSON answer.
pub async fn token(server: &MockServer, pairs: &[(&str, &str)]) -> (StatusCode, Value) {
    let request = client().post(format!("{}/token", server.base_url()));
    token_with(request, pairs).await
}

/// `request` (a POST to `/token`, perhaps with Basic credentials) carrying the form `pairs`.
pub async fn token_with(
    request: reqwest::RequestBuilder,
    pairs: &[(&str, &str)],
) -> (StatusCode, Value) {
    let request = request
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(pairs));
    let response = within("token", request.send()).await.expect("token");
    (
        response.status(),
        within("json body", response.json::<Value>())
            .await
            .expect("json"),
    )
}

/// Exchanges a fresh code of a new public client: (client id, token answer).
pub async fn login(server: &MockServer, scope: Option<&str>) -> (String, Value) {
    let client_id = public_client(server).await;
    let code = code(server, &client_id, scope).await;
    let (status, tokens) = token(
        server,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("code_verifier", VERIFIER),
            ("redirect_uri", REDIRECT),
            ("client_id", &client_id),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    (client_id, tokens)
}

/// A `refresh_token` grant for the public client `client_id`.
pub async fn refresh(
    server: &MockServer,
    client_id: &str,
    refresh_token: &str,
) -> (StatusCode, Value) {
    let pairs = [
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh_token),
        ("client_id", client_id),
    ];
    token(server, &pairs).await
}

/// A string field of a JSON answer.
pub fn field<'a>(value: &'a Value, name: &str) -> &'a str {
    value[name]
        .as_str()
        .unwrap_or_else(|| panic!("{name} in {value}"))
}

/// A Streamable HTTP POST with an optional bearer token and session id.
pub async fn mcp(
    server: &MockServer,
    token: Option<&str>,
    session: Option<&str>,
    body: &Value,
) -> reqwest::Response {
    let mut request = raw::post(&server.http_url(), session, body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    within("mcp post", request.send()).await.expect("mcp post")
}

/// The `WWW-Authenticate` header, which must be there.
pub fn challenge_of(response: &reqwest::Response) -> String {
    header(response, "www-authenticate")
        .expect("WWW-Authenticate")
        .to_owned()
}

/// `POST /_mock/oauth/<route>`, which must answer 200.
pub async fn admin_post(server: &MockServer, route: &str) -> Value {
    admin_post_json(server, route, &serde_json::json!({})).await
}

/// `POST /_mock/oauth/<route>` with a JSON body, which must answer 200.
pub async fn admin_post_json(server: &MockServer, route: &str, body: &Value) -> Value {
    let url = format!("{}/_mock/oauth/{route}", server.base_url());
    let response = within(route, client().post(url).json(body).send())
        .await
        .expect("admin");
    assert_eq!(response.status(), StatusCode::OK);
    within("json body", response.json::<Value>())
        .await
        .expect("json")
}
