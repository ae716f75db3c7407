//! Loading the JSON files MCP users already have.
//!
//! Accepted shapes, merged when both are present:
//!
//! - Claude Desktop / Cursor: `{"mcpServers": {"<name>": {"command", "args", "env", "cwd"}}}`, or
//!   for a remote server `{"url", "type"|"transport", "headers"}` (no type: detected);
//! - VS Code: `{"servers": {"<name>": {"type": "stdio", "command", …}}}` or
//!   `{"type": "sse"|"http", "url", "headers"}`.
//!
//! Unknown top-level keys (Claude Desktop keeps unrelated settings there, VS Code its `inputs`) are
//! ignored; unknown keys inside a server entry are errors. Every entry goes through
//! [`ServerConfig::resolve`], and error paths are rewritten to the keys the user wrote.

mod duration;
mod entry;

use std::{fmt, path::Path};

use serde::{
    Deserialize,
    de::{Deserializer, MapAccess, Visitor},
};

use self::entry::Entry;
use super::{ConfigError, ServerConfig};

#[derive(Deserialize)]
#[serde(expecting = "a JSON object with an mcpServers or servers object")]
struct Root {
    #[serde(rename = "mcpServers")]
    mcp_servers: Option<Servers>,
    servers: Option<Servers>,
}

/// The entries of one servers object, in file order, duplicates kept (checked by the loader).
struct Servers(Vec<(String, Entry)>);

impl<'de> Deserialize<'de> for Servers {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ServersVisitor;
        impl<'de> Visitor<'de> for ServersVisitor {
            type Value = Servers;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of server entries keyed by server name")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Servers, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(Servers(entries))
            }
        }
        deserializer.deserialize_map(ServersVisitor)
    }
}

/// Parses a servers file and returns its enabled servers, resolved, sorted by name.
///
/// Errors carry the JSON path of the offending key, e.g.
/// `mcpServers.weather.reconnect.initalDelay: unknown field …`, or an empty path for the document
/// as a whole. A name present in both `mcpServers` and `servers` is an error. Entries with
/// `"disabled": true` are skipped: their keys are still checked, their names are not.
pub fn load_servers(json: &str) -> Result<Vec<ServerConfig>, ConfigError> {
    let mut de = serde_json::Deserializer::from_str(json);
    let root: Root = serde_path_to_error::deserialize(&mut de).map_err(|err| {
        let path = err.path().to_string();
        // `.` is the root, `?` a root that was never entered (not an object).
        let path = if path == "." || path == "?" {
            String::new()
        } else {
            path
        };
        ConfigError::new(path, err.into_inner().to_string())
    })?;
    de.end()
        .map_err(|err| ConfigError::new("", err.to_string()))?;
    if root.mcp_servers.is_none() && root.servers.is_none() {
        return Err(ConfigError::new("", "no mcpServers or servers object"));
    }
    let sections = [("mcpServers", root.mcp_servers), ("servers", root.servers)];
    let mut seen = std::collections::BTreeSet::new();
    let mut configs = Vec::new();
    for (section, servers) in sections {
        for (name, entry) in servers.map(|s| s.0).unwrap_or_default() {
            let prefix = format!("{section}.{name}");
            if !seen.insert(name.clone()) {
                return Err(ConfigError::new(prefix, "duplicate server name"));
            }
            if entry.disabled {
                tracing::debug!(server = %name, "skipping disabled server");
                continue;
            }
            super::validate_server_name(&name)
                .map_err(|message| ConfigError::new(prefix.as_str(), message))?;
            let config = entry
                .into_config(&name)
                .map_err(|err| prefixed(&prefix, err))?
                .resolve()
                .map_err(|err| prefixed(&prefix, to_json_error(err)))?;
            configs.push(config);
        }
    }
    configs.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(configs)
}

/// Reads and parses a servers file; see [`load_servers`]. A read error has the file's path as
/// its path.
pub fn load_servers_file(path: &Path) -> Result<Vec<ServerConfig>, ConfigError> {
    let json = std::fs::read_to_string(path).map_err(|err| {
        ConfigError::new(
            path.display().to_string(),
            format!("cannot read file: {err}"),
        )
    })?;
    load_servers(&json)
}

fn prefixed(prefix: &str, err: ConfigError) -> ConfigError {
    let path = if err.path.is_empty() {
        prefix.to_owned()
    } else {
        format!("{prefix}.{}", err.path)
    };
    ConfigError::new(path, err.message)
}

/// Rewrites a [`ServerConfig::resolve`] error (Rust field names) into JSON keys relative to the
/// entry: `transport.command` → `command`, `reconnect.initial_delay` → `reconnect.initialDelay`,
/// `transport.headers.X-Key` → `headers.X-Key`.
fn to_json_error(err: ConfigError) -> ConfigError {
    let path = err.path.strip_prefix("transport.").unwrap_or(&err.path);
    let path = if path == "name" {
        String::new()
    } else if path.starts_with("headers.") || path.starts_with("env.") {
        // Header and variable names are the user's own keys: keep them verbatim.
        path.to_owned()
    } else {
        path.split('.')
            .map(camel_case)
            .collect::<Vec<_>>()
            .join(".")
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
