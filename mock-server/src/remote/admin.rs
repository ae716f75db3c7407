//! `/_mock/*`: the fault controls over HTTP, for a mock server running as a separate process.
//! Each route maps onto one [`Faults`] method and answers 200 with a small JSON object, or 400
//! with `{"ok": false, "error": …}` when the method refuses the setting (or, for
//! `/_mock/oauth/*`, when OAuth mode is off).

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

use super::faults::Faults;
use super::report::{MockState, RecordedRequest};
use super::state::ServerState;
use super::status::{InvalidFault, StatusFault};
use crate::set_tools::SetTools;

type Admin = State<Arc<ServerState>>;

fn faults(State(state): Admin) -> Faults {
    Faults { state }
}

fn ok() -> Json<Value> {
    Json(json!({"ok": true}))
}

fn checked(result: Result<(), InvalidFault>) -> (StatusCode, Json<Value>) {
    match result {
        Ok(()) => (StatusCode::OK, ok()),
        Err(error) => {
            let body = json!({"ok": false, "error": error.to_string()});
            (StatusCode::BAD_REQUEST, Json(body))
        }
    }
}

/// The answer of `/_mock/oauth/*` when OAuth mode is off.
fn oauth_off() -> (StatusCode, Json<Value>) {
    let body = json!({"ok": false, "error": "oauth mode is off"});
    (StatusCode::BAD_REQUEST, Json(body))
}

/// `/_mock/oauth/*`: expire access tokens, revoke refresh tokens, fail the token endpoint, read
/// the counters.
fn oauth_routes() -> Router<Arc<ServerState>> {
    Router::new()
        .route(
            "/_mock/oauth/expire-access",
            post(|s: Admin| async move {
                if s.0.oauth.is_none() {
                    return oauth_off();
                }
                let expired = faults(s).expire_access_tokens();
                (
                    StatusCode::OK,
                    Json(json!({"ok": true, "expired": expired})),
                )
            }),
        )
        .route(
            "/_mock/oauth/revoke-refresh",
            post(|s: Admin| async move {
                if s.0.oauth.is_none() {
                    return oauth_off();
                }
                let revoked = faults(s).revoke_refresh_tokens();
                (
                    StatusCode::OK,
                    Json(json!({"ok": true, "revoked": revoked})),
                )
            }),
        )
        .route(
            "/_mock/oauth/token-outage",
            post(|s: Admin, Json(body): Json<Count>| async move {
                if s.0.oauth.is_none() {
                    return oauth_off();
                }
                let pending = faults(s).fail_token_requests(body.count);
                (
                    StatusCode::OK,
                    Json(json!({"ok": true, "previous": pending})),
                )
            }),
        )
        .route(
            "/_mock/oauth/stats",
            get(|s: Admin| async move {
                match faults(s).oauth_stats() {
                    Some(stats) => (StatusCode::OK, Json(json!(stats))),
                    None => oauth_off(),
                }
            }),
        )
}

#[derive(Deserialize)]
struct Count {
    count: u64,
}

#[derive(Deserialize)]
struct On {
    on: bool,
}

#[derive(Deserialize)]
struct Graceful {
    graceful: bool,
}

#[derive(Deserialize)]
struct Ms {
    ms: u64,
}

#[derive(Deserialize)]
struct Endpoint {
    endpoint: Option<String>,
}

#[derive(Deserialize)]
struct Bytes {
    bytes: usize,
}

#[derive(Deserialize)]
struct Location {
    location: Option<String>,
}

/// The admin routes, to be merged into the server's router.
pub(crate) fn routes() -> Router<Arc<ServerState>> {
    transport_routes()
        .merge(server_routes())
        .merge(record_routes())
        .merge(oauth_routes())
}

