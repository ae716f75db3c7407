//! `/healthz` (the process answers) and `/readyz` (which shared upstreams are ready).
//!
//! Neither needs a token, so that a load balancer or an orchestrator can probe them; `/readyz`
//! names the servers and their states only to a request that would pass `/mcp`'s
//! authentication (every request, when the gateway has no tokens and no issuer).

use std::sync::Arc;

use axum::{
    extract::{Request, State},
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};

use super::{guard::Gate, hub::Hub};

/// What `/readyz` reads.
#[derive(Debug)]
pub(in crate::http) struct Readiness {
    pub(in crate::http) hub: Arc<Hub>,
    /// The guard's state, whose doors decide who may read the details.
    pub(in crate::http) gate: Arc<Gate>,
}

/// `/healthz`: the process is up and serving HTTP.
pub(in crate::http) async fn healthz() -> Response {
    (StatusCode::OK, "ok\n").into_response()
}

/// `/readyz`: 200 when every shared upstream is ready and the gateway is not draining, 503
/// otherwise (`"draining": true` from the stop on).
pub(in crate::http) async fn readyz(
    State(readiness): State<Arc<Readiness>>,
    request: Request,
) -> Response {
    let upstreams = readiness.hub.common.serving();
    let draining = readiness.gate.drain.begun.is_cancelled();
    let ready = !draining && upstreams.iter().all(|u| u.supervisor.status().is_ready());
    let status = match ready {
        true => StatusCode::OK,
        false => StatusCode::SERVICE_UNAVAILABLE,
    };
    let authorization = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(HeaderValue::as_bytes);
    let mut body = serde_json::json!({"ready": ready});
    if draining {
        body["draining"] = true.into();
    }
    if readiness.gate.doors.identify(authorization).await.is_ok() {
        let servers: serde_json::Map<String, serde_json::Value> = upstreams
            .iter()
            .map(|u| {
                let state = u.supervisor.status().state.to_string();
                (u.name().to_owned(), serde_json::Value::String(state))
            })
            .collect();
        body["servers"] = servers.into();
        body["sessions"] = readiness.hub.hosts.sessions().into();
    }
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}
