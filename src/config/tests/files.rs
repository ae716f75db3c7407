//! `load_servers_file`: what a caller prints names the file, the entry and the key.

use std::path::Path;

use super::{assert_error, fixture_dir};
use crate::config::{ServerConfig, load_servers, load_servers_file};

#[test]
fn warnings_name_the_file_the_entry_and_the_key() {
    let path = fixture_dir("claude-desktop/claude_desktop_config_windows.json");
    let loaded = load_servers_file(&path).expect("document");
    assert_eq!(loaded.file.as_deref(), Some(path.as_path()));
    let warnings: Vec<String> = loaded.warnings().collect();
    assert_eq!(
        warnings,
        [format!(
            "{}: skipping server entry `Brave Search`: mcpServers.Brave Search: server name \
             `Brave Search` contains ' '; use only A-Z, a-z, 0-9, _ and -",
            path.display()
        )]
    );
}

#[test]
fn json_from_no_file_warns_without_a_file() {
    let loaded = load_servers(r#"{"servers": {"s": {"comand": "x"}}}"#).expect("document");
    assert_eq!(loaded.file, None);
    let warnings: Vec<String> = loaded.warnings().collect();
    assert_eq!(
        warnings,
        [
            "skipping server entry `s`: servers.s.comand: unknown field `comand`; did you mean \
          `command`?"
        ]
    );
}

#[test]
fn document_errors_name_the_file() {
    let not_json = fixture_dir("windsurf/tracker-token.txt");
    let err = load_servers_file(&not_json).expect_err("not a servers file");
    assert_eq!(err.path, not_json.display().to_string());
    let missing = Path::new("/nonexistent/mcp.json");
    let err = load_servers_file(missing).expect_err("no such file");
    assert_error(&err, "/nonexistent/mcp.json", "cannot read file");
}

#[test]
fn take_hands_out_a_loaded_server_once() {
    let mut loaded =
        load_servers(r#"{"mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}}}"#)
            .expect("document");
    assert_eq!(loaded.take("b"), Some(ServerConfig::stdio("b", "b")));
    assert_eq!(loaded.take("b"), None);
    assert_eq!(loaded.servers, [ServerConfig::stdio("a", "a")]);
}
