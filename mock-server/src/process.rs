//! Starting a remote mock server as a separate process, as the client's tests, demo and
//! benchmark do (a process can be SIGKILLed and restarted on the same port; an in-process
//! server cannot really crash).

use std::{io, process::Stdio, time::Duration};

use tokio::{
    io::{AsyncBufReadExt, BufReader},
    process::{Child, Command},
};

/// Runs `program [prefix…] --transport KIND --port PORT` (e.g. `mcp-mock-server`, or
/// `mcp-resilient` with the prefix `mock-server`), waits at most `limit` for its
/// `LISTENING 127.0.0.1:<port>` line and returns the child (killed on drop) and that port.
/// `port` 0 picks a free port; the same port again restarts a killed server in place (hold it
/// with a [`PortHold`](crate::PortHold) meanwhile, so that nothing else takes it).
pub async fn spawn_process(
    program: &str,
    prefix: &[&str],
    kind: &str,
    port: u16,
    limit: Duration,
) -> io::Result<(Child, u16)> {
    let mut child = Command::new(program)
        .args(prefix)
        .args(["--transport", kind, "--port", &port.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| io::Error::other("the mock server's stdout was not captured"))?;
    let line = tokio::time::timeout(limit, BufReader::new(stdout).lines().next_line())
        .await
        .map_err(|_| {
            io::Error::new(
                io::ErrorKind::TimedOut,
                "the mock server did not report its port",
            )
        })??
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the mock server exited before listening",
            )
        })?;
    let port = line
        .strip_prefix("LISTENING ")
        .and_then(|addr| addr.rsplit(':').next())
        .and_then(|p| p.trim().parse().ok())
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("unexpected line: {line}"),
            )
        })?;
    Ok((child, port))
}
