//! Loading the config files MCP hosts already have, as they are. Over 300 lines: the loader
//! and what it returns (the servers, the ones it skipped and why) are one concept.
//!
//! One loader reads every host's file; a file does not say which host wrote it, and the hosts'
//! keys do not conflict:
//!
//! | host | file | shape |
//! |---|---|---|
//! | Claude Desktop | `claude_desktop_config.json` | `mcpServers`: `command`, `args`, `env` |
//! | Claude Code | `.mcp.json` | `mcpServers`, `type` (`stdio`/`sse`/`http`), `url`, `headers`, `${VAR}` and `${VAR:-default}` |
//! | Cursor | `~/.cursor/mcp.json`, `.cursor/mcp.json` | `mcpServers`, `url`, `envFile`, `${env:NAME}`, `${workspaceFolder}` |
//! | Cline | `cline_mcp_settings.json` | `mcpServers`, `disabled`, `timeout` (seconds), `transportType`, `autoApprove`, `alwaysAllow` |
//! | Windsurf | `mcp_config.json` | `mcpServers`, `serverUrl`, `${env:NAME}`, `${file:PATH}` |
//! | VS Code | `.vscode/mcp.json` | `servers` and `inputs`, `envFile`, `dev`, `${input:ID}`, comments |
//!
//! Per key, in a server entry:
//!
//! - **honoured**: `command`, `args`, `env` (VS Code's numbers and `null` too), `envFile`, `cwd`,
//!   `url`/`serverUrl`, `headers`, `type`/`transport`/`transportType`, `disabled` (the entry is
//!   not loaded), `timeout` (seconds: `callTimeout`), and our own `reconnect`, `heartbeat`,
//!   `limits`, `callTimeout`, … keys;
//! - **accepted and ignored** (they have no counterpart here): `autoApprove`, `alwaysAllow`,
//!   `disabledTools`, `oauth`, `auth`, `dev`, `gallery`, `version`;
//! - **refused**: `headersHelper` (a command Claude Code runs for headers: we do not run it), and
//!   any key no host uses, with the nearest known key when one is close ("did you mean
//!   `command`?").
//!
//! Variables (`${…}`, see `expand`) are expanded in `command`, `args`, `env` values, `envFile`,
//! `cwd`, `url`/`serverUrl` and `header` values. The file may have `//` and `/* */` comments and
//! trailing commas (VS Code's JSONC). Unknown top-level keys (Claude Desktop keeps unrelated
//! settings there) are ignored.
//!
//! # Invariants
//!
//! 1. Only a problem with the document itself (not JSON, no `mcpServers` or `servers` object) is
//!    an `Err`. A bad entry is skipped and reported in [`LoadedServers::skipped`]; it never
//!    keeps the other entries from loading.
//! 2. Every entry ends in exactly one of `servers`, `skipped` or `disabled`.
//! 3. Every error path is in the user's keys, under the entry: `mcpServers.weather.envFile`,
//!    `servers.gh.args[2]`, `mcpServers.w.serverUrl` when the entry wrote `serverUrl`.

mod auth;
pub(crate) mod dotenv;
mod duration;
mod entry;
pub(crate) mod expand;
mod files;
mod jsonc;
mod keys;
mod limits;
mod paths;

use std::{
    collections::{BTreeMap, BTreeSet},
    fmt,
    path::{Path, PathBuf},
};

use serde::{
    Deserialize,
    de::{Deserializer, MapAccess, Visitor},
};
use serde_json::Value;

use self::{entry::Entry, expand::Vars, paths::prefixed};
use super::{ConfigError, ServerConfig, validate_server_name};

/// What a config file held: the servers that loaded, and the entries that did not.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct LoadedServers {
    /// The entries that loaded, resolved ([`ServerConfig::resolve`]), sorted by name.
    pub(in crate::config) servers: Vec<ServerConfig>,
    /// The entries that could not be loaded, in file order, each with why.
    pub(in crate::config) skipped: Vec<SkippedServer>,
    /// The names of the entries with `"disabled": true`, in file order. Their other keys are not
    /// checked.
    pub(in crate::config) disabled: Vec<String>,
    /// The file the servers came from ([`load_servers_file`]); `None` for JSON from elsewhere.
    pub(in crate::config) file: Option<PathBuf>,
}

