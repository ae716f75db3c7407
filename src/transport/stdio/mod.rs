//! The stdio transport: one child process per generation.
//!
//! # Invariants
//!
//! 1. The child leads its own process group, so wrappers (`sh -c`, `npx`, `uvx`) and their
//!    children are signalled and swept together.
//! 2. The child sees only the allowlisted host environment plus the configured `env`: the
//!    host's secrets do not leak into every server.
//! 3. [`ChildGuard::dispose`] returns only after the leader has exited, its group has been
//!    swept with SIGKILL *while the leader was still unreaped* (so the group id cannot have been
//!    reused), and the leader has been reaped: grace → SIGTERM → `term_grace` → SIGKILL → sweep
//!    → reap. The grace is `stdin_close_grace` for an orderly close and a short fixed one for a
//!    generation judged dead. The escalation never waits on the rmcp session: a child that does
//!    not read its stdin (a full pipe) is signalled all the same. The supervisor awaits it
//!    (bounded by `close_timeout`) before it starts the next generation, so two children of one
//!    server are never alive at once.
//! 4. The child dies with this process even when it is SIGKILLed (Linux: a death signal set
//!    between fork and exec, from a thread that lives as long as the process; see
//!    [`spawner`]).
//! 5. stderr is drained line by line (lines over 8 KiB are dropped) into `tracing`, so a chatty
//!    child can never block on a full pipe and memory stays bounded.
//! 6. stdout is read through [`BoundedLines`]: a line over `limits.max_message_bytes` ends the
//!    generation (cause `limit_exceeded`) instead of growing a buffer.

use std::{collections::VecDeque, process::Stdio, sync::Arc, time::Duration};

use futures::StreamExt;
use nix::{sys::signal::Signal, unistd::Pid};
use tokio::{
    process::{Child, ChildStdin, ChildStdout, Command},
    task::JoinHandle,
};
use tokio_util::codec::{FramedRead, LinesCodec};

use super::Stop;
use crate::{config::StdioConfig, state::Generation};

mod bounded;
mod exit;
// Its items that `crate::fuzzing` re-exports are `pub`.
#[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
mod lines;
mod spawner;

pub(crate) use bounded::BoundedLines;
use exit::{Exit, ExitWatch};
// For `crate::fuzzing` alone.
#[cfg(feature = "fuzzing")]
pub use lines::StdioTransport;
#[cfg(not(feature = "fuzzing"))]
pub(crate) use lines::StdioTransport;

/// How long a death's detail waits for the stderr drain to take the child's last lines.
const TAIL_WAIT: Duration = Duration::from_millis(100);

/// The grace a child judged dead gets before SIGTERM.
const DEAD_GRACE: Duration = Duration::from_millis(100);

const STDERR_LINE_MAX: usize = 8 * 1024;
const STDERR_TAIL: usize = 4;

/// The child of one generation, until it is disposed.
#[derive(Debug)]
pub(crate) struct ChildGuard {
    child: Child,
    /// The process group id (= the child's pid); `None` if the OS gave no pid.
    pgid: Option<Pid>,
    /// Observes the leader's exit without reaping it; `None` if the OS gave no pid.
    exit: Option<ExitWatch>,
    stdin_close_grace: Duration,
    term_grace: Duration,
    /// The stderr drain; `None` once it has been seen to finish.
    stderr: Option<JoinHandle<()>>,
    /// The last few stderr lines, for the death detail.
    tail: Arc<std::sync::Mutex<VecDeque<String>>>,
    /// How the leader ended, once known (it stays unreaped until `dispose`).
    status: Option<Exit>,
}

/// What is left after [`ChildGuard::dispose`]: whether the child was reaped, and its stderr
/// drain (which ends once every writer of the pipe is gone).
#[derive(Debug)]
pub(crate) struct Disposed {
    pub(crate) reaped: bool,
    stderr: Option<JoinHandle<()>>,
}

impl Disposed {
    /// Nothing was there to dispose of.
    pub(in crate::transport) fn nothing() -> Self {
        Disposed {
            reaped: true,
            stderr: None,
        }
    }

    /// Lets the stderr drain finish (at most 500 ms: a grandchild that escaped the group may
    /// hold the pipe), then stops it.
    pub(crate) async fn finish(self) {
        if let Some(mut stderr) = self.stderr
            && tokio::time::timeout(Duration::from_millis(500), &mut stderr)
                .await
                .is_err()
        {
            stderr.abort();
        }
    }
}

