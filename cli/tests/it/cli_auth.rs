//! `login`, `auth status`, `logout` and the authorized commands, end to end: the CLI as a child
//! process against the mock's OAuth mode, with a private config directory. Every run is traced
//! at `trace` level, and no secret may appear in anything it printed.

use crate::common;
use std::path::Path;

use crate::common::{LIMIT, mock_binary};
use mcp_mock_server::{MockOptions, MockServer, OAuthOptions};
use mcp_resilient::auth::{FileTokenStore, TokenStore};
use oauth2::TokenResponse;
use tokio::process::Command;

/// Everything one CLI run printed.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

async fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let output = tokio::time::timeout(
        LIMIT,
        Command::new(mock_binary())
            .args(args)
            .env("MCP_RESILIENT_CONFIG_DIR", dir)
            .env("RUST_LOG", "trace")
            .envs(env.iter().copied())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the CLI finished in time")
    .expect("the CLI ran");
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The access and refresh tokens stored for `name`.
async fn stored_secrets(dir: &Path, name: &str) -> Vec<String> {
    let store = FileTokenStore::in_dir(dir.join("tokens"), name);
    let record = store.load().await.unwrap().expect("tokens stored");
    let token = record.credentials.token_response.expect("a token response");
    let mut secrets = vec![token.access_token().secret().clone()];
    if let Some(refresh) = token.refresh_token() {
        secrets.push(refresh.secret().clone());
    }
    secrets
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_status_logout_work_end_to_end_and_print_no_secret() {
    let client_secret = "planted-client-secret-5f1d2c";
    let bearer = "planted-bearer-token-9a8b7c";
    let mock = MockServer::start(MockOptions {
        oauth: Some(OAuthOptions {
            clients: vec![("machine".to_owned(), Some(client_secret.to_owned()))],
            ..OAuthOptions::default()
        }),
        ..MockOptions::default()
    })
    .await
    .unwrap();
    let url = mock.http_url();
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let mut runs = Vec::new();
    let mut secrets = vec![client_secret.to_owned(), bearer.to_owned()];

    // Without a login the server is refused at once, with what to do.
    let refused = run(
        dir,
        &["tools", "--url", &url, "--name", "authd", "--auth", "oauth"],
        &[],
    )
    .await;
    assert_eq!(refused.code, 3, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("unauthorized"),
        "{}",
        refused.stderr
    );
    assert!(
        refused.stderr.contains("mcp-resilient login authd"),
        "{}",
        refused.stderr
    );
    runs.push(refused);

    let login = run(dir, &["login", "authd", "--url", &url, "--headless"], &[]).await;
    assert_eq!(login.code, 0, "{}", login.stderr);
    assert!(login.stdout.contains("authd: "), "{}", login.stdout);
    assert!(login.stdout.contains("refreshable"), "{}", login.stdout);
    secrets.extend(stored_secrets(dir, "authd").await);
    runs.push(login);

    let status = run(dir, &["auth", "status"], &[]).await;
    assert_eq!(status.code, 0, "{}", status.stderr);
    assert!(
        status.stdout.contains("authd: http://127.0.0.1:"),
        "{}",
        status.stdout
    );
    assert!(status.stdout.contains("expires in"), "{}", status.stdout);
    runs.push(status);

    let tools = run(
        dir,
        &["tools", "--url", &url, "--name", "authd", "--auth", "oauth"],
        &[],
    )
    .await;
    assert_eq!(tools.code, 0, "{}", tools.stderr);
    assert!(
        tools.stdout.contains("mcp__authd__echo"),
        "{}",
        tools.stdout
    );
    runs.push(tools);

    // Machine to machine: client credentials, the secret from the environment.
    let machine = [
        "call",
        "echo",
        r#"{"text":"m2m"}"#,
        "--url",
        &url,
        "--name",
        "m2m",
        "--client-credentials",
        "--client-id",
        "machine",
        "--client-secret-env",
        "M2M_SECRET",
    ];
    let m2m = run(dir, &machine, &[("M2M_SECRET", client_secret)]).await;
    assert_eq!(m2m.code, 0, "{}", m2m.stderr);
    secrets.extend(stored_secrets(dir, "m2m").await);
    runs.push(m2m);

    // A bearer token the server does not know: refused, and never printed.
    let wrong = [
        "tools",
        "--url",
        &url,
        "--name",
        "static",
        "--auth",
        "bearer",
        "--token-env",
        "STATIC_TOKEN",
    ];
    let wrong = run(dir, &wrong, &[("STATIC_TOKEN", bearer)]).await;
    assert_eq!(wrong.code, 3, "{}", wrong.stderr);
    assert!(
        wrong.stderr.contains("STATIC_TOKEN"),
        "names the variable: {}",
        wrong.stderr
    );
    runs.push(wrong);

    let logout = run(dir, &["logout", "authd"], &[]).await;
    assert_eq!(logout.code, 0, "{}", logout.stderr);
    assert!(
        logout.stdout.contains("logged out of `authd`"),
        "{}",
        logout.stdout
    );
    runs.push(logout);
    let status = run(dir, &["auth", "status"], &[]).await;
    assert!(!status.stdout.contains("authd:"), "{}", status.stdout);
    runs.push(status);

    // The planted secrets and every issued token: in no output, at any log level.
    assert!(secrets.len() >= 5, "{} secrets", secrets.len());
    for (i, run) in runs.iter().enumerate() {
        for secret in &secrets {
            assert!(
                !run.stdout.contains(secret.as_str()) && !run.stderr.contains(secret.as_str()),
                "run {i} printed a secret"
            );
        }
    }
    let traced: usize = runs.iter().map(|r| r.stderr.len()).sum();
    assert!(traced > 10_000, "the runs were traced ({traced} bytes)");
    mock.shutdown().await;
}

/// `Debug` of a configuration shows header names, not their values.
#[test]
fn debug_output_hides_header_values() {
    let config = mcp_resilient::ServerConfig::http("h", "http://127.0.0.1:1/mcp")
        .header("Authorization", "Bearer planted-header-value-77");
    let shown = format!("{config:?}");
    assert!(shown.contains("Authorization"), "{shown}");
    assert!(!shown.contains("planted-header-value-77"), "{shown}");
}

/// `proxy --auth oauth` serves a host with the tokens `login` stored, refreshes them as they
/// expire and survives the server expiring them: the host never sees a failed call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_uses_stored_tokens_and_keeps_them_fresh() {
    let mock = MockServer::start(MockOptions {
        oauth: Some(OAuthOptions {
            access_ttl: std::time::Duration::from_secs(2),
            ..OAuthOptions::default()
        }),
        ..MockOptions::default()
    })
    .await
    .unwrap();
    let url = mock.http_url();
    let dir = tempfile::tempdir().unwrap();
    let login = run(
        dir.path(),
        &["login", "authd", "--url", &url, "--headless"],
        &[],
    )
    .await;
    assert_eq!(login.code, 0, "{}", login.stderr);
    let host = common::host::Host::start_env(
        &["--url", &url, "--name", "authd", "--auth", "oauth"],
        &[("MCP_RESILIENT_CONFIG_DIR", dir.path().as_os_str())],
    )
    .await;
    assert!(host.tool_names().await.contains(&"echo".to_owned()));
    let deadline = tokio::time::Instant::now() + LIMIT;
    while mock.faults().oauth_stats().unwrap().refreshed < 2 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no refresh within {LIMIT:?}"
        );
        host.try_call("echo", serde_json::json!({"text": "tick"}))
            .await
            .expect("a call through the proxy");
    }
    mock.faults().expire_access_tokens();
    host.try_call("echo", serde_json::json!({"text": "after expiry"}))
        .await
        .expect("a call after the server expired the token");
    assert_eq!(mock.faults().oauth_stats().unwrap().invalid_grant, 0);
    host.close().await;
    mock.shutdown().await;
}
