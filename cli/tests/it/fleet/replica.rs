//! One `serve` replica of the fleet: a real process on a port of its own (held for restarts),
//! with the mock server over HTTP as its upstream and Redis as its store.

use std::process::Stdio;

use mcp_mock_server::PortHold;
use tokio::{process::Child, sync::watch};

use crate::{
    common::mock_binary,
    serve::gateway::{FAST, capture_stderr, serving_url},
};

/// One replica: its process while it runs, and its port.
pub struct Replica {
    child: Option<Child>,
    pub port: u16,
    upstream: String,
    store: String,
    extra: Vec<String>,
    log: watch::Receiver<Vec<String>>,
    _hold: PortHold,
}

impl Replica {
    /// Starts `serve` on a free port, in front of `upstream` (an HTTP MCP URL), with `store`.
    pub async fn start(upstream: &str, store: &str) -> Replica {
        Self::start_with(upstream, store, &[]).await
    }

    /// [`Replica::start`] with `extra` arguments to `serve`.
    pub async fn start_with(upstream: &str, store: &str, extra: &[&str]) -> Replica {
        let hold = PortHold::new().expect("a free port");
        let mut replica = Replica {
            child: None,
            port: hold.port(),
            upstream: upstream.to_owned(),
            store: store.to_owned(),
            extra: extra.iter().map(|a| (*a).to_owned()).collect(),
            log: watch::channel(Vec::new()).1,
            _hold: hold,
        };
        replica.spawn().await;
        replica
    }

    /// `http://127.0.0.1:PORT/mcp`
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// What the running process wrote on stderr so far.
    pub fn log(&self) -> Vec<String> {
        self.log.borrow().clone()
    }

    async fn spawn(&mut self) {
        let listen = format!("127.0.0.1:{}", self.port);
        let mut child = tokio::process::Command::new(mock_binary())
            .args(["serve", "--listen", &listen, "--store", &self.store])
            .args(FAST)
            // A session-era upstream: a renewed subscription and level show as requests.
            .args(["--protocol", "2025-11-25"])
            .args([
                "--name",
                "mock",
                "--transport",
                "http",
                "--url",
                &self.upstream,
            ])
            .args(&self.extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("serve starts");
        let mut log = capture_stderr(&mut child, "replica");
        serving_url(&mut log).await;
        self.log = log;
        self.child = Some(child);
    }

    /// SIGKILL, and waits for the exit.
    pub async fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().await.expect("replica killed");
        }
    }

    /// SIGTERM: a deploy's stop, which the replica drains.
    pub fn sigterm(&self) {
        let child = self.child.as_ref().expect("the replica runs");
        let pid = child.id().expect("running") as i32;
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGTERM,
        )
        .expect("SIGTERM");
    }

    /// Waits (bounded) for the exit.
    pub async fn exited(&mut self) -> std::process::ExitStatus {
        let mut child = self.child.take().expect("the replica runs");
        tokio::time::timeout(crate::common::LIMIT, child.wait())
            .await
            .expect("the replica exits in time")
            .expect("wait")
    }

    /// Starts it again on the same port.
    pub async fn restart(&mut self) {
        self.spawn().await;
    }
}
