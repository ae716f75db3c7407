//! `envFile`: the dotenv files VS Code and Cursor load into a stdio server's environment.
//!
//! The syntax is VS Code's own reader, so a file means here what it means in the host:
//!
//! - one `KEY=value` (or `KEY: value`) per line, an optional `export ` before the key;
//! - blank lines and lines starting with `#` are skipped, and so is a line without `=` or `:`;
//! - a `#` outside quotes starts a comment;
//! - one pair of surrounding quotes (`"`, `'` or `` ` ``) is removed; inside double quotes `\n`
//!   and `\r` become a newline and a carriage return;
//! - nothing else is interpreted: `$OTHER` stays as written.
//!
//! The last point is why this is not `dotenvy`: it expands `$OTHER` from the process environment
//! as it reads, so `PASSWORD=pa$word` would lose its tail in our proxy but not in the host, and a
//! test could not pin what a file means without touching the real environment.

use std::collections::BTreeMap;

/// The variables `text` defines, the last definition of a key winning.
#[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
pub fn parse_env_file(text: &str) -> BTreeMap<String, String> {
    let mut vars = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").map_or(line, str::trim_start);
        let Some(separator) = index_outside_quotes(line, |c| c == '=' || c == ':') else {
            continue;
        };
        let key = line[..separator].trim();
        let mut value = line[separator + 1..].trim();
        if let Some(comment) = index_outside_quotes(value, |c| c == '#') {
            value = value[..comment].trim();
        }
        if !key.is_empty() {
            vars.insert(key.to_owned(), unquote(value));
        }
    }
    vars
}

fn unquote(value: &str) -> String {
    for quote in ['"', '\'', '`'] {
        if value.len() >= 2 && value.starts_with(quote) && value.ends_with(quote) {
            let inner = &value[1..value.len() - 1];
            return if quote == '"' {
                inner.replace("\\n", "\n").replace("\\r", "\r")
            } else {
                inner.to_owned()
            };
        }
    }
    value.to_owned()
}

/// The byte index of the first character matching `wanted` outside quotes. A quote closes at the
/// same quote character unless a backslash precedes it.
fn index_outside_quotes(text: &str, wanted: impl Fn(char) -> bool) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut previous = '\0';
    for (i, c) in text.char_indices() {
        match quote {
            Some(q) if c == q && previous != '\\' => quote = None,
            Some(_) => {}
            None if matches!(c, '"' | '\'' | '`') => quote = Some(c),
            None if wanted(c) => return Some(i),
            None => {}
        }
        previous = c;
    }
    None
}
