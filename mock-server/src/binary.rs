//! What every mode of the binaries (`mcp-mock-server` and the fault proxies) shares: logs on
//! stderr, the `LISTENING` line, waiting for a signal, and a SIGTERM that is never delivered.

use std::io::Write;
use std::net::SocketAddr;
use std::time::Duration;

/// How long the runtime waits for blocking work (a stdin read) when the server ends.
pub(crate) const RUNTIME_SHUTDOWN: Duration = Duration::from_millis(200);

/// Logs to stderr, at `warn` unless `RUST_LOG` says otherwise. A host that already installed a
/// subscriber keeps it.
pub(crate) fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// Prints `LISTENING <addr>` on stdout and flushes it: the line a controlling process waits
/// for before it connects.
pub(crate) fn print_listening(addr: SocketAddr) {
    let mut stdout = std::io::stdout().lock();
    if writeln!(stdout, "LISTENING {addr}")
        .and_then(|()| stdout.flush())
        .is_err()
    {
        tracing::warn!("could not print the LISTENING line");
    }
}

/// Resolves on SIGINT or SIGTERM.
///
/// # Cancel safety
/// Cancel safe: dropping it only drops its signal listeners.
pub(crate) async fn wait_for_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut term) = signal(SignalKind::terminate()) else {
        let _ = tokio::signal::ctrl_c().await;
        return;
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}

/// Blocks SIGTERM in this (the main) thread, before the runtime starts its threads, which
/// inherit the mask: a SIGTERM then stays pending for good (visible as `ShdPnd` in
/// `/proc/<pid>/status`). Setting the disposition to SIG_IGN would need nix's `unsafe`
/// `signal`/`sigaction`, which this crate forbids; changing the mask is safe. We start no child
/// processes, which would inherit the mask too.
pub(crate) fn block_sigterm() -> nix::Result<()> {
    use nix::sys::signal::{SigSet, Signal};
    let mut set = SigSet::empty();
    set.add(Signal::SIGTERM);
    set.thread_block()
}
