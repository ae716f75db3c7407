//! stdio mode: newline-delimited JSON-RPC on stdin/stdout, one session for the process life.

use std::process::ExitCode;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, ServerInitializeError, TxJsonRpcMessage, serve_server};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;

use crate::crash::CrashTap;
use crate::handler::MockHandler;
use crate::shared::Shared;

/// The server-side transport of stdio mode: it swallows every outgoing message while hung, and
/// keeps the session open after stdin EOF when asked to (or when hung) until a signal ends us.
struct HangAware<T> {
    inner: T,
    shared: Arc<Shared>,
    ignore_eof: bool,
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for HangAware<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        // Decided when the message is queued: the `hang` tool sets the flag before its own reply.
        let send = (!self.shared.is_hung()).then(|| self.inner.send(item));
        async move {
            match send {
                Some(send) => send.await,
                None => Ok(()),
            }
        }
    }

    /// # Cancel safety
    /// Cancel safe: the inner receive is, and the post-EOF wait holds no data.
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        if let Some(message) = self.inner.receive().await {
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

/// Serves one session on stdin/stdout until stdin closes (exit 0) or `crash` exits the process.
pub(crate) async fn run(shared: Arc<Shared>, ignore_eof: bool) -> ExitCode {
    eprintln!(
        "mcp-mock-server {} ready pid={}",
        shared.boot_id, shared.pid
    );
    let stdout = CrashTap::new(tokio::io::stdout(), shared.crash.clone());
    let transport = HangAware {
        inner: AsyncRwTransport::new_server(tokio::io::stdin(), stdout),
        shared: shared.clone(),
        ignore_eof,
    };
    match serve_server(MockHandler::new(shared), transport).await {
        Ok(running) => {
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
