//! `scripts/fleet.sh` as a person runs it: the fleet it stands up serves a host through nginx,
//! goes on serving when a replica is SIGKILLed, and everything it started stops with it.

use std::process::Stdio;

use nix::{
    sys::signal::{Signal, kill, killpg},
    unistd::Pid,
};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::{
    common::{LIMIT, host::text, mock_binary},
    serve::gateway::HttpHost,
};

/// The script, its replicas (pid and port, as it prints them) and the fleet's URL.
struct Script {
    child: tokio::process::Child,
    replicas: Vec<(i32, u16)>,
    url: String,
}

impl Script {
    async fn start() -> Script {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
        let mut child = tokio::process::Command::new("bash")
            .arg(format!("{root}/scripts/fleet.sh"))
            .arg("2")
            .env("MCP_RESILIENT", mock_binary())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            // A group of its own: what it starts is in it too (see `Drop`).
            .process_group(0)
            .spawn()
            .expect("bash runs fleet.sh");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let mut replicas = Vec::new();
        let read = async {
            while let Some(line) = lines.next_line().await.expect("a line") {
                // "replica 1: http://127.0.0.1:PORT/mcp (pid PID, log …)"
                if let Some(rest) = line.strip_prefix("replica ") {
                    let pid = rest
                        .split("(pid ")
                        .nth(1)
                        .and_then(|p| p.split(',').next())
                        .and_then(|p| p.parse().ok())
                        .unwrap_or_else(|| panic!("a pid in {line:?}"));
                    let port = rest
                        .split("127.0.0.1:")
                        .nth(1)
                        .and_then(|p| p.split('/').next())
                        .and_then(|p| p.parse().ok())
                        .unwrap_or_else(|| panic!("a port in {line:?}"));
                    replicas.push((pid, port));
                }
                if let Some(rest) = line.strip_prefix("the fleet: ") {
                    return rest.split_whitespace().next().map(str::to_owned);
                }
            }
            None
        };
        let url = tokio::time::timeout(3 * LIMIT, read)
            .await
            .expect("fleet.sh says where the fleet is in time")
            .expect("fleet.sh says where the fleet is");
        Script {
            child,
            replicas,
            url,
        }
    }

    /// SIGTERM, as Ctrl-C would; the script stops what it started and ends.
    async fn stop(mut self) {
        let pid = Pid::from_raw(self.child.id().expect("running") as i32);
        kill(pid, Signal::SIGTERM).expect("SIGTERM");
        let status = tokio::time::timeout(LIMIT, self.child.wait())
            .await
            .expect("fleet.sh ends in time")
            .expect("status");
        assert!(status.code().is_some(), "ended on its own: {status:?}");
    }
}

impl Drop for Script {
    /// A test that fails midway still ends everything the script started (a SIGKILL would leave
    /// its children running, its trap unrun): its whole process group is killed. After a
    /// [`stop`](Script::stop) there is nothing left to kill.
    fn drop(&mut self) {
        if let Some(pid) = self.child.id() {
            let _ = killpg(Pid::from_raw(pid as i32), Signal::SIGKILL);
        }
    }
}

fn alive(pid: i32) -> bool {
    kill(Pid::from_raw(pid), None).is_ok()
}

/// Waits (bounded) until nothing listens on `port`: a SIGKILLed process is gone only once its
/// sockets are (it is not this test's child, so it cannot be waited for).
async fn refused(port: u16) {
    let gone = async {
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(LIMIT, gone)
        .await
        .unwrap_or_else(|_| panic!("port {port} still accepts {LIMIT:?} after the kill"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fleet_sh_serves_a_host_across_a_replica_kill_and_stops_everything_it_started() {
    let script = Script::start().await;
    assert_eq!(script.replicas.len(), 2, "two replicas printed");

    let host = HttpHost::connect(&script.url, None).await;
    assert_eq!(
        text(&host.call("echo", json!({"text": "before"})).await),
        "before"
    );
    // Whichever replica held the session, the other serves it now (or still).
    let (victim, port) = script.replicas[0];
    kill(Pid::from_raw(victim), Signal::SIGKILL).expect("SIGKILL a replica");
    refused(port).await;
    assert_eq!(
        text(&host.call("echo", json!({"text": "after"})).await),
        "after"
    );
    assert!(!host.session.is_closed(), "the same host session");

    let (survivor, _) = script.replicas[1];
    assert!(alive(survivor));
    script.stop().await;
    // The script waits for what it killed before it ends: nothing is left running.
    assert!(!alive(survivor), "replica {survivor} outlived fleet.sh");
}
