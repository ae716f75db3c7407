//! The handshake of a Streamable HTTP attempt on the lean link
//! ([`crate::transport::http::link`]), and what its end means for the attempt: a session of
//! either era, or a failure read as rmcp's would be ([`Handshake`]).

use std::sync::Arc;

use rmcp::{model::ProtocolVersion, service::ClientLifecycleMode};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::handshake::{Handshake, step};
use crate::{supervisor::session::generation::Served, transport};

/// The handshake of a Streamable HTTP session on the lean link, the way `lifecycle` says:
/// `initialize`, `server/discover`, or with `auto` `server/discover` first
/// ([`transport::http::link`]), until `deadline` or until `ct` cancels the attempt (then, as on
/// every failure, the session is cancelled through `session_ct` and the link dropped, which
/// stops its transport).
pub(super) async fn open_lean(
    link: transport::http::link::Link,
    params: rmcp::model::InitializeRequestParams,
    lifecycle: ClientLifecycleMode,
    session_ct: &CancellationToken,
    ct: &CancellationToken,
    deadline: Instant,
) -> Result<Served, Handshake> {
    let auto = matches!(lifecycle, ClientLifecycleMode::Auto { .. });
    let initialize = matches!(lifecycle, ClientLifecycleMode::Initialize);
    let open = async {
        match lifecycle {
            ClientLifecycleMode::Auto {
                preferred_versions,
                legacy_version,
            } => {
                let legacy = legacy_version.unwrap_or(ProtocolVersion::LATEST_WITH_INITIALIZE);
                link.open_auto(params, &preferred_versions, legacy).await
            }
            ClientLifecycleMode::Discover { preferred_versions } => {
                link.open_discover(&params, &preferred_versions).await
            }
            _ => link.initialize(params).await,
        }
    };
    let opened = tokio::select! {
        opened = tokio::time::timeout_at(deadline, open) => opened,
        _ = ct.cancelled() => {
            session_ct.cancel();
            return Err(Handshake::Cancelled);
        }
    };
    let initialize_only = initialize || link.fell_back();
    match opened {
        Ok(Ok(())) => Ok(Served::Lean(Arc::new(link))),
        Ok(Err(error)) => {
            session_ct.cancel();
            Err(Handshake::Failed {
                step: step(initialize_only, auto, Some(&error)),
                error: Box::new(error),
            })
        }
        Err(_) => {
            session_ct.cancel();
            Err(Handshake::TimedOut {
                step: step(initialize_only, auto, None),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use mcp_mock_server::{MockOptions, MockServer, MockTransport};
    use rmcp::model::ProtocolVersion;
    use tokio_util::sync::CancellationToken;

    use crate::{
        ServerConfig,
        config::ProtocolChoice,
        state::Generation,
        supervisor::session::{
            connect::{Attempt, ConnectContext, attempt, discard},
            generation::Served,
            link::Listening,
        },
        transport::Activity,
    };

    /// A 2026-07-28 server, asked for by name or found by `auto`, is served by the lean link
    /// (no rmcp service, no task of its own), and so is its listen stream.
    #[tokio::test]
    async fn a_2026_session_and_its_listen_stream_run_on_the_lean_link() {
        if !crate::transport::http::link::enabled() {
            return; // `MCP_RESILIENT_LEAN_LINK=0`: rmcp's session, by request.
        }
        let mock = MockServer::start(MockOptions {
            transport: MockTransport::Http,
            ..MockOptions::default()
        })
        .await
        .expect("mock server starts");
        for choice in [ProtocolChoice::V2026_07_28, ProtocolChoice::Auto] {
            let config = ServerConfig::http("modern", mock.http_url()).protocol(choice);
            let config = std::sync::Arc::new(config.resolve().expect("valid config"));
            let http = crate::transport::client::default_http_client()
                .expect("a client")
                .clone();
            // The actor's mailbox type, unbounded by design and bounded by its senders (see
            // `supervisor::mailbox`: one death per generation, one waiting list change per
            // sender); one attempt queues at most those here, kept until the loop's turn ends.
            let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
            let connected = attempt(Attempt {
                config,
                context: ConnectContext::new(http, Default::default(), None),
                generation: Generation::new(1).expect("nonzero"),
                tx,
                ct: CancellationToken::new(),
                activity: Activity::new(false),
            })
            .await
            .unwrap_or_else(|f| panic!("{choice:?}: connected: {:?}", f.death));
            assert_eq!(
                connected.protocol,
                ProtocolVersion::V_2026_07_28,
                "{choice:?}"
            );
            assert!(
                matches!(connected.session.running, Served::Lean(_)),
                "{choice:?}: the lean link serves the session"
            );
            assert!(
                matches!(connected.subscription, Some(Listening::Lean(_))),
                "{choice:?}: the lean link holds the listen stream"
            );
            assert!(!connected.tools.is_empty(), "{choice:?}: tools listed");
            discard(connected.session, Duration::from_secs(5)).await;
        }
    }
}
