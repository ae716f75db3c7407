//! Watching a child exit without reaping it.
//!
//! The group sweep (SIGKILL to the child's process group) must run while the leader is still a
//! zombie: once the leader is reaped, its pid — which is also the group id — can be handed to an
//! unrelated process, and a late `killpg` would hit that process's group. So an exit is observed
//! with `waitid(…, WNOWAIT)`, which leaves the child waitable, and the leader is reaped only after
//! the sweep. There is no safe way to be woken for an exit without reaping (a pidfd needs an
//! unsafe registration with the reactor), so the watcher looks again after 1 ms, 2 ms, 4 ms …
//! up to 20 ms; it only runs while a generation is being closed or its end explained.
//!
//! # Invariants
//!
//! 1. Nothing here reaps: after [`ExitWatch::exited`] returns, the child is still a zombie until
//!    its owner awaits `Child::wait`.

use std::{fmt, time::Duration};

use nix::{
    errno::Errno,
    sys::{
        signal::Signal,
        wait::{Id, WaitPidFlag, WaitStatus, waitid},
    },
    unistd::Pid,
};

/// The first and the longest pause between two looks.
const POLL_FIRST: Duration = Duration::from_millis(1);
const POLL_MAX: Duration = Duration::from_millis(20);

/// How a child ended, observed before it was reaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::transport) enum Exit {
    /// It exited with this code.
    Code(i32),
    /// A signal ended it.
    Signal(Signal),
    /// It is no longer our child (reaped elsewhere); the status is unknown.
    Gone,
}

impl fmt::Display for Exit {
    /// The same words as `std::process::ExitStatus`: `exit status: 3`, `signal: 9 (SIGKILL)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Exit::Code(code) => write!(f, "exit status: {code}"),
            Exit::Signal(signal) => write!(f, "signal: {} ({})", *signal as i32, signal.as_str()),
            Exit::Gone => f.write_str("exited (status unknown)"),
        }
    }
}

/// Watches one child for its exit.
#[derive(Debug)]
pub(in crate::transport) struct ExitWatch {
    pid: Pid,
}

impl ExitWatch {
    pub(crate) fn new(pid: Pid) -> Self {
        ExitWatch { pid }
    }

    /// How the child ended, if it has; it stays unreaped.
    pub(in crate::transport) fn peek(&self) -> Option<Exit> {
        let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
        match waitid(Id::Pid(self.pid), flags) {
            Ok(WaitStatus::Exited(_, code)) => Some(Exit::Code(code)),
            Ok(WaitStatus::Signaled(_, signal, _)) => Some(Exit::Signal(signal)),
            Ok(_) => None,
            Err(Errno::EINTR) => None,
            Err(_) => Some(Exit::Gone),
        }
    }

    /// Waits until the child has exited; it stays unreaped.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: it only observes.
    pub(in crate::transport) async fn exited(&self) -> Exit {
        let mut pause = POLL_FIRST;
        loop {
            if let Some(exit) = self.peek() {
                return exit;
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(POLL_MAX);
        }
    }
}
