//! Config files: the `mcpServers` loader (JSONC, host keys, `${…}` variables, `envFile`), the
//! expansion alone, and the dotenv reader.

use std::{collections::BTreeMap, path::Path};

use mcp_resilient::{
    config::load_servers_with,
    fuzzing::{Vars, parse_env_file},
};

/// The environment every fuzzed config sees: fixed, so an input replays the same way.
const ENV: [(&str, &str); 4] = [
    ("HOME", "/nonexistent/fuzz-home"),
    ("TOKEN", "t0ken"),
    ("EMPTY", ""),
    ("PORT", "8080"),
];

fn env(name: &str) -> Option<String> {
    ENV.iter()
        .find(|(key, _)| *key == name)
        .map(|(_, value)| (*value).to_owned())
}

/// Loads `json` as a servers file in `dir` (relative `envFile` and `${file:…}` paths resolve
/// there). Never panics; the document either fails as a whole with a message, or every entry
/// that did not load says why under its own path (`mcpServers.<name>…`); loaded servers have
/// distinct names, none of them also disabled, and each is valid (resolves again).
pub fn config_text(json: &str, dir: &Path) {
    let loaded = match load_servers_with(json, Some(dir), &env) {
        Ok(loaded) => loaded,
        Err(err) => {
            assert!(
                !err.message().is_empty(),
                "a document error without a message"
            );
            let _ = err.to_string();
            return;
        }
    };
    for skipped in loaded.skipped() {
        let path = skipped.error().path();
        let under = |section: &str| {
            path.strip_prefix(section)
                .and_then(|p| p.strip_prefix('.'))
                .and_then(|p| p.strip_prefix(skipped.name()))
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
        };
        assert!(
            under("mcpServers") || under("servers"),
            "an entry's error is not under its path: {skipped}"
        );
        assert!(
            !skipped.error().message().is_empty(),
            "no message: {skipped}"
        );
    }
    let mut names = std::collections::BTreeSet::new();
    for server in loaded.servers() {
        assert!(
            names.insert(server.name().to_owned()),
            "{} loaded twice",
            server.name()
        );
        assert!(
            !loaded.disabled().iter().any(|d| d == server.name()),
            "{} both loaded and disabled",
            server.name()
        );
        if let Err(err) = server.clone().resolve() {
            panic!("loaded server {} does not resolve: {err}", server.name());
        }
    }
    let _ = loaded.warnings().count();
    let _ = format!("{loaded:?}");
}

/// Expands `${…}` in `text` alone, as the loader does for one value (with and without a file
/// directory). Never panics; text without `${` is returned unchanged.
pub fn expansion(text: &str, dir: &Path) {
    for base in [Some(dir), None] {
        let vars = Vars::new(&env, base, BTreeMap::new());
        match vars.expand(text) {
            Ok(expanded) if !text.contains("${") => assert_eq!(expanded, text),
            Ok(_) => {}
            Err(why) => assert!(!why.is_empty(), "an expansion error without a message"),
        }
    }
}

/// Reads `text` as an `envFile`. Never panics; every key is non-empty, trimmed, on one line.
pub fn dotenv(text: &str) {
    for key in parse_env_file(text).keys() {
        assert!(!key.is_empty(), "an empty key");
        assert_eq!(key.trim(), key, "an untrimmed key");
        assert!(!key.contains('\n'), "a key spans lines: {key:?}");
    }
}
