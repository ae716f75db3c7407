//! Cline (and its forks' `alwaysAllow`) and Windsurf files.

use super::{assert_error, load_host, loaded, ms, names, remote_of, skipped, stdio_of};
use crate::config::RemoteKind;

const CLINE: &str = include_str!("../../../tests/fixtures/hosts/cline/cline_mcp_settings.json");
const CLINE_FORK: &str = include_str!("../../../tests/fixtures/hosts/cline/mcp_settings.json");
const WINDSURF: &str = include_str!("../../../tests/fixtures/hosts/windsurf/mcp_config.json");
const WINDSURF_SECRETS: &str =
    include_str!("../../../tests/fixtures/hosts/windsurf/mcp_config_secrets.json");

#[test]
fn cline_timeouts_are_seconds_transport_types_are_honoured_and_disabled_entries_set_aside() {
    let servers = load_host(CLINE, "cline", &[]);
    assert_eq!(names(&servers), ["events", "linear", "weather"]);
    assert_eq!(servers.disabled, ["old-server"], "not checked further");

    let weather = loaded(&servers, "weather");
    assert_eq!(weather.call_timeout, ms(120_000));
    assert_eq!(stdio_of(weather).env["OPENWEATHER_API_KEY"], "owm-example");

    let events = loaded(&servers, "events");
    assert_eq!(remote_of(events).kind, RemoteKind::Sse);
    assert_eq!(events.call_timeout, ms(30_000));

    let linear = loaded(&servers, "linear");
    assert_eq!(remote_of(linear).kind, RemoteKind::Http);
    assert_eq!(linear.call_timeout, ms(60_000));

    // Cline's marketplace names its installs by repository path.
    let github = skipped(
        &servers,
        "github.com/modelcontextprotocol/servers/tree/main/src/github",
    );
    assert!(
        github.message.contains("longer than 32 characters"),
        "{github}"
    );
    assert_eq!(servers.skipped.len(), 1, "{:?}", servers.skipped);
}

#[test]
fn cline_fork_keys_are_accepted_and_a_typo_skips_only_its_entry() {
    let servers = load_host(CLINE_FORK, "cline", &[]);
    assert_eq!(names(&servers), ["filesystem", "legacy-http"]);
    assert_eq!(loaded(&servers, "filesystem").call_timeout, ms(300_000));
    // Cline's legacy `transportType: "http"` means Streamable HTTP.
    let legacy = remote_of(loaded(&servers, "legacy-http"));
    assert_eq!(legacy.kind, RemoteKind::Http);

    assert_error(
        skipped(&servers, "brave-search"),
        "mcpServers.brave-search.autoAprove",
        "did you mean `autoApprove`?",
    );
    assert_error(
        skipped(&servers, "slow-batch"),
        "mcpServers.slow-batch.timeout",
        "must be greater than zero",
    );
    assert_error(
        skipped(&servers, "mixed"),
        "mcpServers.mixed.transportType",
        "disagrees with `type`",
    );
}

#[test]
fn windsurf_server_url_is_url_and_env_variables_expand() {
    let env = [("GITHUB_TOKEN", "ghp_ws"), ("AUTH_TOKEN", "at-1")];
    let servers = load_host(WINDSURF, "windsurf", &env);
    assert_eq!(names(&servers), ["github", "local-sse", "remote-http"]);
    assert_eq!(servers.disabled, ["figma"]);
    let github = stdio_of(loaded(&servers, "github"));
    assert_eq!(github.env["GITHUB_PERSONAL_ACCESS_TOKEN"], "ghp_ws");
    let remote = remote_of(loaded(&servers, "remote-http"));
    assert_eq!(
        (remote.kind, remote.url.as_str()),
        (RemoteKind::Auto, "https://mcp.example.com/mcp")
    );
    assert!(
        remote
            .headers
            .contains(&("Authorization".into(), "Bearer at-1".into()))
    );
    let sse = remote_of(loaded(&servers, "local-sse"));
    assert_eq!(sse.url.as_str(), "http://127.0.0.1:8000/sse");
}

#[test]
fn windsurf_file_variables_read_secrets_and_errors_name_server_url() {
    let servers = load_host(WINDSURF_SECRETS, "windsurf", &[]);
    assert_eq!(names(&servers), ["tracker"]);
    let tracker = remote_of(loaded(&servers, "tracker"));
    assert!(
        tracker
            .headers
            .contains(&("Authorization".into(), "Bearer wsf-token-123".into()))
    );
    let search = skipped(&servers, "search");
    assert_error(search, "mcpServers.search.env.SEARCH_KEY", "cannot read");
    assert_error(
        skipped(&servers, "dashboard"),
        "mcpServers.dashboard.serverUrl",
        "scheme must be http or https",
    );
    assert_error(
        skipped(&servers, "moved"),
        "mcpServers.moved.serverUrl",
        "differs from `url`",
    );
}
