//! One connection attempt: open the transport, handshake, list the tools.
//!
//! An attempt either hands over a complete [`Connected`] generation or cleans up everything it
//! built (the child reaped) before it returns its failure. It never leaves a half-open
//! generation behind, even when cancelled by `shutdown()`.

use std::{sync::Arc, time::Duration};

use rmcp::{
    RoleClient, ServiceExt,
    model::{ProtocolVersion, Tool},
    service::{ClientCacheConfig, ClientInitializeError, RunningService},
    transport::{Transport, async_rw::AsyncRwTransport},
};
use tokio::{sync::mpsc, time::Instant};
use tokio_util::sync::CancellationToken;

use super::{actor::Msg, generation::Session, handler::GenerationHandler, sync::list_all_tools};
use crate::{
    config::{RemoteConfig, ServerConfig, TransportConfig},
    state::{Cause, Death, Generation},
    transport::{
        self, Activity, DeathSlot, Guard, Observed,
        detect::{Failure, KindMemory, Protocol},
    },
};

/// A generation that completed its handshake and its first tool listing.
pub(crate) struct Connected {
    pub(crate) session: Session,
    pub(crate) tools: Vec<Tool>,
    /// How long the handshake and the listing took.
    pub(crate) elapsed: Duration,
}

/// What every attempt of one supervisor shares: built once in `Supervisor::start`.
#[derive(Debug, Clone)]
pub(crate) struct ConnectContext {
    /// The HTTP client of the remote transports (shared, so connections are pooled).
    pub(crate) http: reqwest::Client,
    /// The protocol `auto` found; written by the remote arm of [`open`] after a handshake.
    pub(crate) detected: Arc<KindMemory>,
}

impl ConnectContext {
    pub(crate) fn new(http: reqwest::Client) -> Self {
        ConnectContext {
            http,
            detected: Arc::default(),
        }
    }
}

/// Runs one attempt. `ct` cancels it (the result is then an error and everything is cleaned up).
pub(crate) async fn attempt(
    config: Arc<ServerConfig>,
    context: ConnectContext,
    generation: Generation,
    tx: mpsc::UnboundedSender<Msg>,
    ct: CancellationToken,
) -> Result<Connected, Death> {
    let started = Instant::now();
    let deadline = started + config.connect_timeout;
    let session = open(&config, &context, generation, tx, &ct, deadline).await?;
    let listed = tokio::select! {
        listed = tokio::time::timeout_at(deadline, list_all_tools(session.running.peer(), config.max_tool_pages)) => {
            listed.unwrap_or_else(|_| Err(format!("tools/list timed out (connect timeout {:?})", config.connect_timeout)))
        }
        _ = ct.cancelled() => Err("attempt cancelled".to_owned()),
    };
    match listed {
        Ok(tools) => Ok(Connected {
            session,
            tools,
            elapsed: started.elapsed(),
        }),
        Err(detail) => {
            discard(session, config.close_timeout).await;
            Err(Death::new(Cause::ConnectFailed, detail))
        }
    }
}

/// Closes a session that never became a generation.
/// Closes a session that never became a generation, within `limit` (rmcp's own cleanup can
/// wait on a hung HTTP server); the child, if any, is always disposed of.
pub(crate) async fn discard(session: Session, limit: Duration) {
    session.session_ct.cancel();
    if tokio::time::timeout(limit, session.running.waiting())
        .await
        .is_err()
    {
        tracing::warn!("session cleanup did not finish within {limit:?}; abandoning it");
    }
    session.guard.dispose().await;
}

async fn open(
    config: &ServerConfig,
    context: &ConnectContext,
    generation: Generation,
    tx: mpsc::UnboundedSender<Msg>,
    ct: &CancellationToken,
    deadline: Instant,
) -> Result<Session, Death> {
    match &config.transport {
        TransportConfig::Stdio(stdio) => {
            let (stdout, stdin, child) = transport::stdio::spawn(stdio, &config.name, generation)
                .map_err(|e| {
                Death::new(
                    Cause::ConnectFailed,
                    format!("could not spawn '{}': {e}", stdio.command),
                )
            })?;
            let mut guard = Guard::Stdio(Box::new(child));
            let handler =
                GenerationHandler::new(generation, tx, ProtocolVersion::LATEST_WITH_INITIALIZE);
            let (activity, slot, session_ct) = (
                Activity::new(),
                DeathSlot::default(),
                CancellationToken::new(),
            );
            let io = AsyncRwTransport::new_client(stdout, stdin);
            let running = match handshake(io, handler, &activity, &session_ct, ct, deadline).await {
                Ok(running) => running,
                Err(failed) => {
                    let exit = match failed {
                        Handshake::Cancelled => None,
                        _ => guard.exit_detail(Duration::from_millis(50)).await,
                    };
                    guard.dispose().await;
                    let mut detail = failed.detail(config.connect_timeout);
                    if let Some(exit) = exit {
                        detail.push_str(&format!("; child {exit}"));
                    }
                    return Err(Death::new(Cause::ConnectFailed, detail));
                }
            };
            Ok(Session {
                running,
                guard,
                slot,
                activity,
                session_ct,
            })
        }
        TransportConfig::Remote(remote) => {
            transport::detect::open(remote.kind, &context.detected, |protocol| {
                open_remote(
                    protocol,
                    config,
                    remote,
                    context,
                    generation,
                    tx.clone(),
                    ct,
                    deadline,
                )
            })
            .await
        }
    }
}

