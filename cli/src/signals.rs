//! SIGINT and SIGTERM, for every command.
//!
//! The first signal asks for the orderly close: `proxy`, `watch`, `tools` and `call` shut their
//! servers down (children reaped, sessions ended, each step bounded by the server's
//! `close_timeout`) and return; the other commands hold nothing that needs closing and end at
//! once. A second signal ends any command at once; a stdio child then dies with the process
//! (its death signal), not by the orderly stop.

use std::sync::{
    Arc,
    atomic::{AtomicI32, Ordering},
};

use tokio_util::sync::CancellationToken;

/// The signals received so far. Cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct Signals {
    /// Cancelled by the first signal.
    pub(crate) stop: CancellationToken,
    /// Cancelled by the second.
    pub(crate) force: CancellationToken,
    /// The number of the first signal, 0 before it.
    first: Arc<AtomicI32>,
}

impl Signals {
    /// Starts listening (on the current runtime). If the signals cannot be caught they keep
    /// their default action (the process ends at once), and the tokens are never cancelled.
    pub(crate) fn listen() -> Self {
        let signals = Signals {
            stop: CancellationToken::new(),
            force: CancellationToken::new(),
            first: Arc::new(AtomicI32::new(0)),
        };
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let (Ok(mut term), Ok(mut int)) = (
                signal(SignalKind::terminate()),
                signal(SignalKind::interrupt()),
            ) else {
                tracing::debug!("cannot catch SIGINT and SIGTERM; they end the process at once");
                return signals;
            };
            let seen = signals.clone();
            tokio::spawn(async move {
                for round in 0..2 {
                    let number = tokio::select! {
                        _ = term.recv() => SignalKind::terminate().as_raw_value(),
                        _ = int.recv() => SignalKind::interrupt().as_raw_value(),
                    };
                    if round == 0 {
                        seen.first.store(number, Ordering::SeqCst);
                        tracing::info!(signal = number, "signal received; closing");
                        seen.stop.cancel();
                    } else {
                        tracing::info!(signal = number, "second signal received; exiting now");
                        seen.force.cancel();
                    }
                }
            });
        }
        signals
    }

    /// The shell's exit code for a command ended by the signal: 128 + its number.
    pub(crate) fn exit_code(&self) -> u8 {
        let number = self.first.load(Ordering::SeqCst).clamp(0, 127);
        128 + number as u8
    }
}
