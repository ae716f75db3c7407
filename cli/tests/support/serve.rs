//! `mcp-resilient serve` as a child process: its stderr lines as they come, and the line in
//! which it says where it serves. The gateway and fleet tests and the benchmark's section 22
//! start it.

use std::time::Duration;

use tokio::{io::AsyncBufReadExt, process::Child, sync::watch};

use super::LIMIT;

/// What `serve` writes once it listens: `… serving MCP at http://ADDR/mcp (N worker threads)`.
const SERVING: &str = "serving MCP at ";

/// Collects a `serve` process's stderr lines as they come (echoed with `label` when
/// `MCP_SERVE_TEST_STDERR` is set); the task ends with the stream. The child's stderr must be
/// piped.
pub fn capture_stderr(child: &mut Child, label: &'static str) -> watch::Receiver<Vec<String>> {
    let stderr = child.stderr.take().expect("serve's stderr is piped");
    let (tx, log) = watch::channel(Vec::new());
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if std::env::var_os("MCP_SERVE_TEST_STDERR").is_some() {
                eprintln!("{label}: {line}");
            }
            tx.send_modify(|all| all.push(line));
        }
    });
    log
}

/// The URL `serve` says it serves at, waited for at most `limit`.
pub async fn try_serving_url(
    log: &mut watch::Receiver<Vec<String>>,
    limit: Duration,
) -> Result<String, String> {
    let found = tokio::time::timeout(limit, async {
        let lines = log
            .wait_for(|lines| lines.iter().any(|l| l.contains(SERVING)))
            .await
            .map_err(|_| "serve ended before it said where it serves".to_owned())?;
        let line = lines.iter().find_map(|l| l.split(SERVING).nth(1));
        let url = line.and_then(|l| l.split_whitespace().next());
        Ok(url.unwrap_or_default().to_owned())
    });
    found
        .await
        .unwrap_or_else(|_| Err(format!("serve printed no address within {limit:?}")))
}

/// [`try_serving_url`] within [`LIMIT`], for a test.
pub async fn serving_url(log: &mut watch::Receiver<Vec<String>>) -> String {
    try_serving_url(log, LIMIT)
        .await
        .unwrap_or_else(|why| panic!("{why}"))
}
