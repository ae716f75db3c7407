//! Error paths in the user's own keys.

use crate::config::ConfigError;

/// `err` with its path put under `prefix` (an entry's `mcpServers.<name>`).
pub(super) fn prefixed(prefix: &str, err: ConfigError) -> ConfigError {
    let path = if err.path.is_empty() {
        prefix.to_owned()
    } else {
        format!("{prefix}.{}", err.path)
    };
    ConfigError::new(path, err.message)
}

/// Rewrites a [`ServerConfig::resolve`](crate::config::ServerConfig::resolve) error (Rust field
/// names) into JSON keys relative to the entry: `transport.command` → `command`,
/// `reconnect.initial_delay` → `reconnect.initialDelay`, `transport.headers.X-Key` →
/// `headers.X-Key`, `transport.args.2` → `args[2]`. `renames` then maps a key to the synonym the
/// entry used (`url` → `serverUrl`).
pub(super) fn to_json_error(err: ConfigError, renames: &[(&str, &str)]) -> ConfigError {
    let path = err.path.strip_prefix("transport.").unwrap_or(&err.path);
    let path = if path == "name" {
        String::new()
    } else if path.starts_with("headers.") || path.starts_with("env.") {
        // Header and variable names are the user's own keys: keep them verbatim.
        path.to_owned()
    } else {
        let mut json = String::new();
        for segment in path.split('.') {
            if !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) {
                json.push_str(&format!("[{segment}]"));
            } else {
                if !json.is_empty() {
                    json.push('.');
                }
                json.push_str(&camel_case(segment));
            }
        }
        json
    };
    let path = match renames.iter().find(|(from, _)| *from == path) {
        Some((_, to)) => (*to).to_owned(),
        None => path,
    };
    let mut message = err.message;
    for sibling in ["initial_delay", "sse_retry_min"] {
        message = message.replace(sibling, &camel_case(sibling));
    }
    ConfigError::new(path, message)
}

/// `initial_delay` → `initialDelay`, `treat_400_as_expired` → `treat400AsExpired`.
fn camel_case(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}
