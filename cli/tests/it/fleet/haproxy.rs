//! An HAProxy of the test's own in front of the replicas, with the configuration
//! `scripts/fleet/haproxy.cfg.in`: the same routing as nginx's (session-era requests by a
//! consistent hash of `Mcp-Session-Id`, the others round-robin), retries of a refused
//! connection and of a 503 on another replica, and the replicas' `/readyz` checked.

use std::{path::Path, process::Stdio, time::Duration};

use mcp_mock_server::PortHold;
use tokio::process::Child;

use crate::common::LIMIT;

/// The configuration template, shared with `scripts/serve-fleet/fleet.py`.
const TEMPLATE: &str = include_str!("../../../../scripts/fleet/haproxy.cfg.in");

/// One HAProxy process in the foreground (`-db`: no master, no daemon).
pub struct HaProxy {
    child: Child,
    pub port: u16,
    /// Held as long as HAProxy runs (it binds beside the hold, `SO_REUSEPORT`), so the readiness
    /// check below cannot reach another test's listener.
    _hold: PortHold,
}

impl HaProxy {
    /// Starts HAProxy with its configuration in `dir`, on a free port, in front of the
    /// replicas on `ports`.
    pub async fn start(dir: &Path, ports: &[u16]) -> HaProxy {
        let hold = PortHold::new().expect("a free port");
        let port = hold.port();
        let servers: String = ports
            .iter()
            .enumerate()
            .map(|(i, p)| format!("    server r{i} 127.0.0.1:{p} check\n"))
            .collect();
        let conf = TEMPLATE
            .replace("@LOG_GLOBAL@", "")
            .replace("@LOG_DEFAULTS@", "")
            .replace("@PORT@", &port.to_string())
            .replace("@SERVERS@", &servers);
        let path = dir.join("haproxy.cfg");
        std::fs::write(&path, conf).expect("write haproxy.cfg");
        let child = tokio::process::Command::new("haproxy")
            .arg("-db")
            .arg("-f")
            .arg(&path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| {
                panic!("haproxy could not be started ({e}): the fleet tests need Debian's haproxy")
            });
        let deadline = tokio::time::Instant::now() + LIMIT;
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            assert!(
                tokio::time::Instant::now() < deadline,
                "haproxy did not listen within {LIMIT:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        HaProxy {
            child,
            port,
            _hold: hold,
        }
    }

    /// Ends it (SIGKILL; the test owns no state in it).
    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}
