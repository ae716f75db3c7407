//! The CLI against hostile and sloppy input, with real child processes: durations that would
//! overflow the clock, server text full of terminal escapes, and URLs that carry credentials.

mod durations;
mod escapes;
mod redaction;
mod token_store;

use crate::common::{self, LIMIT, mock_binary};
use tokio::process::Command;

/// Runs the CLI with `args` (and `env`), returns its exit code, stdout and stderr.
async fn run_with(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let output = tokio::time::timeout(
        LIMIT,
        Command::new(mock_binary())
            .args(args)
            .envs(env.iter().copied())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the CLI finished in time")
    .expect("the CLI ran");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

async fn run(args: &[&str]) -> (i32, String, String) {
    run_with(args, &[]).await
}

/// `head` followed by `--stdio -- <the mock server on stdio> <mock_flags…>`.
fn with_mock<'a>(head: &[&'a str], mock_flags: &[&'a str]) -> Vec<&'a str> {
    let mut args = head.to_vec();
    args.extend([
        "--stdio",
        "--",
        mock_binary(),
        "mock-server",
        "--transport",
        "stdio",
    ]);
    args.extend(mock_flags);
    args
}
