//! stdio mode: newline-delimited JSON-RPC on stdin/stdout, one session for the process life.
//!
//! # Invariants
//!
//! 1. Messages are written in the order rmcp queued them (`send` was called), even though rmcp
//!    runs each send as its own task: each send waits for the one queued before it. The one
//!    exception is a block's announcement, which goes out at once.
//! 2. While hung, a message is dropped when queued; while blocked, it is held (in order), except
//!    the block's own announcement.
//! 3. Once the `wedge` reply has been flushed, stdin is never read again.
//! 4. Every request read is counted by method before anything else happens to it.
//! 5. With `modern_only`, an `initialize` request never reaches rmcp: the transport answers it
//!    with `-32022` itself (queued like any other message) and the session stays open for a
//!    `server/discover`. (rmcp would end the session after a failed `initialize`.) Likewise a
//!    discover refusal ([`crate::hostile::discover`]) answers `server/discover` itself.
//! 6. With `discover_late`, that refusal is held until the next request arrives (the client's
//!    `initialize`, once it gave up waiting) and queued just before that request reaches rmcp:
//!    the late answer is on the wire before the next request's own answer, never after it.

use std::process::ExitCode;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{
    ClientRequest, ErrorData, JsonRpcMessage, ProtocolVersion, RequestId, ServerJsonRpcMessage,
};
use rmcp::service::{RxJsonRpcMessage, ServerInitializeError, TxJsonRpcMessage, serve_server};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::sync::oneshot;

use crate::block;
use crate::crash::CrashTap;
use crate::handler::MockHandler;
use crate::hostile::flood::FloodPlan;
use crate::shared::Shared;

/// The server-side transport of stdio mode: it swallows every outgoing message while hung,
/// holds them while blocked, stops reading once wedged, and keeps the session open after stdin
/// EOF when asked to (or when hung) until a signal ends us.
struct HangAware<T> {
    inner: T,
    shared: Arc<Shared>,
    ignore_eof: bool,
    /// Hold the discover refusal until the next request (invariant 6); set once.
    discover_late: bool,
    /// The held discover refusal; taken by the next request.
    held: Option<ServerJsonRpcMessage>,
    /// Resolves once the send queued last has finished (or was dropped); replaced by each send.
    last_send: oneshot::Receiver<()>,
}

impl<T: Transport<RoleServer>> HangAware<T> {
    fn new(inner: T, shared: Arc<Shared>, ignore_eof: bool, discover_late: bool) -> Self {
        // A receiver whose sender is gone resolves at once: nothing is queued yet.
        let (_, last_send) = oneshot::channel();
        Self {
            inner,
            shared,
            ignore_eof,
            discover_late,
            held: None,
            last_send,
        }
    }

    /// Queues `answer`, given in the server's place (its order is kept by `send`).
    fn answer(&mut self, answer: ServerJsonRpcMessage) {
        let send = self.send(answer);
        tokio::spawn(async move {
            if let Err(error) = send.await {
                tracing::debug!(%error, "an answer given in the server's place was not sent");
            }
        });
    }
}

impl<T> HangAware<T> {
    /// The answer the transport gives to `request` itself, if any: a 2026-only server's `-32022`
    /// to `initialize`, or a discover refusal ([`crate::hostile::discover`]).
    fn answer_here(&self, request: &ClientRequest, id: &RequestId) -> Option<ServerJsonRpcMessage> {
        match request {
            ClientRequest::InitializeRequest(initialize) if self.shared.modern_only() => {
                let requested = initialize.params.protocol_version.clone();
                let supported = [ProtocolVersion::V_2026_07_28];
                let error = ErrorData::unsupported_protocol_version(requested, &supported);
                Some(ServerJsonRpcMessage::error(error, Some(id.clone())))
            }
            ClientRequest::DiscoverRequest(_) => {
                self.shared.discover.get()?.stdio_answer(id.clone())
            }
            _ => None,
        }
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for HangAware<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        // The announcement of a block goes out at once, ahead of whatever is held: queued behind a
        // held message it would wait for the block to end, and the block waits for it to start.
        let announcement = block::is_announcement(&item);
        let (done, next) = oneshot::channel::<()>();
        let previous = match announcement {
            true => None,
            false => Some(std::mem::replace(&mut self.last_send, next)),
        };
        // Decided when the message is queued: the `hang` tool sets the flag before its own reply.
        let send = (!self.shared.is_hung()).then(|| self.inner.send(item));
        let shared = self.shared.clone();
        async move {
            if let Some(previous) = previous {
                // Ok or Err alike: the previous send finished or was dropped.
                let _ = previous.await;
                shared.block.hold().await;
            }
            let result = match send {
                Some(send) => send.await,
                None => Ok(()),
            };
            drop(done);
            result
        }
    }

    /// # Cancel safety
    /// Cancel safe: the inner receive is, the waits hold no data, and a message taken is
    /// either returned or answered (the answer is queued before the next await).
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let message = tokio::select! {
                biased;
                () = self.shared.crash.wedged() => std::future::pending().await,
                message = self.inner.receive() => message,
            };
            let Some(message) = message else {
                break;
            };
            if let JsonRpcMessage::Request(request) = &message {
                self.shared.count_method(request.request.method());
                if let Some(held) = self.held.take() {
                    self.answer(held);
                }
                if let Some(answer) = self.answer_here(&request.request, &request.id) {
                    let discover = matches!(request.request, ClientRequest::DiscoverRequest(_));
                    match self.discover_late && discover {
                        true => self.held = Some(answer),
                        false => self.answer(answer),
                    }
                    continue;
                }
            }
            return Some(message);
        }
        if self.ignore_eof || self.shared.is_hung() {
            std::future::pending::<()>().await;
        }
        None
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

/// Serves one session on stdin/stdout until stdin closes (exit 0) or `crash` exits the process;
/// a `flood` starts once the session is initialized; `discover_late` holds a discover refusal
/// until the next request (invariant 6).
pub(crate) async fn run(
    shared: Arc<Shared>,
    ignore_eof: bool,
    flood: Option<FloodPlan>,
    discover_late: bool,
) -> ExitCode {
    eprintln!(
        "mcp-mock-server {} ready pid={}",
        shared.boot_id, shared.pid
    );
    let stdout = CrashTap::new(tokio::io::stdout(), shared.crash.clone());
    let inner = AsyncRwTransport::new_server(tokio::io::stdin(), stdout);
    let transport = HangAware::new(inner, shared.clone(), ignore_eof, discover_late);
    match serve_server(MockHandler::new(shared), transport).await {
        Ok(running) => {
            if let Some(plan) = flood {
                tokio::spawn(crate::hostile::flood::run(running.peer().clone(), plan));
            }
            if let Err(error) = running.waiting().await {
                eprintln!("mcp-mock-server: session task failed: {error}");
                return ExitCode::FAILURE;
            }
            ExitCode::SUCCESS
        }
        // The client went away before `initialize`: an ordinary end, like EOF after it.
        Err(ServerInitializeError::ConnectionClosed(_)) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mcp-mock-server: session did not start: {error}");
            ExitCode::FAILURE
        }
    }
}