/// Faults of the transports: hang, streams, sessions, delays, legacy SSE events.
fn transport_routes() -> Router<Arc<ServerState>> {
    Router::new()
        .route(
            "/_mock/hang",
            post(|s: Admin| async move {
                faults(s).hang();
                ok()
            }),
        )
        .route(
            "/_mock/unhang",
            post(|s: Admin| async move {
                faults(s).unhang();
                ok()
            }),
        )
        .route(
            "/_mock/drop-streams",
            post(|s: Admin| async move {
                faults(s).drop_streams().await;
                ok()
            }),
        )
        .route(
            "/_mock/cut-streams",
            post(|s: Admin| async move {
                faults(s).cut_streams();
                ok()
            }),
        )
        .route(
            "/_mock/expire-sessions",
            post(|s: Admin| async move {
                faults(s).expire_sessions().await;
                ok()
            }),
        )
        .route(
            "/_mock/stale-400",
            post(|s: Admin, Json(b): Json<On>| async move {
                faults(s).set_stale_400(b.on);
                ok()
            }),
        )
        .route(
            "/_mock/slow",
            post(|s: Admin, Json(b): Json<Ms>| async move {
                faults(s).set_slow(Duration::from_millis(b.ms));
                ok()
            }),
        )
        .route(
            "/_mock/slow-streams",
            post(|s: Admin, Json(b): Json<Ms>| async move {
                faults(s).set_slow_streams(Duration::from_millis(b.ms));
                ok()
            }),
        )
        .route(
            "/_mock/cross-origin",
            post(|s: Admin, Json(b): Json<Endpoint>| async move {
                faults(s).set_cross_origin(b.endpoint);
                ok()
            }),
        )
        .route(
            "/_mock/oversized",
            post(|s: Admin, Json(b): Json<Bytes>| async move {
                faults(s).set_oversized(b.bytes);
                ok()
            }),
        )
}

/// What the server serves (tools, counter, eras) and the answers the gate gives in its place.
fn server_routes() -> Router<Arc<ServerState>> {
    Router::new()
        .route(
            "/_mock/set-tools",
            post(|s: Admin, Json(b): Json<SetTools>| async move {
                let tools = faults(s).set_tools(b).await;
                Json(json!({"ok": true, "tools": tools}))
            }),
        )
        .route(
            "/_mock/bump-counter",
            post(|s: Admin| async move {
                let counter = faults(s).bump_counter().await;
                Json(json!({"ok": true, "counter": counter}))
            }),
        )
        .route(
            "/_mock/status-fault",
            post(|s: Admin, Json(b): Json<StatusFault>| async move {
                checked(faults(s).set_status_fault(Some(b)))
            }),
        )
        .route(
            "/_mock/status-fault/clear",
            post(|s: Admin| async move { checked(faults(s).set_status_fault(None)) }),
        )
        .route(
            "/_mock/modern-only",
            post(|s: Admin, Json(b): Json<On>| async move {
                faults(s).set_modern_only(b.on);
                ok()
            }),
        )
        .route(
            "/_mock/stateless",
            post(|s: Admin, Json(b): Json<On>| async move {
                faults(s).set_stateless(b.on);
                ok()
            }),
        )
        .route(
            "/_mock/end-listens",
            post(|s: Admin, Json(b): Json<Graceful>| async move {
                faults(s).end_listens(b.graceful);
                ok()
            }),
        )
        .route(
            "/_mock/redirect",
            post(|s: Admin, Json(b): Json<Location>| async move {
                checked(faults(s).set_redirect(b.location))
            }),
        )
}

/// What the server recorded, and its state.
fn record_routes() -> Router<Arc<ServerState>> {
    Router::new()
        .route(
            "/_mock/requests",
            get(|s: Admin| async move { Json::<Vec<RecordedRequest>>(faults(s).requests()) }),
        )
        .route(
            "/_mock/requests/clear",
            post(|s: Admin| async move {
                faults(s).clear_requests();
                ok()
            }),
        )
        .route(
            "/_mock/state",
            get(|s: Admin| async move { Json::<MockState>(faults(s).state().await) }),
        )
}
