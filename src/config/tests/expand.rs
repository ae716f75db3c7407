//! `${…}` variables: each form, where they expand, and what is left alone.

use std::path::Path;

use super::{assert_error, stdio_of};
use crate::config::{ConfigError, LoadedServers, ServerConfig, load_servers_with};

/// Loads one stdio server `s` with `args` (a JSON array) and the environment `A=a`, `EMPTY=`.
fn with_args(args: &str, base_dir: Option<&Path>) -> Result<ServerConfig, ConfigError> {
    let json = format!(r#"{{"mcpServers": {{"s": {{"command": "x", "args": {args}}}}}}}"#);
    let env = |name: &str| match name {
        "A" => Some("a".to_owned()),
        "EMPTY" => Some(String::new()),
        _ => None,
    };
    let mut loaded: LoadedServers = load_servers_with(&json, base_dir, &env).expect("document");
    match loaded.skipped.pop() {
        Some(skipped) => Err(skipped.error),
        None => Ok(loaded.servers.remove(0)),
    }
}

fn args_of(args: &str) -> Vec<String> {
    let config = with_args(args, None).unwrap_or_else(|err| panic!("{err}"));
    stdio_of(&config).args.clone()
}

#[test]
fn every_host_spelling_of_an_environment_variable_expands() {
    assert_eq!(
        args_of(r#"["${A}", "${env:A}", "${A:-d}", "${B:-d}", "${EMPTY:-d}", "x${A}y${A}"]"#),
        ["a", "a", "a", "d", "", "xaya"]
    );
    assert_eq!(args_of(r#"["${B:-}", "${env:B}"]"#), ["", ""]);
}

#[test]
fn what_is_not_a_variable_is_kept_as_written() {
    let kept = r#"["$A", "${1}", "${a b}", "${A", "${}", "$${A}", "{A}"]"#;
    assert_eq!(
        args_of(kept),
        ["$A", "${1}", "${a b}", "${A", "${}", "$a", "{A}"]
    );
}

#[test]
fn an_unset_variable_without_default_names_itself_and_its_place() {
    let err = with_args(r#"["ok", "--key=${API_KEY}"]"#, None).expect_err("unset");
    assert_error(&err, "mcpServers.s.args[1]", "`${API_KEY}` is not set");
    assert!(err.message.contains("${API_KEY:-default}"), "{err}");
}

#[test]
fn host_only_variables_are_refused_with_the_reason() {
    let err = with_args(r#"["${command:pickFile}"]"#, None).expect_err("vs code command");
    assert_error(
        &err,
        "mcpServers.s.args[0]",
        "can only be resolved by the host",
    );
    let err = with_args(r#"["${input:token}"]"#, None).expect_err("input");
    assert_error(
        &err,
        "mcpServers.s.args[0]",
        "`${input:token}` is asked of the user",
    );
    let err = with_args(r#"["${workspaceFolder}"]"#, None).expect_err("no file");
    assert_error(&err, "mcpServers.s.args[0]", "names the open project");
    let err = with_args(r#"["${userHome}"]"#, None).expect_err("no HOME");
    assert_error(&err, "mcpServers.s.args[0]", "neither HOME nor USERPROFILE");
}

#[test]
fn the_workspace_is_the_parent_of_a_vscode_or_cursor_directory() {
    for settings in [".vscode", ".cursor"] {
        let dir = Path::new("/srv/app").join(settings);
        let config = with_args(
            r#"["${workspaceFolder}/src", "${workspaceFolderBasename}", "${pathSeparator}", "${/}"]"#,
            Some(&dir),
        )
        .unwrap_or_else(|err| panic!("{err}"));
        let sep = std::path::MAIN_SEPARATOR.to_string();
        assert_eq!(stdio_of(&config).args, ["/srv/app/src", "app", &sep, &sep]);
    }
    let err = with_args(
        r#"["${workspaceFolder}"]"#,
        Some(Path::new("/srv/app/config")),
    )
    .expect_err("not a settings directory");
    assert_error(&err, "mcpServers.s.args[0]", "not in a project's `.vscode`");
}

#[test]
fn variables_expand_in_command_cwd_and_env_values_but_not_in_keys() {
    let json = r#"{"mcpServers": {"s": {"command": "${A}/bin", "cwd": "/w/${A}",
                   "env": {"${A}": "${A}"}}}}"#;
    let env = |name: &str| (name == "A").then(|| "a".to_owned());
    let loaded = load_servers_with(json, None, &env).expect("document");
    let stdio = stdio_of(&loaded.servers[0]);
    assert_eq!(stdio.command, "a/bin");
    assert_eq!(stdio.cwd.as_deref(), Some(Path::new("/w/a")));
    assert_eq!(stdio.env["${A}"], "a");
}

#[test]
fn loading_without_a_file_leaves_the_process_environment_untouched_by_tests() {
    // `load_servers_with` reads only the lookup it is given: a name the process surely has
    // (PATH) is unset here.
    let err = with_args(r#"["${PATH}"]"#, None).expect_err("PATH is not in the test's env");
    assert_error(&err, "mcpServers.s.args[0]", "`${PATH}` is not set");
}
