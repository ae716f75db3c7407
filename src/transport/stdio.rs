//! The stdio transport: one child process per generation.
//!
//! # Invariants
//!
//! 1. The child leads its own process group, so wrappers (`sh -c`, `npx`, `uvx`) and their
//!    children are signalled and swept together.
//! 2. The child sees only the allowlisted host environment plus the configured `env`: the
//!    host's secrets do not leak into every server.
//! 3. [`ChildGuard::dispose`] returns only after the leader has been reaped and its group
//!    SIGKILLed: stdin closed → `stdin_close_grace` → SIGTERM → `term_grace` → SIGKILL → reap.
//!    The supervisor awaits it (bounded by `close_timeout`) before it starts the next
//!    generation, so two children of one server are never alive at once.
//! 4. stderr is drained line by line (lines over 8 KiB are dropped) into `tracing`, so a chatty
//!    child can never block on a full pipe and memory stays bounded.

use std::{collections::VecDeque, process::Stdio, sync::Arc, time::Duration};

use futures::StreamExt;
use nix::{sys::signal::Signal, unistd::Pid};
use tokio::{
    process::{Child, ChildStdin, ChildStdout, Command},
    task::JoinHandle,
};
use tokio_util::codec::{FramedRead, LinesCodec};

use crate::{config::StdioConfig, state::Generation};

const STDERR_LINE_MAX: usize = 8 * 1024;
const STDERR_TAIL: usize = 4;

/// The child of one generation, until it is disposed.
#[derive(Debug)]
pub(crate) struct ChildGuard {
    child: Child,
    /// The process group id (= the child's pid); `None` if the OS gave no pid.
    pgid: Option<Pid>,
    stdin_close_grace: Duration,
    term_grace: Duration,
    stderr: JoinHandle<()>,
    /// The last few stderr lines, for the death detail.
    tail: Arc<std::sync::Mutex<VecDeque<String>>>,
    /// The exit status once known.
    status: Option<std::process::ExitStatus>,
}

/// Spawns the child for `generation`. Returns its stdout (to read), stdin (to write) and guard.
pub(crate) fn spawn(
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
    let mut child = command.spawn()?;
    let missing = || std::io::Error::other("child pipes were not captured");
    let stdout = child.stdout.take().ok_or_else(missing)?;
    let stdin = child.stdin.take().ok_or_else(missing)?;
    let stderr = child.stderr.take().ok_or_else(missing)?;
    let pgid = child.id().map(|pid| Pid::from_raw(pid as i32));
    tracing::debug!(server, generation, pid = ?child.id(), command = %config.command, "spawned child");
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
        stdin_close_grace: config.stdin_close_grace,
        term_grace: config.term_grace,
        stderr,
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
                tracing::info!(target: "mcp_resilient::stderr", server = %server, generation, "{line}");
                let mut tail = tail.lock().unwrap_or_else(|e| e.into_inner());
                if tail.len() == STDERR_TAIL {
                    tail.pop_front();
                }
                tail.push_back(line);
            }
            Err(tokio_util::codec::LinesCodecError::MaxLineLengthExceeded) => {
                tracing::debug!(server = %server, generation, "dropped an overlong stderr line");
            }
            Err(tokio_util::codec::LinesCodecError::Io(_)) => break,
        }
    }
}

impl ChildGuard {
    /// The child's pid, while it has one.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.pgid.map(|p| p.as_raw() as u32)
    }

    /// `exit status: N` (plus the last stderr line) if the child exits within `within`.
    pub(crate) async fn exit_detail(&mut self, within: Duration) -> Option<String> {
        if self.status.is_none() {
            self.status = tokio::time::timeout(within, self.child.wait())
                .await
                .ok()?
                .ok();
        }
        let status = self.status?;
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

    /// Ends the child and its group; returns once the leader is reaped. Stdin must already be
    /// closed (the rmcp transport owns it and drops it when the session ends).
    ///
    /// # Cancel safety
    ///
    /// Not cancel-safe in spirit: dropping the future part-way leaves the rest to
    /// `kill_on_drop`, which does not wait. The supervisor always awaits it to the end.
    pub(crate) async fn dispose(mut self) {
        if self.status.is_none() {
            self.status = self.wait_for(self.stdin_close_grace).await;
        }
        if self.status.is_none() {
            self.signal(Signal::SIGTERM);
            self.status = self.wait_for(self.term_grace).await;
        }
        if self.status.is_none() {
            self.signal(Signal::SIGKILL);
            self.status = self.child.wait().await.ok();
        }
        // Sweep whatever the leader left in its group (grandchildren of wrappers).
        self.signal(Signal::SIGKILL);
        // With every writer gone the stderr pipe ends; don't wait on a leaked descriptor.
        if tokio::time::timeout(Duration::from_millis(500), &mut self.stderr)
            .await
            .is_err()
        {
            self.stderr.abort();
        }
        tracing::debug!(pid = ?self.pid(), status = ?self.status, "child disposed");
    }

    async fn wait_for(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        tokio::time::timeout(limit, self.child.wait())
            .await
            .ok()?
            .ok()
    }

    fn signal(&self, signal: Signal) {
        if let Some(pgid) = self.pgid {
            // ESRCH (group already empty) is the normal case after a clean exit.
            let _ = nix::sys::signal::killpg(pgid, signal);
        }
    }
}