/// Opens one remote session speaking `protocol`.
#[allow(clippy::too_many_arguments)] // one attempt's whole context, passed down once
async fn open_remote(
    protocol: Protocol,
    config: &ServerConfig,
    remote: &RemoteConfig,
    context: &ConnectContext,
    generation: Generation,
    tx: mpsc::UnboundedSender<Msg>,
    ct: &CancellationToken,
    deadline: Instant,
) -> Result<Session, Failure> {
    let (activity, slot, session_ct) = (
        Activity::new(),
        DeathSlot::default(),
        CancellationToken::new(),
    );
    let failed = |detail: String, wrong_protocol| Failure {
        death: Death::new(Cause::ConnectFailed, detail),
        wrong_protocol,
    };
    let served = match protocol {
        Protocol::Sse => {
            let opened = tokio::select! {
                opened = tokio::time::timeout_at(deadline, transport::sse::connect(&context.http, remote, slot.clone())) => opened,
                _ = ct.cancelled() => return Err(failed("attempt cancelled".to_owned(), false)),
            };
            let sse = match opened {
                Ok(Ok(sse)) => sse,
                Ok(Err(e)) => return Err(failed(e.detail, protocol.is_wrong(e.status))),
                Err(_) => {
                    return Err(failed(
                        format!(
                            "SSE connect timed out (connect timeout {:?})",
                            config.connect_timeout
                        ),
                        false,
                    ));
                }
            };
            let handler = GenerationHandler::new(generation, tx, ProtocolVersion::V_2024_11_05);
            handshake(sse, handler, &activity, &session_ct, ct, deadline).await
        }
        Protocol::Http => {
            let http =
                transport::http::transport(&context.http, remote).map_err(|e| failed(e, false))?;
            let handler =
                GenerationHandler::new(generation, tx, ProtocolVersion::LATEST_WITH_INITIALIZE);
            handshake(http, handler, &activity, &session_ct, ct, deadline).await
        }
    };
    match served {
        Ok(running) => Ok(Session {
            running,
            guard: Guard::Nothing,
            slot,
            activity,
            session_ct,
        }),
        Err(handshake) => {
            let status = match &handshake {
                Handshake::Failed(e) => transport::http::initialize_status(e),
                _ => None,
            };
            let mut detail = handshake.detail(config.connect_timeout);
            if let Some(death) = slot.get() {
                detail.push_str(&format!("; {}", death.detail));
            }
            Err(failed(
                detail,
                protocol == Protocol::Http && protocol.is_wrong(status),
            ))
        }
    }
}

/// Why a handshake produced no session.
enum Handshake {
    Cancelled,
    TimedOut,
    Failed(Box<ClientInitializeError>),
}

impl Handshake {
    fn detail(&self, connect_timeout: Duration) -> String {
        match self {
            Handshake::Cancelled => "attempt cancelled".to_owned(),
            Handshake::TimedOut => {
                format!("initialize timed out (connect timeout {connect_timeout:?})")
            }
            Handshake::Failed(e) => format!("initialize failed: {e}"),
        }
    }
}

/// Runs `initialize` over `transport` (wrapped in [`Observed`]) until `deadline`, or until `ct`
/// cancels the attempt; the session is cancelled through `session_ct` on every failure.
async fn handshake<T>(
    transport: T,
    handler: GenerationHandler,
    activity: &Arc<Activity>,
    session_ct: &CancellationToken,
    ct: &CancellationToken,
    deadline: Instant,
) -> Result<RunningService<RoleClient, GenerationHandler>, Handshake>
where
    T: Transport<RoleClient> + 'static,
{
    let io = Observed::new(transport, activity.clone());
    let served = tokio::select! {
        served = tokio::time::timeout_at(deadline, handler.serve_with_ct(io, session_ct.child_token())) => served,
        _ = ct.cancelled() => {
            session_ct.cancel();
            return Err(Handshake::Cancelled);
        }
    };
    let running = served
        .map_err(|_| Handshake::TimedOut)
        .and_then(|s| s.map_err(|e| Handshake::Failed(Box::new(e))));
    match running {
        Ok(running) => {
            running
                .peer()
                .set_response_cache_config(ClientCacheConfig::disabled())
                .await;
            Ok(running)
        }
        Err(failed) => {
            session_ct.cancel();
            Err(failed)
        }
    }
}
