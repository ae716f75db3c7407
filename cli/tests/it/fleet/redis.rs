//! A `redis-server` of the test's own: loopback, a free port, no persistence, in a temp dir;
//! stopped with SIGKILL and started again on the same port; and a few commands over RESP.

use std::{path::PathBuf, process::Stdio};

use mcp_mock_server::PortHold;
use tokio::{
    io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt},
    process::Child,
};

use crate::common::LIMIT;

/// One `redis-server` process.
pub struct Redis {
    child: Option<Child>,
    pub port: u16,
    dir: PathBuf,
    _hold: PortHold,
}

impl Redis {
    /// Starts `redis-server` in `dir` on a free port and waits for it to accept connections.
    pub async fn start(dir: &std::path::Path) -> Redis {
        let hold = PortHold::new().expect("a free port");
        let mut redis = Redis {
            child: None,
            port: hold.port(),
            dir: dir.to_owned(),
            _hold: hold,
        };
        redis.spawn().await;
        redis
    }

    /// `redis://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    async fn spawn(&mut self) {
        let port = self.port.to_string();
        let mut child = tokio::process::Command::new("redis-server")
            .args(["--port", &port, "--bind", "127.0.0.1", "--save", ""])
            .args(["--appendonly", "no", "--daemonize", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| {
                panic!("redis-server could not be started ({e}): the fleet tests need Debian's redis-server")
            });
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        let ready = tokio::time::timeout(LIMIT, async {
            while let Ok(Some(line)) = lines.next_line().await {
                if line.contains("Ready to accept connections") {
                    return true;
                }
            }
            false
        })
        .await;
        assert_eq!(ready, Ok(true), "redis-server did not become ready");
        // Its later lines are drained, so that it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        self.child = Some(child);
    }

    /// SIGKILL, and waits for the exit.
    pub async fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().await.expect("redis-server killed");
        }
    }

    /// SIGSTOP (`true`) or SIGCONT (`false`): a stopped Redis keeps its connections and answers
    /// nothing, as a Redis that stalls does. A stopped one is still killed on drop.
    pub fn stall(&self, stalled: bool) {
        let pid = self
            .child
            .as_ref()
            .and_then(Child::id)
            .expect("redis-server runs");
        let signal = if stalled {
            nix::sys::signal::Signal::SIGSTOP
        } else {
            nix::sys::signal::Signal::SIGCONT
        };
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), signal).expect("signal");
    }

    /// Starts it again on the same port (empty: nothing was saved).
    pub async fn restart(&mut self) {
        self.spawn().await;
    }

    /// Sends one command and returns the raw reply (RESP), read until it is whole.
    pub async fn command(&self, args: &[&str]) -> String {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", self.port))
            .await
            .expect("connect to redis");
        let mut out = format!("*{}\r\n", args.len());
        for arg in args {
            out.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
        }
        stream.write_all(out.as_bytes()).await.expect("write");
        let mut reply = Vec::new();
        tokio::time::timeout(LIMIT, async {
            let mut buf = [0u8; 4096];
            loop {
                let n = stream.read(&mut buf).await.expect("read");
                reply.extend_from_slice(&buf[..n]);
                if n == 0 || whole(&reply) {
                    break;
                }
            }
        })
        .await
        .expect("redis answers in time");
        String::from_utf8_lossy(&reply).into_owned()
    }

    /// Every key in this Redis with its value (hashes as all their fields), as one text: what a
    /// reader of the store would see.
    pub async fn everything(&self) -> String {
        let keys = self.command(&["KEYS", "*"]).await;
        let mut all = String::new();
        for key in keys
            .split("\r\n")
            .filter(|l| l.starts_with("mcp-resilient:"))
        {
            all.push_str(key);
            all.push('\n');
            let kind = self.command(&["TYPE", key]).await;
            let value = if kind.contains("hash") {
                self.command(&["HGETALL", key]).await
            } else {
                self.command(&["GET", key]).await
            };
            all.push_str(&value);
        }
        all
    }

    /// The keys of host-session records.
    pub async fn host_keys(&self) -> Vec<String> {
        let reply = self.command(&["KEYS", "mcp-resilient:host:*"]).await;
        reply
            .split("\r\n")
            .filter(|line| line.starts_with("mcp-resilient:host:"))
            .map(str::to_owned)
            .collect()
    }
}

/// Whether a RESP reply (a simple value, or an array of bulk strings) is complete.
fn whole(reply: &[u8]) -> bool {
    let text = String::from_utf8_lossy(reply);
    let Some(first) = text.split("\r\n").next() else {
        return false;
    };
    if !text.ends_with("\r\n") {
        return false;
    }
    match first.strip_prefix('*') {
        // An array of n bulk strings: 1 + 2n lines.
        Some(n) => {
            let n: usize = n.parse().unwrap_or(0);
            text.matches("\r\n").count() > 2 * n
        }
        None => !first.starts_with('$') || text.matches("\r\n").count() >= 2,
    }
}
