//! Serving a [`Script`]: a line loop on stdio, or `POST /mcp` on 127.0.0.1.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures::StreamExt;
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::codec::{FramedRead, LinesCodec, LinesCodecError};
use tokio_util::sync::CancellationToken;

use super::options::ReplyOptions;
use super::script::Script;
use crate::binary::{print_listening, wait_for_signal};

/// The longest request line read on stdio; a longer one is skipped.
const LINE_MAX: usize = 1024 * 1024;

/// How long a shutdown waits for open connections before it aborts them.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(2);

/// stdio: answers each line of stdin on stdout until stdin ends or stdout is closed.
pub(super) async fn stdio(script: Script) -> ExitCode {
    let mut lines = FramedRead::new(
        tokio::io::stdin(),
        LinesCodec::new_with_max_length(LINE_MAX),
    );
    let mut stdout = tokio::io::stdout();
    while let Some(line) = lines.next().await {
        let line = match line {
            Ok(line) => line,
            Err(LinesCodecError::MaxLineLengthExceeded) => continue,
            Err(LinesCodecError::Io(_)) => break,
        };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        // One write for the whole answer: a flood arrives as one burst, as fast as the client
        // reads.
        let mut out = String::new();
        for text in script.answer(&message) {
            out.push_str(&text);
            out.push('\n');
        }
        if out.is_empty() {
            continue;
        }
        let written = async {
            stdout.write_all(out.as_bytes()).await?;
            stdout.flush().await
        };
        if written.await.is_err() {
            return ExitCode::SUCCESS;
        }
    }
    ExitCode::SUCCESS
}

/// A hostile-replies server on Streamable HTTP, in-process. Dropping it stops it without
/// waiting; [`HostileReplies::shutdown`] waits.
pub struct HostileReplies {
    addr: SocketAddr,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl HostileReplies {
    /// Binds 127.0.0.1:`options.port` and serves `POST /mcp`.
    pub async fn start(options: ReplyOptions) -> io::Result<Self> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, options.port)).await?;
        let addr = listener.local_addr()?;
        let script = Arc::new(Script::new(options));
        let not_allowed = || async { StatusCode::METHOD_NOT_ALLOWED };
        let router = Router::new()
            .route("/mcp", post(answer).get(not_allowed).delete(not_allowed))
            .with_state(script);
        let stop = CancellationToken::new();
        let stopped = stop.clone().cancelled_owned();
        let task = tokio::spawn(async move {
            let served = axum::serve(listener, router).with_graceful_shutdown(stopped);
            if let Err(error) = served.await {
                tracing::warn!(%error, "hostile server ended with an error");
            }
        });
        Ok(Self { addr, stop, task })
    }

    /// The bound address (127.0.0.1:port).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:<port>/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Stops serving and waits (at most 2 s, then aborts) until every connection has ended.
    pub async fn shutdown(mut self) {
        self.stop.cancel();
        if tokio::time::timeout(SHUTDOWN_WAIT, &mut self.task)
            .await
            .is_err()
        {
            self.task.abort();
        }
    }
}

impl Drop for HostileReplies {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// One POST: nothing to say is 202, one message a JSON body, several one SSE response.
async fn answer(State(script): State<Arc<Script>>, body: Bytes) -> Response {
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let mut texts = script.answer(&message);
    match texts.len() {
        0 => StatusCode::ACCEPTED.into_response(),
        1 => {
            let text = texts.remove(0);
            ([(header::CONTENT_TYPE, "application/json")], text).into_response()
        }
        _ => {
            let events: String = texts
                .iter()
                .map(|text| format!("event: message\ndata: {text}\n\n"))
                .collect();
            let headers = [
                (header::CONTENT_TYPE, "text/event-stream"),
                (header::CACHE_CONTROL, "no-cache"),
            ];
            (headers, Body::from(events)).into_response()
        }
    }
}

/// The binary's remote mode: serve until SIGINT or SIGTERM.
pub(super) async fn http_main(options: ReplyOptions) -> ExitCode {
    let port = options.port;
    let server = match HostileReplies::start(options).await {
        Ok(server) => server,
        Err(error) => {
            eprintln!("mcp-mock-server: cannot listen on port {port}: {error}");
            return ExitCode::FAILURE;
        }
    };
    print_listening(server.addr());
    wait_for_signal().await;
    server.shutdown().await;
    ExitCode::SUCCESS
}
