//! The proxies as a command-line tool: [`proxy_main_with_args`].

use std::io::Write;
use std::process::ExitCode;

use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};

use super::args::{self, ProxyArgs};
use super::{HttpFaultProxy, ProxyMode, TcpProxy};
use crate::binary::{RUNTIME_SHUTDOWN, init_tracing, wait_for_signal};

/// Runs a proxy as a command: parses `args` (without the program name; the first one is the
/// form, `tcp` or `http`), prints `LISTENING 127.0.0.1:PORT`, and serves.
///
/// - `tcp --upstream 127.0.0.1:PORT [--port N]` reads commands on stdin, one per line, and
///   answers each on stdout with one line: `pass`, `blackhole`, `refuse` and `reset` answer
///   `OK <command>` once in effect; `stats` answers `{"mode":…,"open":…,"accepted":…}`;
///   anything else answers `ERR …`. It exits on stdin EOF, SIGTERM or SIGINT.
/// - `http --upstream http://127.0.0.1:PORT [--port N] [--fail-status N --fail-every K
///   [--retry-after S] [--fail-methods a,b] [--seed N]]` serves until stdin EOF, SIGTERM or
///   SIGINT, then prints `{"injected":…,"forwarded":…}`. Give it a stdin that stays open
///   (a pipe), not `/dev/null`.
///
/// Bad arguments print a message and the usage and return exit code 2; a proxy that cannot
/// start returns 1.
pub fn proxy_main_with_args<I: IntoIterator<Item = String>>(args: I) -> ExitCode {
    let args = match ProxyArgs::parse(args) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("proxy: {message}\n{}", args::USAGE);
            return ExitCode::from(2);
        }
    };
    init_tracing();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("proxy: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(async move {
        match args {
            ProxyArgs::Tcp { upstream, port } => match TcpProxy::start_on(upstream, port).await {
                Ok(proxy) => run_tcp(proxy).await,
                Err(error) => cannot_start(error),
            },
            ProxyArgs::Http {
                upstream,
                port,
                fault,
            } => match HttpFaultProxy::start_on(&upstream, port, fault).await {
                Ok(proxy) => run_http(proxy).await,
                Err(error) => cannot_start(error),
            },
        }
    });
    // The stdin reader is a blocking thread that only ends at the next line; do not wait on it.
    runtime.shutdown_timeout(RUNTIME_SHUTDOWN);
    code
}

fn cannot_start(error: std::io::Error) -> ExitCode {
    eprintln!("proxy: cannot start: {error}");
    ExitCode::FAILURE
}

/// Prints one line on stdout and flushes it (a controlling process waits for each).
fn say(line: &str) {
    let mut stdout = std::io::stdout().lock();
    if writeln!(stdout, "{line}")
        .and_then(|()| stdout.flush())
        .is_err()
    {
        tracing::warn!("could not write to stdout");
    }
}

async fn run_tcp(proxy: TcpProxy) -> ExitCode {
    say(&format!("LISTENING {}", proxy.addr()));
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let signal = wait_for_signal();
    tokio::pin!(signal);
    loop {
        let line = tokio::select! {
            () = &mut signal => break,
            // `next_line` is cancel safe.
            line = lines.next_line() => match line {
                Ok(Some(line)) => line,
                Ok(None) | Err(_) => break,
            },
        };
        say(&tcp_command(&proxy, line.trim()));
    }
    proxy.shutdown().await;
    ExitCode::SUCCESS
}

/// Applies one stdin command and returns the reply line.
fn tcp_command(proxy: &TcpProxy, command: &str) -> String {
    let mode = match command {
        "pass" => ProxyMode::Pass,
        "blackhole" => ProxyMode::BlackHole,
        "refuse" => ProxyMode::Refuse,
        "reset" => {
            proxy.reset_all();
            return "OK reset".into();
        }
        "stats" => {
            let stats = json!({
                "mode": proxy.mode().as_str(),
                "open": proxy.open_connections(),
                "accepted": proxy.accepted(),
            });
            return stats.to_string();
        }
        other => {
            return format!("ERR unknown command {other:?}: pass|blackhole|refuse|reset|stats");
        }
    };
    proxy.set_mode(mode);
    format!("OK {command}")
}

async fn run_http(proxy: HttpFaultProxy) -> ExitCode {
    say(&format!("LISTENING {}", proxy.addr()));
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let stdin_closed = async { while let Ok(Some(_)) = lines.next_line().await {} };
    tokio::select! {
        () = wait_for_signal() => {}
        () = stdin_closed => {}
    }
    let totals = json!({"injected": proxy.injected(), "forwarded": proxy.forwarded()});
    proxy.shutdown().await;
    say(&totals.to_string());
    ExitCode::SUCCESS
}
