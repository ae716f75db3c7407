//! One connection attempt: open the transport, handshake, list the tools.
//!
//! An attempt either hands over a complete [`Connected`] generation or cleans up everything it
//! built (the child reaped) before it returns its failure. It never leaves a half-open
//! generation behind, even when cancelled by `shutdown()`. A failure carries its verdict: a
//! transient `connect_failed` (with the server's `Retry-After`, if it sent one), or a permanent
//! `unauthorized` / `rejected` (see [`crate::verdict`]).

use std::{sync::Arc, time::Duration};

use rmcp::{
    RoleClient, ServiceExt,
    model::{ErrorCode, ProtocolVersion, Tool},
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
        self, Activity, DeathSlot, Guard, Observed, Stop,
        detect::{Failure, KindMemory, Protocol},
    },
    verdict::{Phase, Verdict},
};

/// Why an attempt produced no generation.
#[derive(Debug)]
pub(crate) struct AttemptFailure {
    /// Cause `connect_failed`, `unauthorized` or `rejected`.
    pub(crate) death: Death,
    /// The wait the server asked for (HTTP 429 or 503 with `Retry-After`).
    pub(crate) retry_after: Option<Duration>,
}

impl From<Death> for AttemptFailure {
    fn from(death: Death) -> Self {
        AttemptFailure {
            death,
            retry_after: None,
        }
    }
}

impl From<Failure> for AttemptFailure {
    fn from(failure: Failure) -> Self {
        AttemptFailure {
            death: failure.death,
            retry_after: failure.retry_after,
        }
    }
}

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
) -> Result<Connected, AttemptFailure> {
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
            Err(Death::new(Cause::ConnectFailed, detail).into())
        }
    }
}

/// Closes a session that never became a generation: the child, if any, is stopped at once
/// (without waiting on rmcp, which may be wedged) and reaped; then rmcp's own cleanup gets up to
/// `limit` (it can wait on a hung HTTP server).
pub(crate) async fn discard(session: Session, limit: Duration) {
    session.session_ct.cancel();
    session.guard.dispose(Stop::Dead).await;
    if tokio::time::timeout(limit, session.running.waiting())
        .await
        .is_err()
    {
        tracing::warn!("session cleanup did not finish within {limit:?}; abandoning it");
    }
}

async fn open(
    config: &ServerConfig,
    context: &ConnectContext,
    generation: Generation,
    tx: mpsc::UnboundedSender<Msg>,
    ct: &CancellationToken,
    deadline: Instant,
) -> Result<Session, AttemptFailure> {
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
                Activity::new(true),
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
                    guard.dispose(Stop::Dead).await;
                    let (cause, _) = failed.verdict();
                    let mut detail = failed.detail(config.connect_timeout);
                    if let Some(exit) = exit {
                        detail.push_str(&format!("; child {exit}"));
                    }
                    return Err(Death::new(cause, detail).into());
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
            .map_err(AttemptFailure::from)
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
        Activity::new(false),
        DeathSlot::default(),
        CancellationToken::new(),
    );
    let failed = |detail: String, wrong_protocol| Failure {
        death: Death::new(Cause::ConnectFailed, detail),
        wrong_protocol,
        retry_after: None,
    };
    let served = match protocol {
        Protocol::Sse => {
            let opened = tokio::select! {
                opened = tokio::time::timeout_at(deadline, transport::sse::connect(&context.http, remote, slot.clone())) => opened,
                _ = ct.cancelled() => return Err(failed("attempt cancelled".to_owned(), false)),
            };
            let sse = match opened {
                Ok(Ok(sse)) => sse,
                Ok(Err(e)) if protocol.is_wrong(e.status) => return Err(failed(e.detail, true)),
                Ok(Err(e)) => return Err(judged(e.verdict(), e.detail)),
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
            if protocol == Protocol::Http && protocol.is_wrong(status) {
                return Err(failed(detail, true));
            }
            let (cause, retry_after) = handshake.verdict();
            Err(Failure {
                death: Death::new(cause, detail),
                wrong_protocol: false,
                retry_after,
            })
        }
    }
}

/// A connect-phase failure with `verdict`: permanent causes keep their cause, anything else is a
/// transient `connect_failed` (with the server's `Retry-After`, if any).
fn judged(verdict: Verdict, detail: String) -> Failure {
    let retry_after = match &verdict {
        Verdict::Overload { retry_after, .. } => *retry_after,
        _ => None,
    };
    Failure {
        death: Death::new(
            verdict.permanent_cause().unwrap_or(Cause::ConnectFailed),
            crate::verdict::plain(&detail),
        ),
        wrong_protocol: false,
        retry_after,
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
            Handshake::Failed(e) => match &**e {
                ClientInitializeError::JsonRpcError(error)
                    if error.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION =>
                {
                    let supported = error
                        .data
                        .as_ref()
                        .and_then(|d| d.get("supported"))
                        .map(|s| s.to_string())
                        .unwrap_or_else(|| "unknown versions".to_owned());
                    format!(
                        "no protocol version in common: the server answered initialize with \
                         -32022 and supports {supported}"
                    )
                }
                ClientInitializeError::TransportError { error, .. } => {
                    match error.error.downcast_ref::<transport::http::HttpError>() {
                        Some(http) if transport::http::status_of(http).is_some() => {
                            crate::verdict::plain(&format!(
                                "initialize answered {}",
                                transport::http::describe(http)
                            ))
                        }
                        Some(
                            rmcp::transport::streamable_http_client::StreamableHttpError::Client(e),
                        ) => crate::verdict::plain(&format!(
                            "initialize failed: {}",
                            transport::innermost(e)
                        )),
                        _ => crate::verdict::plain(&format!(
                            "initialize failed: {}",
                            transport::innermost(&*error.error)
                        )),
                    }
                }
                other => crate::verdict::plain(&format!("initialize failed: {other}")),
            },
        }
    }

    /// The cause (and the server's `Retry-After`) of a failed handshake: a JSON-RPC error
    /// answering `initialize` (-32022 included) is a rejection, as are the permanent HTTP answers;
    /// anything else is a transient `connect_failed`.
    fn verdict(&self) -> (Cause, Option<Duration>) {
        let Handshake::Failed(e) = self else {
            return (Cause::ConnectFailed, None);
        };
        let verdict = match &**e {
            ClientInitializeError::JsonRpcError(_)
            | ClientInitializeError::NoCompatibleProtocolVersion { .. } => {
                return (Cause::Rejected, None);
            }
            ClientInitializeError::TransportError { error, .. } => {
                let source = &*error.error;
                if let Some(http) = source.downcast_ref::<transport::http::HttpError>() {
                    transport::http::verdict(http, Phase::Connect, String::new())
                } else if let Some(sse) = source.downcast_ref::<transport::sse::SendError>() {
                    sse.verdict(String::new())
                } else {
                    Verdict::Alive
                }
            }
            _ => Verdict::Alive,
        };
        match verdict {
            Verdict::Overload { retry_after, .. } => (Cause::ConnectFailed, retry_after),
            other => (
                other.permanent_cause().unwrap_or(Cause::ConnectFailed),
                None,
            ),
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
