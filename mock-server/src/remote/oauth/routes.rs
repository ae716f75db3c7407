//! The authorization server's routes on the mock's port (not behind the MCP gate: they are
//! not recorded, and no fault acts on them).

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::rejection::{FormRejection, JsonRejection, QueryRejection};
use axum::extract::{Query, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use serde_json::{Value, json};

use super::authority::{Authority, Resource};
use super::authorize::{AuthorizeParams, authorize};
use super::clients::{RegistrationError, RegistrationRequest};
use super::grant::TokenError;
use super::metadata;
use super::signer::{Mint, Signer};
use super::token::{TokenForm, token};

type Auth = State<Arc<Authority>>;

/// Discovery, `/register`, `/authorize` and `/token`, for a router of any state.
pub(crate) fn routes<S: Clone + Send + Sync + 'static>(authority: Arc<Authority>) -> Router<S> {
    let mut router =
        Router::new()
            .route(
                "/.well-known/oauth-authorization-server",
                get(|State(a): Auth| async move { Json(metadata::authorization_server(&a)) }),
            )
            .route(
                "/.well-known/oauth-protected-resource",
                get(|State(a): Auth| async move {
                    Json(metadata::protected_resource(&a, Resource::Mcp))
                }),
            )
            .route("/jwks", get(jwks_route))
            .route("/_mock/oauth/jwt", post(mint_route))
            .route("/_mock/oauth/rotate", post(rotate_route))
            .route(
                "/_mock/oauth/jwks-fetches",
                get(
                    |State(a): Auth| async move { keys(&a, |s| Ok(json!({"fetches": s.fetches}))) },
                ),
            )
            .route("/register", post(register))
            .route("/authorize", get(authorize_route))
            .route("/token", post(token_route));
    let mcp = authority.path(Resource::Mcp).to_owned();
    let sse = authority.path(Resource::Sse).to_owned();
    let mut resources = vec![(mcp.clone(), Resource::Mcp)];
    if sse != mcp {
        resources.push((sse, Resource::Sse));
    }
    for (path, resource) in resources {
        let handler =
            move |State(a): Auth| async move { Json(metadata::protected_resource(&a, resource)) };
        router = router.route(
            &format!("/.well-known/oauth-protected-resource{path}"),
            get(handler),
        );
    }
    router.with_state(authority)
}

async fn authorize_route(
    State(authority): Auth,
    query: Result<Query<AuthorizeParams>, QueryRejection>,
) -> Response {
    match query {
        Ok(Query(params)) => authorize(&authority, params),
        Err(rejection) => {
            let text = [(CONTENT_TYPE, "text/plain; charset=utf-8")];
            (
                StatusCode::BAD_REQUEST,
                text,
                format!("{}\n", rejection.body_text()),
            )
                .into_response()
        }
    }
}

async fn token_route(
    State(authority): Auth,
    headers: HeaderMap,
    form: Result<Form<TokenForm>, FormRejection>,
) -> Response {
    if authority.ledger().token_unavailable() {
        let body = serde_json::json!({
            "error": "temporarily_unavailable",
            "error_description": "the token endpoint fails on request (fail_token_requests)",
        });
        return (StatusCode::SERVICE_UNAVAILABLE, Json(body)).into_response();
    }
    match form {
        Ok(Form(form)) => token(&authority, &headers, form).await,
        Err(rejection) => TokenError::invalid_request(rejection.body_text()).into_response(),
    }
}

/// `POST /register` (RFC 7591): 201 with the new client, or 400 with the reason.
async fn register(
    State(authority): Auth,
    body: Result<Json<RegistrationRequest>, JsonRejection>,
) -> Response {
    let request = match body {
        Ok(Json(request)) => request,
        Err(rejection) => {
            let error = RegistrationError {
                error: "invalid_client_metadata",
                error_description: rejection.body_text(),
            };
            return (StatusCode::BAD_REQUEST, Json(error)).into_response();
        }
    };
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    match request.register(now) {
        Ok((client, registration)) => {
            let mut ledger = authority.ledger();
            ledger.register(registration.client_id.clone(), client);
            let registered = ledger.counters.registered;
            drop(ledger);
            tracing::debug!(registered, "oauth: client registered");
            (StatusCode::CREATED, Json(registration)).into_response()
        }
        Err(error) => {
            tracing::debug!(error = error.error, "oauth: registration refused");
            (StatusCode::BAD_REQUEST, Json(error)).into_response()
        }
    }
}

/// Runs `work` on the signing keys: 200 with its answer, or 400 with why not.
fn keys(
    authority: &Authority,
    work: impl FnOnce(&mut Signer) -> Result<Value, String>,
) -> Response {
    match authority.signer(work) {
        Ok(body) => Json(body).into_response(),
        Err(error) => (
            StatusCode::BAD_REQUEST,
            Json(json!({"ok": false, "error": error})),
        )
            .into_response(),
    }
}

/// `GET /jwks`: the published keys (counted).
async fn jwks_route(State(authority): Auth) -> Response {
    keys(&authority, |signer| {
        signer.fetches += 1;
        Ok(signer.jwks())
    })
}

/// `POST /_mock/oauth/jwt`: `{"token": "…"}` signed as the body asks (see `signer::Mint`).
async fn mint_route(State(authority): Auth, body: Result<Json<Mint>, JsonRejection>) -> Response {
    match body {
        Ok(Json(mint)) => keys(&authority, |s| {
            s.mint(mint).map(|token| json!({"token": token}))
        }),
        Err(rejection) => (StatusCode::BAD_REQUEST, rejection.body_text()).into_response(),
    }
}

/// `POST /_mock/oauth/rotate` `{"keep_previous": bool}`: the next keys become current.
async fn rotate_route(State(authority): Auth, body: Json<Value>) -> Response {
    let keep = body
        .get("keep_previous")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    keys(&authority, |signer| signer.rotate(keep))
}
