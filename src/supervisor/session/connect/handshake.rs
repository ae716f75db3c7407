//! The `initialize` handshake of one attempt, and what its failure means.

use std::{
    sync::{Arc, atomic::Ordering},
    time::Duration,
};

use rmcp::{
    RoleClient,
    model::{ErrorCode, ProtocolVersion},
    service::{
        ClientCacheConfig, ClientInitializeError, ClientLifecycleMode,
        serve_client_with_lifecycle_and_ct,
    },
    transport::Transport,
};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::ConnectContext;
use crate::{
    config::{ProtocolChoice, ServerConfig},
    state::Cause,
    supervisor::session::{generation::Served, handler::GenerationHandler},
    transport::{self, Activity, Observed, refusal::DiscoverRefusals},
    verdict::Verdict,
};

/// Why a handshake produced no session.
#[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
pub enum Handshake {
    /// The attempt was cancelled.
    Cancelled,
    /// No session within the connect timeout; `step` names what was asked (see [`step`]).
    TimedOut {
        /// What was asked.
        step: &'static str,
    },
    /// The handshake failed at `step`.
    Failed {
        /// rmcp's error.
        error: Box<ClientInitializeError>,
        /// What was asked.
        step: &'static str,
    },
}

/// What a handshake asked the server, for messages: `initialize`, `server/discover`, or (`auto`,
/// no answer yet) both in turn. An `auto` failure names `initialize` once rmcp fell back to it
/// (`initialize_only` is also true once `initialize` was sent).
pub(super) fn step(
    initialize_only: bool,
    auto: bool,
    error: Option<&ClientInitializeError>,
) -> &'static str {
    match error {
        _ if initialize_only => "initialize",
        Some(ClientInitializeError::LegacyFallbackFailed { .. }) => "initialize",
        None if auto => "server/discover (then initialize)",
        _ => "server/discover",
    }
}

impl Handshake {
    /// True when the server refused the protocol version (`-32022`) and names one this crate
    /// speaks in its `supported` list: another era would be accepted.
    #[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
    pub fn refused_version(&self) -> bool {
        let Handshake::Failed { error: e, .. } = self else {
            return false;
        };
        let ClientInitializeError::JsonRpcError(error) = transport::http::last_phase(e) else {
            return false;
        };
        error.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
            && error
                .data
                .as_ref()
                .and_then(|d| d.get("supported"))
                .and_then(|s| s.as_array())
                .is_some_and(|versions| {
                    versions.iter().any(|v| {
                        v.as_str() == Some(rmcp::model::ProtocolVersion::V_2026_07_28.as_str())
                    })
                })
    }

    /// What went wrong, for a person: one plain line.
    #[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
    pub fn detail(&self, connect_timeout: Duration) -> String {
        match self {
            Handshake::Cancelled => "attempt cancelled".to_owned(),
            Handshake::TimedOut { step } => {
                format!("{step} timed out (connect timeout {connect_timeout:?})")
            }
            Handshake::Failed { error: e, step } => match transport::http::last_phase(e) {
                ClientInitializeError::JsonRpcError(error)
                    if error.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION =>
                {
                    let supported = error
                        .data
                        .as_ref()
                        .and_then(|d| d.get("supported"))
                        .map(|s| s.to_string())
                        .unwrap_or_else(|| "unknown versions".to_owned());
                    // `supported` is the server's own JSON, of any length.
                    crate::verdict::plain(&format!(
                        "the server refused the protocol version of {step} (-32022); it \
                         supports {supported}"
                    ))
                }
                ClientInitializeError::TransportError { error, .. } => {
                    match error.error.downcast_ref::<transport::http::HttpError>() {
                        Some(http) if transport::http::status_of(http).is_some() => {
                            crate::verdict::plain(&format!(
                                "{step} answered {}",
                                transport::http::describe(http)
                            ))
                        }
                        Some(
                            rmcp::transport::streamable_http_client::StreamableHttpError::Client(e),
                        ) => crate::verdict::plain(&format!(
                            "{step} failed: {}",
                            transport::innermost(e)
                        )),
                        _ => crate::verdict::plain(&format!(
                            "{step} failed: {}",
                            transport::innermost(&*error.error)
                        )),
                    }
                }
                other => crate::verdict::plain(&format!("{step} failed: {other}")),
            },
        }
    }

