//! Claude Desktop and Claude Code files, as those hosts document them and users write them.

use super::{assert_error, load_host, loaded, ms, names, remote_of, skipped, stdio_of};
use crate::config::{RemoteKind, ServerConfig};

const DESKTOP: &str =
    include_str!("../../../tests/fixtures/hosts/claude-desktop/claude_desktop_config.json");
const DESKTOP_WINDOWS: &str =
    include_str!("../../../tests/fixtures/hosts/claude-desktop/claude_desktop_config_windows.json");
const CODE_PROJECT: &str =
    include_str!("../../../tests/fixtures/hosts/claude-code/project/.mcp.json");
const CODE_PLUGIN: &str =
    include_str!("../../../tests/fixtures/hosts/claude-code/plugin/.mcp.json");

#[test]
fn claude_desktop_stdio_servers_load_as_written_beside_unrelated_settings() {
    let servers = load_host(DESKTOP, "claude-desktop", &[]);
    assert!(servers.skipped.is_empty(), "{:?}", servers.skipped);
    assert_eq!(names(&servers), ["filesystem", "github", "sqlite"]);
    let expected = ServerConfig::stdio("filesystem", "npx").args([
        "-y",
        "@modelcontextprotocol/server-filesystem",
        "/Users/alex/Desktop",
        "/Users/alex/Downloads",
    ]);
    assert_eq!(loaded(&servers, "filesystem"), &expected);
    let github = stdio_of(loaded(&servers, "github"));
    assert_eq!(
        github.env["GITHUB_PERSONAL_ACCESS_TOKEN"],
        "ghp_exampleexampleexampleexample0000"
    );
    assert_eq!(loaded(&servers, "sqlite").call_timeout, ms(60_000));
}

#[test]
fn claude_desktop_on_windows_keeps_backslashes_and_skips_a_name_with_a_space() {
    let servers = load_host(DESKTOP_WINDOWS, "claude-desktop", &[]);
    assert_eq!(names(&servers), ["linear", "memory", "puppeteer"]);
    let memory = stdio_of(loaded(&servers, "memory"));
    assert_eq!(
        memory.env["MEMORY_FILE_PATH"],
        r"C:\Users\alex\AppData\Roaming\mcp\memory.json"
    );
    let linear = stdio_of(loaded(&servers, "linear"));
    assert_eq!(linear.args[2], "https://mcp.example.com/linear/sse");
    assert_error(
        skipped(&servers, "Brave Search"),
        "mcpServers.Brave Search",
        "contains ' '",
    );
}

#[test]
fn claude_code_expands_variables_and_defaults_in_urls_headers_commands_and_env() {
    let env = [("API_KEY", "sk-test-1"), ("HOME", "/home/dev")];
    let servers = load_host(CODE_PROJECT, "claude-code/project", &env);
    assert_eq!(names(&servers), ["api-server", "local-db", "sentry"]);

    let api = remote_of(loaded(&servers, "api-server"));
    assert_eq!(api.kind, RemoteKind::Http);
    assert_eq!(api.url.as_str(), "https://api.example.com/mcp");
    let headers = &api.headers;
    assert!(headers.contains(&("Authorization".into(), "Bearer sk-test-1".into())));
    assert!(headers.contains(&("X-Team".into(), "platform".into())));

    let sentry = remote_of(loaded(&servers, "sentry"));
    assert_eq!(sentry.kind, RemoteKind::Sse);

    let db = stdio_of(loaded(&servers, "local-db"));
    assert_eq!(db.command, "/home/dev/.local/bin/db-mcp");
    assert_eq!(db.args, ["--dsn", "postgres://localhost:5432/dev"]);
    assert_eq!(db.env["DEBUG"], "false");
    assert_eq!(db.env["CACHE_DIR"], "/tmp/db-mcp");

    let billing = skipped(&servers, "billing");
    assert_error(
        billing,
        "mcpServers.billing.headers.X-Api-Key",
        "`${BILLING_API_KEY}` is not set and has no default",
    );
}

#[test]
fn claude_code_variables_that_are_set_beat_their_defaults() {
    let env = [
        ("API_KEY", "k"),
        ("HOME", "/h"),
        ("API_BASE_URL", "http://127.0.0.1:9000"),
        ("BILLING_API_KEY", "b-1"),
        ("DEBUG", ""),
        ("XDG_CACHE_HOME", "/var/cache"),
    ];
    let servers = load_host(CODE_PROJECT, "claude-code/project", &env);
    assert!(servers.skipped.is_empty(), "{:?}", servers.skipped);
    let api = remote_of(loaded(&servers, "api-server"));
    assert_eq!(api.url.as_str(), "http://127.0.0.1:9000/mcp");
    let db = stdio_of(loaded(&servers, "local-db"));
    // Set but empty is set: `:-` gives the default only to an unset variable, as documented.
    assert_eq!(db.env["DEBUG"], "");
    assert_eq!(db.env["CACHE_DIR"], "/var/cache/db-mcp");
    let billing = remote_of(loaded(&servers, "billing"));
    assert!(
        billing
            .headers
            .contains(&("X-Api-Key".into(), "b-1".into()))
    );
}

#[test]
fn claude_code_oauth_is_ignored_a_header_helper_and_ws_are_refused() {
    let servers = load_host(CODE_PLUGIN, "claude-code/plugin", &[]);
    assert_eq!(names(&servers), ["notion", "playwright"]);
    let notion = remote_of(loaded(&servers, "notion"));
    assert_eq!(
        (notion.kind, notion.url.as_str()),
        (RemoteKind::Http, "https://mcp.example.com/notion/mcp")
    );
    assert_eq!(
        loaded(&servers, "playwright"),
        &ServerConfig::stdio("playwright", "npx").arg("@playwright/mcp@latest")
    );
    assert_error(
        skipped(&servers, "internal-api"),
        "mcpServers.internal-api.headersHelper",
        "does not run header commands",
    );
    assert_error(
        skipped(&servers, "events"),
        "mcpServers.events.type",
        "unknown transport `ws`",
    );
}
