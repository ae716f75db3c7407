//! The router of a remote mock server: the MCP routes of the chosen transports behind the gate
//! ([`super::gate`]), the `/_mock/*` controls ([`super::admin`]) and, in OAuth mode, the
//! authorization server's routes ([`super::oauth`]).

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::handler::Handler;
use axum::http::StatusCode;
use axum::routing::{any, get, post};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use super::options::{MockOptions, MockTransport};
use super::state::ServerState;
use super::{admin, gate, legacy, oauth};
use crate::handler::MockHandler;

type Service = StreamableHttpService<MockHandler, LocalSessionManager>;

/// The two flavours of Streamable HTTP; the stateless switch picks one per request.
struct Streamable {
    sessions: Service,
    stateless: Service,
}

type Dispatch = (Arc<ServerState>, Arc<Streamable>);

/// The whole router of a server started with `opts`.
pub(super) fn router(opts: &MockOptions, state: &Arc<ServerState>) -> Router {
    let legacy = matches!(opts.transport, MockTransport::Sse | MockTransport::Both);
    let streamable = matches!(opts.transport, MockTransport::Http | MockTransport::Both);
    let mut mcp = Router::new();
    if legacy {
        mcp = mcp
            .route(&opts.sse_path, get(legacy::open_stream))
            .route("/message", post(legacy::post_message));
    }
    if streamable {
        let service = |stateless: bool| {
            let shared = state.shared.clone();
            let config = StreamableHttpServerConfig::default()
                .with_sse_keep_alive(opts.sse_keep_alive)
                .with_sse_retry(Some(opts.sse_retry))
                .with_legacy_session_mode(!stateless)
                .with_cancellation_token(state.kill.child_token());
            StreamableHttpService::new(
                move || Ok(MockHandler::new(shared.clone())),
                state.streamable.clone(),
                config,
            )
        };
        let services = Arc::new(Streamable {
            sessions: service(false),
            stateless: service(true),
        });
        let dispatch = |State((state, services)): State<Dispatch>, request: Request| async move {
            match state.stateless() {
                true => services.stateless.handle(request).await,
                false => services.sessions.handle(request).await,
            }
        };
        let dispatch = dispatch.with_state((state.clone(), services));
        mcp = mcp.nest_service(&opts.mcp_path, dispatch);
    } else if opts.mcp_path != opts.sse_path {
        mcp = mcp.route(
            &opts.mcp_path,
            any(|| async { StatusCode::METHOD_NOT_ALLOWED }),
        );
    }
    let mut router = mcp
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            gate::gate,
        ))
        .merge(admin::routes());
    if let Some(authority) = &state.oauth {
        router = router.merge(oauth::routes(authority.clone()));
    }
    router.with_state(state.clone())
}