    /// The cause (and the server's `Retry-After`) of a failed handshake, from its verdict
    /// ([`transport::judge_handshake`]): a permanent verdict gives its cause; anything else is a
    /// transient `connect_failed`.
    #[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
    pub fn verdict(&self) -> (Cause, Option<Duration>) {
        let Handshake::Failed { error: e, .. } = self else {
            return (Cause::ConnectFailed, None);
        };
        let verdict = transport::judge_handshake(e);
        match verdict {
            Verdict::Overload { retry_after, .. } => (Cause::ConnectFailed, retry_after),
            other => (
                other.permanent_cause().unwrap_or(Cause::ConnectFailed),
                None,
            ),
        }
    }
}

/// Opens the session over `transport` (wrapped in [`Observed`], which counts progress into the
/// handler's relay, and, when it asks `server/discover`, in [`DiscoverRefusals`]) the way
/// `lifecycle` says (`initialize`, or `server/discover`), until `deadline` or until `ct` cancels
/// the attempt; the session is cancelled through `session_ct` on every failure.
pub(super) async fn handshake<T>(
    transport: T,
    handler: GenerationHandler,
    lifecycle: ClientLifecycleMode,
    activity: &Arc<Activity>,
    session_ct: &CancellationToken,
    ct: &CancellationToken,
    deadline: Instant,
) -> Result<Served, Handshake>
where
    T: Transport<RoleClient> + 'static,
{
    let (server, generation) = handler.label();
    let relay = handler.relay();
    let initialize_only = matches!(lifecycle, ClientLifecycleMode::Initialize);
    let auto = matches!(lifecycle, ClientLifecycleMode::Auto { .. });
    // Every way a pre-2026 server refuses `server/discover` reads as `-32601`: under `auto` it
    // leads to `initialize` on this same transport (the same child, for stdio); pinned to
    // 2026-07-28 it is a rejection, not a transient failure retried forever.
    let observed = Observed::new(transport, activity.clone(), server, generation)
        .counting_progress(Box::new(move |token| relay.arrived(generation, token)));
    let io = DiscoverRefusals::new(observed, !initialize_only);
    let fell_back = io.fell_back();
    let open = serve_client_with_lifecycle_and_ct(handler, io, lifecycle, session_ct.child_token());
    let served = tokio::select! {
        served = tokio::time::timeout_at(deadline, open) => served,
        _ = ct.cancelled() => {
            session_ct.cancel();
            return Err(Handshake::Cancelled);
        }
    };
    let initialize_only = initialize_only || fell_back.load(Ordering::Relaxed);
    let running = served
        .map_err(|_| Handshake::TimedOut {
            step: step(initialize_only, auto, None),
        })
        .and_then(|served| {
            served.map_err(|error| Handshake::Failed {
                step: step(initialize_only, auto, Some(&error)),
                error: Box::new(error),
            })
        });
    match running {
        Ok(running) => {
            running
                .peer()
                .set_response_cache_config(ClientCacheConfig::disabled())
                .await;
            Ok(Served::Rmcp(running))
        }
        Err(failed) => {
            session_ct.cancel();
            Err(failed)
        }
    }
}

/// The version a handshake negotiated (2025-11-25 if the server did not say).
pub(super) fn negotiated_of(served: &Served) -> ProtocolVersion {
    served
        .link()
        .peer_info()
        .map(|info| info.protocol_version.clone())
        .unwrap_or(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

/// The cause (and `Retry-After`) of a failed handshake. Under `protocol: auto`, a server that
/// refused the remembered era's version (`-32022`) but speaks one we know was upgraded (or
/// downgraded): the memory is dropped and the failure is transient, so the next attempt asks
/// again instead of giving up.
pub(super) fn judge_refusal(
    failed: &Handshake,
    config: &ServerConfig,
    context: &ConnectContext,
) -> (Cause, Option<Duration>) {
    if config.protocol == ProtocolChoice::Auto && failed.refused_version() {
        context.era.forget();
        return (Cause::ConnectFailed, None);
    }
    failed.verdict()
}

#[cfg(test)]
mod tests {
    use rmcp::model::ErrorData;

    use super::*;

    #[test]
    fn a_version_refusal_listing_many_versions_is_one_plain_line() {
        // The `supported` list is the server's: it was printed whole, of any length.
        let supported = vec!["2025-11-25"; 40];
        let refusal = ErrorData::new(
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
            "unsupported",
            Some(serde_json::json!({ "supported": supported })),
        );
        let failed = Handshake::Failed {
            error: Box::new(ClientInitializeError::JsonRpcError(refusal)),
            step: "initialize",
        };
        let detail = failed.detail(Duration::from_secs(30));
        assert!(detail.starts_with("the server refused the protocol version of initialize (-32022); it supports [\"2025-11-25\""), "{detail}");
        assert!(detail.len() <= 203 && detail.ends_with('…'), "{detail}");
    }
}
