//! An nginx of the test's own in front of the replicas, with the configuration `fleet.sh`
//! writes (`scripts/fleet/nginx.conf.in`): session-era requests by `Mcp-Session-Id`
//! (consistent hash), the others round-robin.

use std::{path::Path, process::Stdio, time::Duration};

use mcp_mock_server::PortHold;
use tokio::process::Child;

use crate::common::LIMIT;

/// The configuration template, shared with `scripts/fleet.sh`.
const TEMPLATE: &str = include_str!("../../../../scripts/fleet/nginx.conf.in");

/// One nginx process (`daemon off`).
pub struct Nginx {
    child: Child,
    pub port: u16,
    /// Held as long as nginx runs: the kernel hands the port to no one else meanwhile (nginx
    /// binds it beside the hold), so the readiness check below cannot reach another test's
    /// listener, and no listener takes it while nginx is being started.
    _hold: PortHold,
}

impl Nginx {
    /// Starts nginx in `dir` on a free port, in front of the replicas on `ports`.
    pub async fn start(dir: &Path, ports: &[u16]) -> Nginx {
        let hold = PortHold::new().expect("a free port");
        let port = hold.port();
        let servers: String = ports
            .iter()
            .map(|p| format!("        server 127.0.0.1:{p} max_fails=0;\n"))
            .collect();
        // As root, nginx's workers would run as `nobody`, who cannot write the temp dir.
        let uid = std::os::unix::fs::MetadataExt::uid(
            &std::fs::metadata("/proc/self").expect("/proc/self"),
        );
        let user = match uid == 0 {
            true => "user root;",
            false => "",
        };
        // One process: a SIGKILL (the test's end, or a panic's drop) leaves no worker behind.
        let conf = format!("master_process off;\n{TEMPLATE}")
            .replace("@DIR@", &dir.display().to_string())
            .replace("@PORT@", &port.to_string())
            .replace("@USER@", user)
            .replace("@SERVERS@", &servers);
        let path = dir.join("nginx.conf");
        std::fs::write(&path, conf).expect("write nginx.conf");
        let child = tokio::process::Command::new("nginx")
            .arg("-p")
            .arg(dir)
            .arg("-c")
            .arg(&path)
            .arg("-e")
            .arg(dir.join("error.log"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| {
                panic!("nginx could not be started ({e}): the fleet tests need Debian's nginx")
            });
        // nginx says nothing when it is ready: its port accepting is the sign.
        let deadline = tokio::time::Instant::now() + LIMIT;
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            assert!(
                tokio::time::Instant::now() < deadline,
                "nginx did not listen within {LIMIT:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Nginx {
            child,
            port,
            _hold: hold,
        }
    }

    /// `http://127.0.0.1:PORT/mcp`
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// Ends it (SIGKILL; the test owns no state in it).
    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}
