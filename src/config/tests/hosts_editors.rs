//! Cursor and VS Code files: `envFile`, `${env:…}`, `${workspaceFolder}`, VS Code's `inputs`.

use super::{assert_error, fixture_dir, load_host, loaded, names, remote_of, skipped, stdio_of};
use crate::config::RemoteKind;

const CURSOR_PROJECT: &str =
    include_str!("../../../tests/fixtures/hosts/cursor/project/.cursor/mcp.json");
const CURSOR_GLOBAL: &str =
    include_str!("../../../tests/fixtures/hosts/cursor/home/.cursor/mcp.json");
const VSCODE_PROJECT: &str =
    include_str!("../../../tests/fixtures/hosts/vscode/project/.vscode/mcp.json");
const VSCODE_USER: &str = include_str!("../../../tests/fixtures/hosts/vscode/user/mcp.json");

#[test]
fn cursor_project_env_files_load_under_env_and_env_wins() {
    let servers = load_host(
        CURSOR_PROJECT,
        "cursor/project/.cursor",
        &[("DOCS_TOKEN", "d-1")],
    );
    assert_eq!(names(&servers), ["docs", "postgres", "scripts"]);
    let project = fixture_dir("cursor/project");

    // `${workspaceFolder}/.env`: the project is the parent of `.cursor`.
    let postgres = stdio_of(loaded(&servers, "postgres"));
    assert_eq!(
        postgres.env["DATABASE_URL"],
        "postgres://dev:dev@127.0.0.1:5432/app"
    );
    assert_eq!(
        postgres.env["PGSSLMODE"], "disable",
        "env overrides envFile"
    );

    // A relative envFile is relative to the config file's directory.
    let scripts = stdio_of(loaded(&servers, "scripts"));
    let script = project.join("tools/mcp-server.js");
    assert_eq!(scripts.args, [script.display().to_string()]);
    assert_eq!(scripts.env["API_TOKEN"], "tok-123");
    assert_eq!(scripts.env["LOG_LEVEL"], "debug");
    assert_eq!(scripts.env["GREETING"], "hello # not a comment");
    assert_eq!(scripts.env["PRIVATE_KEY"], "line1\nline2");

    let docs = remote_of(loaded(&servers, "docs"));
    assert_eq!(docs.kind, RemoteKind::Auto);
    assert!(
        docs.headers
            .contains(&("Authorization".into(), "Bearer d-1".into()))
    );

    let missing = skipped(&servers, "analytics");
    assert_error(missing, "mcpServers.analytics.envFile", "cannot read");
    assert!(missing.message.contains("analytics.env"), "{missing}");
}

#[test]
fn cursor_global_file_has_no_workspace_and_reads_its_oauth_client() {
    let home = fixture_dir("cursor/home");
    let home = home.to_str().expect("utf-8 path");
    let env = [("HOME", home), ("CONTEXT7_API_KEY", "c7-key")];
    let servers = load_host(CURSOR_GLOBAL, "cursor/home/.cursor", &env);
    assert_eq!(names(&servers), ["context7", "figma", "linear", "notes"]);
    let context7 = remote_of(loaded(&servers, "context7"));
    assert!(
        context7
            .headers
            .contains(&("CONTEXT7_API_KEY".into(), "c7-key".into()))
    );
    assert_eq!(remote_of(loaded(&servers, "figma")).kind, RemoteKind::Sse);
    let linear = remote_of(loaded(&servers, "linear"));
    assert_eq!(linear.headers, []);
    let crate::auth::Auth::OAuth(oauth) = &linear.auth else {
        panic!("Cursor's auth is OAuth: {:?}", linear.auth)
    };
    // `${env:LINEAR_CLIENT_ID}` is unset here: "" as in Cursor, so dynamic registration.
    assert_eq!(oauth.client_id, None);
    assert_eq!(oauth.scopes, ["read", "write"]);
    let notes = stdio_of(loaded(&servers, "notes"));
    assert_eq!(notes.args[2], format!("{home}/notes"));
    assert_error(
        skipped(&servers, "repo-tools"),
        "mcpServers.repo-tools.args[2]",
        "`${workspaceFolder}` names the open project",
    );
}

#[test]
fn vscode_workspace_file_with_inputs_env_files_dev_and_comments() {
    let servers = load_host(VSCODE_PROJECT, "vscode/project/.vscode", &[]);
    assert_eq!(names(&servers), ["fetch", "github", "my-server"]);
    let project = fixture_dir("vscode/project");

    let fetch = stdio_of(loaded(&servers, "fetch"));
    assert_eq!(
        fetch.env["USER_AGENT"],
        "mcp-fetch/1.0 (+https://example.com)"
    );
    assert_eq!(fetch.env["IGNORE_ROBOTS_TXT"], "true");
    assert_eq!(
        fetch.env["HTTP_PROXY"], "",
        "an unset ${{env:…}} is empty, as in VS Code"
    );
    assert_eq!(fetch.env["RETRIES"], "3");
    assert!(
        !fetch.env.contains_key("NODE_OPTIONS"),
        "null drops the envFile's value"
    );

    let dev = stdio_of(loaded(&servers, "my-server"));
    assert_eq!(dev.cwd.as_deref(), Some(project.as_path()));
    assert_eq!(
        dev.args,
        [project.join("build/index.js").display().to_string()]
    );

    let github = remote_of(loaded(&servers, "github"));
    assert_eq!(
        (github.kind, github.url.as_str()),
        (RemoteKind::Http, "https://mcp.example.com/github/")
    );

    let perplexity = skipped(&servers, "Perplexity");
    assert_error(
        perplexity,
        "servers.Perplexity.env.PERPLEXITY_API_KEY",
        "`${input:perplexity-key}` (\"Perplexity API Key\") is asked of the user by VS Code",
    );
    let tunnel = skipped(&servers, "tunnel");
    assert_error(
        tunnel,
        "servers.tunnel.headers.X-Tunnel-Token",
        "`${input:tunnel-token}` is asked of the user",
    );
}

#[test]
fn vscode_user_file_has_no_workspace_and_suggests_a_misspelt_key() {
    let env = [("HOME", "/home/dev"), ("TZ", "Europe/Paris")];
    let servers = load_host(VSCODE_USER, "vscode/user", &env);
    assert_eq!(names(&servers), ["memory", "time"]);
    let memory = stdio_of(loaded(&servers, "memory"));
    let sep = std::path::MAIN_SEPARATOR;
    assert_eq!(
        memory.env["MEMORY_FILE_PATH"],
        format!("/home/dev{sep}.mcp{sep}memory.json")
    );
    let time = stdio_of(loaded(&servers, "time"));
    assert_eq!(time.args[1], "--local-timezone=Europe/Paris");
    assert_error(
        skipped(&servers, "workspace-files"),
        "servers.workspace-files.args[2]",
        "not in a project's `.vscode` or `.cursor` directory",
    );
    assert_error(
        skipped(&servers, "playwright"),
        "servers.playwright.comand",
        "unknown field `comand`; did you mean `command`?",
    );
    // Gallery installs name servers by registry id, which is not a valid server name here.
    assert_error(
        skipped(&servers, "io.github.github/github-mcp-server"),
        "servers.io.github.github/github-mcp-server",
        "contains '.'",
    );
    let order: Vec<_> = servers.skipped.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        order,
        [
            "io.github.github/github-mcp-server",
            "workspace-files",
            "playwright"
        ],
        "skipped entries keep file order"
    );
}
