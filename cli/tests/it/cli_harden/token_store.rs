//! The token store on disk, end to end: `login` against the mock's OAuth mode, then the files
//! are tampered with the way another user (or a careless `cp -r`) would, and the authorized
//! commands either repair and go on, or refuse without touching anything outside the store.
//! Before: an existing token directory with mode 0777 stayed 0777, and a planted symbolic link
//! at the lock path made a refresh create the link's target.

use std::{
    os::unix::fs::{PermissionsExt, symlink},
    path::Path,
};

use mcp_mock_server::{MockOptions, MockServer, OAuthOptions};
use tokio::process::Command;

use crate::common::{LIMIT, mock_binary};

async fn run(dir: &Path, args: &[&str]) -> (i32, String) {
    let output = tokio::time::timeout(
        LIMIT,
        Command::new(mock_binary())
            .args(args)
            .env("MCP_RESILIENT_CONFIG_DIR", dir)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the CLI finished in time")
    .expect("the CLI ran");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code().unwrap_or(-1), text)
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// An OAuth mock and a config directory where `authd` is logged in.
async fn logged_in() -> (MockServer, tempfile::TempDir) {
    let mock = MockServer::start(MockOptions {
        oauth: Some(OAuthOptions::default()),
        ..MockOptions::default()
    })
    .await
    .expect("the mock starts");
    let dir = tempfile::tempdir().unwrap();
    let url = mock.http_url();
    let (code, out) = run(dir.path(), &["login", "authd", "--url", &url, "--headless"]).await;
    assert_eq!(code, 0, "{out}");
    (mock, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_directory_and_file_open_to_others_are_made_private_with_a_warning() {
    let (mock, dir) = logged_in().await;
    let tokens = dir.path().join("tokens");
    chmod(&tokens, 0o777);
    chmod(&tokens.join("authd.json"), 0o644);
    let url = mock.http_url();
    let args = ["tools", "--url", &url, "--name", "authd", "--auth", "oauth"];
    let (code, out) = run(dir.path(), &args).await;
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("mcp__authd__echo"), "{out}");
    assert_eq!(mode(&tokens), 0o700, "{out}");
    assert_eq!(mode(&tokens.join("authd.json")), 0o600, "{out}");
    for said in ["had mode 777", "had mode 644", "mcp-resilient logout"] {
        assert!(out.contains(said), "the warning says `{said}`: {out}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_planted_link_at_the_lock_path_is_refused_and_the_refresh_creates_nothing() {
    let (mock, dir) = logged_in().await;
    let elsewhere = tempfile::tempdir().unwrap();
    let target = elsewhere.path().join("planted-target");
    symlink(&target, dir.path().join("tokens").join("authd.lock")).unwrap();
    // The server forgets the access token: the next request is answered 401, and the refresh
    // that follows takes the lock.
    mock.faults().expire_access_tokens();
    let url = mock.http_url();
    let args = [
        "call",
        "echo",
        r#"{"text":"hi"}"#,
        "--url",
        &url,
        "--name",
        "authd",
    ];
    let (code, out) = run(
        dir.path(),
        &[&args[..], &["--auth", "oauth", "--connect-timeout", "2s"]].concat(),
    )
    .await;
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("symbolic link"), "{out}");
    assert!(
        !target.exists(),
        "the lock followed the planted link: {out}"
    );
    assert_eq!(
        mock.faults().oauth_stats().map(|s| s.refreshed),
        Some(0),
        "no refresh without the lock"
    );
}