impl LoadedServers {
    /// One line per skipped entry, naming the file (when there is one), the entry and why, for
    /// a caller to print or log as a warning:
    ///
    /// ```text
    /// ~/.cursor/mcp.json: skipping server entry `db`: mcpServers.db.envFile: cannot read …
    /// ```
    pub fn warnings(&self) -> impl Iterator<Item = String> + '_ {
        self.skipped.iter().map(|skipped| match &self.file {
            Some(file) => format!("{}: {skipped}", file.display()),
            None => skipped.to_string(),
        })
    }

    /// The entries that loaded, resolved ([`ServerConfig::resolve`]), sorted by name.
    pub fn servers(&self) -> &[ServerConfig] {
        &self.servers
    }

    /// The loaded servers, taken out.
    pub fn into_servers(self) -> Vec<ServerConfig> {
        self.servers
    }

    /// The entries that could not be loaded, in file order, each with why.
    pub fn skipped(&self) -> &[SkippedServer] {
        &self.skipped
    }

    /// The names of the entries with `"disabled": true`, in file order. Their other keys are not
    /// checked.
    pub fn disabled(&self) -> &[String] {
        &self.disabled
    }

    /// The file the servers came from ([`load_servers_file`]); `None` for JSON from elsewhere.
    pub fn file(&self) -> Option<&std::path::Path> {
        self.file.as_deref()
    }

    /// Takes the loaded server `name` out of the list, if it loaded.
    pub fn take(&mut self, name: &str) -> Option<ServerConfig> {
        let index = self.servers.iter().position(|s| s.name == name)?;
        Some(self.servers.remove(index))
    }
}

/// A server entry that could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkippedServer {
    /// The entry's key in the file (which may not be a valid server name).
    pub(crate) name: String,
    /// Why, with the path of the offending key: `mcpServers.weather.envFile: cannot read …`.
    pub(in crate::config) error: ConfigError,
}

impl SkippedServer {
    /// The entry's key in the file (which may not be a valid server name).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Why, with the path of the offending key: `mcpServers.weather.envFile: cannot read …`.
    pub fn error(&self) -> &ConfigError {
        &self.error
    }
}

impl fmt::Display for SkippedServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "skipping server entry `{}`: {}", self.name, self.error)
    }
}

/// Parses a servers file with the process environment and no file directory; see
/// [`load_servers_with`].
pub fn load_servers(json: &str) -> Result<LoadedServers, ConfigError> {
    load_servers_with(json, None, &|name| std::env::var(name).ok())
}

/// Reads and parses a servers file with the process environment; see [`load_servers_with`].
///
/// This is the one call for a host's file: relative `envFile` and `${file:…}` paths are
/// relative to the file's directory, `${workspaceFolder}` is the project when the file is in its
/// `.vscode` or `.cursor`, and [`LoadedServers::file`] is set so that
/// [`LoadedServers::warnings`] name the file. An `Err` (the file cannot be read, or is not a
/// servers file at all) has the file's path as its path, followed by the JSON path if any:
/// ``/home/me/mcp.json: expected `,` or `}` at line 4 column 5``.
pub fn load_servers_file(path: &Path) -> Result<LoadedServers, ConfigError> {
    let file = path.display().to_string();
    let json = std::fs::read_to_string(path)
        .map_err(|err| ConfigError::new(file.as_str(), format!("cannot read file: {err}")))?;
    let dir = path.parent().unwrap_or(Path::new(""));
    let mut loaded = load_servers_with(&json, Some(dir), &|name| std::env::var(name).ok())
        .map_err(|err| {
            let at = if err.path.is_empty() {
                file.clone()
            } else {
                format!("{file}: {}", err.path)
            };
            ConfigError::new(at, err.message)
        })?;
    loaded.file = Some(path.to_owned());
    Ok(loaded)
}

