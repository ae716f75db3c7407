//! VS Code's JSONC (comments, trailing commas) and the dotenv syntax of `envFile`.

use super::{assert_error, json_rejected, stdio_of};
use crate::config::load_servers_with;

fn no_env(_: &str) -> Option<String> {
    None
}

#[test]
fn comments_and_trailing_commas_are_accepted_and_strings_are_untouched() {
    let json = r#"{
      // a line comment, with "quotes" and a , comma
      "servers": {
        "s": {
          "command": "x", /* block */
          "args": ["//not a comment", "/* nor this */", "a,]", "\"//\"",],
        },
      },
    }"#;
    let loaded = load_servers_with(json, None, &no_env).expect("jsonc loads");
    assert_eq!(
        stdio_of(&loaded.servers[0]).args,
        ["//not a comment", "/* nor this */", "a,]", "\"//\""]
    );
}

#[test]
fn jsonc_errors_keep_the_users_line_numbers() {
    let json = "{\n  // comment\n  \"servers\": {\n    /* two\n lines */ \"s\": {\"command\": \"x\"},\n  }\n  oops\n}";
    let err = json_rejected(json);
    assert_eq!(err.path, "");
    assert!(err.message.contains("line 7"), "{err}");
}

#[test]
fn env_files_read_the_way_vs_code_reads_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("app.env");
    let text = "\
# comment line
export TOKEN=abc   # trailing comment
  SPACED = value with spaces  
QUOTED=\"two\\nlines\"
SINGLE='keep \\n and # hash'
BACKTICK=`tick`
COLON: yes
DOLLAR=pa$word${HOME}
EMPTY=
not a definition
=no key
TOKEN=second wins
";
    std::fs::write(&file, text).expect("write");
    let json = r#"{"mcpServers": {"s": {"command": "x", "envFile": "app.env"}}}"#;
    let loaded = load_servers_with(json, Some(dir.path()), &no_env).expect("document");
    assert!(loaded.skipped.is_empty(), "{:?}", loaded.skipped);
    let env = &stdio_of(&loaded.servers[0]).env;
    let expected = [
        ("BACKTICK", "tick"),
        ("COLON", "yes"),
        ("DOLLAR", "pa$word${HOME}"),
        ("EMPTY", ""),
        ("QUOTED", "two\nlines"),
        ("SINGLE", "keep \\n and # hash"),
        ("SPACED", "value with spaces"),
        ("TOKEN", "second wins"),
    ];
    let got: Vec<_> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(got, expected);
}

#[test]
fn an_env_file_is_for_stdio_servers_only() {
    let err = json_rejected(r#"{"mcpServers": {"w": {"url": "http://h/mcp", "envFile": ".env"}}}"#);
    assert_error(&err, "mcpServers.w.envFile", "applies only to stdio");
}