/// Spawns the child for `generation`. Returns its stdout (to read), stdin (to write) and guard.
pub(crate) async fn spawn(
    config: &StdioConfig,
    server: &str,
    generation: Generation,
) -> std::io::Result<(ChildStdout, ChildStdin, ChildGuard)> {
    let mut command = Command::new(&config.command);
    command
        .args(&config.args)
        .env_clear()
        .envs(
            config
                .env_allowlist
                .iter()
                .filter_map(|key| std::env::var_os(key).map(|value| (key, value))),
        )
        .envs(&config.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(cwd) = &config.cwd {
        command.current_dir(cwd);
    }
    let mut child = spawner::spawn(command).await?;
    let missing = || std::io::Error::other("child pipes were not captured");
    let stdout = child.stdout.take().ok_or_else(missing)?;
    let stdin = child.stdin.take().ok_or_else(missing)?;
    let stderr = child.stderr.take().ok_or_else(missing)?;
    let pgid = child.id().map(|pid| Pid::from_raw(pid as i32));
    tracing::debug!(server, %generation, pid = ?child.id(), command = %config.command, "spawned child");
    let tail = Arc::new(std::sync::Mutex::new(VecDeque::with_capacity(STDERR_TAIL)));
    let stderr = tokio::spawn(drain_stderr(
        stderr,
        server.to_owned(),
        generation,
        tail.clone(),
    ));
    let guard = ChildGuard {
        child,
        pgid,
        exit: pgid.map(ExitWatch::new),
        stdin_close_grace: config.stdin_close_grace,
        term_grace: config.term_grace,
        stderr: Some(stderr),
        tail,
        status: None,
    };
    Ok((stdout, stdin, guard))
}

async fn drain_stderr(
    stderr: tokio::process::ChildStderr,
    server: String,
    generation: Generation,
    tail: Arc<std::sync::Mutex<VecDeque<String>>>,
) {
    let mut lines = FramedRead::new(stderr, LinesCodec::new_with_max_length(STDERR_LINE_MAX));
    while let Some(line) = lines.next().await {
        match line {
            Ok(line) => {
                tracing::info!(target: "mcp_resilient::stderr", server = %server, %generation, "{line}");
                let mut tail = tail.lock().unwrap_or_else(|e| e.into_inner());
                if tail.len() == STDERR_TAIL {
                    tail.pop_front();
                }
                tail.push_back(line);
            }
            Err(tokio_util::codec::LinesCodecError::MaxLineLengthExceeded) => {
                tracing::debug!(server = %server, %generation, "dropped an overlong stderr line");
            }
            Err(tokio_util::codec::LinesCodecError::Io(_)) => break,
        }
    }
}

impl ChildGuard {
    /// The child's pid, while it has one.
    pub(in crate::transport) fn pid(&self) -> Option<u32> {
        self.pgid.map(|p| p.as_raw() as u32)
    }

    /// `exit status: N` (plus the last stderr line) if the child exits within `within`. The
    /// child is not reaped.
    pub(crate) async fn exit_detail(&mut self, within: Duration) -> Option<String> {
        if self.status.is_none() {
            self.status = self.wait_exit(within).await;
        }
        let status = self.status?;
        // The child's last words may still be in the pipe, unread: let the drain reach the
        // pipe's end first. With the child gone that is at once, unless a grandchild that left
        // the group holds the pipe open; hence the bound.
        if let Some(drain) = self.stderr.as_mut()
            && tokio::time::timeout(TAIL_WAIT, drain).await.is_ok()
        {
            self.stderr = None;
        }
        let last = self
            .tail
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .back()
            .cloned();
        Some(match last {
            Some(line) => format!("{status}; last stderr line: {line}"),
            None => status.to_string(),
        })
    }

    /// Ends the child and its group within `limit`; returns once the leader is reaped
    /// (invariant 3), or when `limit` ran out with the leader still not gone (a process in
    /// uninterruptible sleep: then `reaped` is false and the child is left to `kill_on_drop`).
    /// The stderr drain is handed back, to be finished outside the close barrier.
    ///
    /// # Cancel safety
    ///
    /// Not cancel-safe in spirit: dropping the future part-way leaves the rest to
    /// `kill_on_drop`, which does not wait. The supervisor awaits it to the end.
    pub(crate) async fn dispose(mut self, stop: Stop, limit: Duration) -> Disposed {
        let deadline = crate::clock::deadline_in(limit);
        let grace = match stop {
            Stop::Graceful => self.stdin_close_grace,
            Stop::Dead => self.stdin_close_grace.min(DEAD_GRACE),
        };
        if self.status.is_none() {
            self.status = self.wait_exit(grace).await;
        }
        if self.status.is_none() {
            self.signal(Signal::SIGTERM);
            self.status = self.wait_exit(self.term_grace).await;
        }
        if self.status.is_none() {
            self.signal(Signal::SIGKILL);
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            self.status = self.wait_exit(left).await;
        }
        // Sweep whatever the leader left in its group (grandchildren of wrappers) while the
        // leader is still unreaped, so the group id cannot belong to anyone else yet.
        self.signal(Signal::SIGKILL);
        let reaped = match self.status {
            Some(_) => self.child.wait().await.is_ok(),
            None => {
                tracing::error!(pid = ?self.pid(), "the child did not exit after SIGKILL within {limit:?}");
                false
            }
        };
        tracing::debug!(pid = ?self.pid(), status = ?self.status, ?stop, reaped, "child disposed");
        Disposed {
            reaped,
            stderr: self.stderr,
        }
    }

    /// The leader's exit, if it happens within `limit`; it stays unreaped.
    async fn wait_exit(&self, limit: Duration) -> Option<Exit> {
        let exit = self.exit.as_ref()?;
        tokio::time::timeout(limit, exit.exited()).await.ok()
    }

    fn signal(&self, signal: Signal) {
        if let Some(pgid) = self.pgid {
            // ESRCH (group already empty) is the normal case after a clean exit.
            let _ = nix::sys::signal::killpg(pgid, signal);
        }
    }
}

#[cfg(test)]
mod tests;