/// Parses a servers file in any host's format: Claude Desktop, Claude Code, Cursor, Cline,
/// Windsurf or VS Code (JSONC), with their `${…}` variables and host keys, as the README's
/// "Host config files" section lists them.
///
/// - `base_dir`: the directory of the file the JSON came from (made absolute against the current
///   directory). Relative `envFile` and `${file:…}` paths resolve against it, and when it is a
///   `.vscode` or `.cursor` directory (not `~/.cursor`) its parent is `${workspaceFolder}`.
///   `None`: relative paths resolve against the current directory and `${workspaceFolder}` is
///   an error.
/// - `env`: looks up the variables `${NAME}`, `${env:NAME}` and `${userHome}` read (`HOME`).
///
/// Returns `Err` only for the document as a whole (not JSON, not an object, no `mcpServers` or
/// `servers` object), with an empty path. Each entry is loaded on its own: a bad one lands in
/// [`LoadedServers::skipped`] with the JSON path of the offending key, e.g.
/// `mcpServers.weather.reconnect.initalDelay: unknown field …`. A name seen before in the file
/// (in either section) is skipped as a duplicate; the first one stands.
pub fn load_servers_with(
    json: &str,
    base_dir: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<LoadedServers, ConfigError> {
    let root = parse_root(json)?;
    let base_dir = base_dir.map(|dir| std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned()));
    let vars = Vars::new(env, base_dir.as_deref(), input_descriptions(root.inputs));
    let sections = [("mcpServers", root.mcp_servers), ("servers", root.servers)];
    let mut seen = BTreeSet::new();
    let mut loaded = LoadedServers::default();
    for (section, servers) in sections {
        for (name, value) in servers.map(|s| s.0).unwrap_or_default() {
            let _span = tracing::debug_span!("config", server = %name).entered();
            let outcome = if seen.insert(name.clone()) {
                load_entry(&name, value, &vars)
            } else {
                Err(ConfigError::new("", "duplicate server name"))
            };
            match outcome {
                Ok(Some(config)) => loaded.servers.push(config),
                Ok(None) => loaded.disabled.push(name),
                Err(err) => {
                    let error = prefixed(&format!("{section}.{name}"), err);
                    tracing::debug!(%error, "skipping server entry");
                    loaded.skipped.push(SkippedServer { name, error });
                }
            }
        }
    }
    loaded.servers.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(loaded)
}

/// One entry: `Ok(None)` if disabled. Error paths are relative to the entry.
fn load_entry(
    name: &str,
    value: Value,
    vars: &Vars<'_>,
) -> Result<Option<ServerConfig>, ConfigError> {
    let Value::Object(map) = &value else {
        return Err(ConfigError::new(
            "",
            "expected an object of server settings",
        ));
    };
    match map.get("disabled") {
        Some(Value::Bool(true)) => return Ok(None),
        Some(Value::Bool(false)) | None => {}
        Some(_) => return Err(ConfigError::new("disabled", "expected true or false")),
    }
    validate_server_name(name).map_err(|message| ConfigError::new("", message))?;
    keys::check_entry_keys(map)?;
    let entry: Entry = serde_path_to_error::deserialize(value)
        .map_err(|err| ConfigError::new(json_path(err.path()), err.into_inner().to_string()))?;
    entry.load(name, vars).map(Some)
}

#[derive(Deserialize)]
#[serde(expecting = "a JSON object with an mcpServers or servers object")]
struct Root {
    #[serde(rename = "mcpServers")]
    mcp_servers: Option<Servers>,
    servers: Option<Servers>,
    /// VS Code's prompts, read only to describe them in errors; any shape is accepted.
    inputs: Option<Value>,
}

/// The entries of one servers object, in file order, duplicates kept (checked by the loader),
/// each parsed only as JSON so that one bad entry cannot fail the document.
struct Servers(Vec<(String, Value)>);

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

fn parse_root(json: &str) -> Result<Root, ConfigError> {
    let json = jsonc::strip_jsonc(json);
    let mut de = serde_json::Deserializer::from_str(&json);
    let root: Root = serde_path_to_error::deserialize(&mut de)
        .map_err(|err| ConfigError::new(json_path(err.path()), err.into_inner().to_string()))?;
    de.end()
        .map_err(|err| ConfigError::new("", err.to_string()))?;
    if root.mcp_servers.is_none() && root.servers.is_none() {
        return Err(ConfigError::new("", "no mcpServers or servers object"));
    }
    Ok(root)
}

/// A serde path as we write it: empty for the root (`.`, or `?` for one never entered).
fn json_path(path: &serde_path_to_error::Path) -> String {
    let path = path.to_string();
    if path == "." || path == "?" {
        String::new()
    } else {
        path
    }
}

/// VS Code's `inputs`: `[{"id": …, "description": …}, …]` → description by id. Anything else
/// in there is not ours to judge.
fn input_descriptions(inputs: Option<Value>) -> BTreeMap<String, String> {
    let Some(Value::Array(inputs)) = inputs else {
        return BTreeMap::new();
    };
    inputs
        .iter()
        .filter_map(|input| {
            let id = input.get("id")?.as_str()?;
            let description = input.get("description")?.as_str()?;
            Some((id.to_owned(), description.to_owned()))
        })
        .collect()
}
