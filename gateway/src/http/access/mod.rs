//! Who may see and call which tools, and how fast: the access policy of `serve`, per caller.
//!
//! What a policy says is documented on [`Access`].
//!
//! # Invariants
//!
//! 1. A caller's tools are decided from the policy and its names alone, per request: the
//!    handler filters `tools/list` and refuses `tools/call` with the same [`Grant`].
//! 2. The callers whose rate is tracked are bounded ([`rate::MAX_TRACKED`]); see
//!    [`rate::Buckets`] for what happens past the bound.

pub(in crate::http) mod rate;

use std::{collections::HashMap, path::Path, sync::Arc};

use serde::Deserialize;

/// The most bytes a policy file may have.
const MAX_FILE: u64 = 1024 * 1024;
/// The largest rate or burst accepted.
const MAX_RATE: f64 = 1_000_000.0;

/// The access policy: per caller name, its tools and its rate. Cheap to clone.
///
/// A caller is named by its static token's name (`name:token` in a token file) or by a claim
/// of its JWT ([`JwtOptions::identity_claim`](super::JwtOptions::identity_claim)). The policy
/// gives each name the tools it sees (`tools/list` shows only those; a `tools/call` of any
/// other is refused with a JSON-RPC error and never reaches an upstream) and the requests per
/// second it may send (past them, HTTP 429 with `Retry-After`). A caller with several names
/// (scopes) gets every tool any of them grants and the most generous rate; a caller none of
/// whose names is listed gets the `default` entry, and without one sees no tool.
///
/// ```json
/// {
///   "identities": {
///     "alice":    { "tools": ["*"], "requestsPerSecond": 20, "burst": 40 },
///     "ci-bot":   { "tools": ["files/read_*", "search/query"], "requestsPerSecond": 5 },
///     "mcp:read": { "tools": ["files/read_*"] }
///   },
///   "default": { "tools": [], "requestsPerSecond": 1 }
/// }
/// ```
///
/// A tool pattern is `server/tool`, where either side may be `*` or end with `*` (a prefix);
/// a pattern without `/` is a tool of any server. In transparent mode the server is the one
/// upstream's name. Without a policy every caller sees every tool, unlimited (as before).
#[derive(Debug, Clone, Default)]
pub struct Access {
    identities: Arc<HashMap<String, Rule>>,
    default: Option<Arc<Rule>>,
}

/// What one entry grants.
#[derive(Debug, Clone, PartialEq)]
struct Rule {
    tools: Vec<Pattern>,
    rate: Option<Rate>,
}

/// Requests per second, with a burst.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(in crate::http) struct Rate {
    pub(in crate::http) per_second: f64,
    pub(in crate::http) burst: f64,
}

/// What one caller may do: the tools it sees and its rate (checked by the guard and the core).
#[derive(Debug, Clone, PartialEq)]
pub(in crate::http) struct Grant {
    tools: Vec<Pattern>,
    pub(in crate::http) rate: Option<Rate>,
}

/// `server/tool`, either side `*` or a prefix ending in `*`; no server part: any server.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pattern {
    server: Option<Glob>,
    tool: Glob,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Glob {
    Exact(String),
    Prefix(String),
}

/// Why a policy could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AccessError {
    /// The file could not be read.
    #[error("{}: cannot read it", path.display())]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is over 1 MiB.
    #[error("{}: over {max} bytes", path.display())]
    TooLarge {
        /// The file.
        path: std::path::PathBuf,
        /// The bound.
        max: u64,
    },
    /// Not a policy: the JSON is malformed, a key is unknown, or a value is out of range.
    #[error("{0}")]
    Invalid(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    identities: HashMap<String, Entry>,
    default: Option<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Entry {
    #[serde(default)]
    tools: Vec<String>,
    requests_per_second: Option<f64>,
    burst: Option<f64>,
}

impl Access {
    /// The policy in a JSON file (see [`Access`]).
    pub fn from_file(path: &Path) -> Result<Self, AccessError> {
        let text = super::bounded::read(path, MAX_FILE).map_err(|e| match e {
            super::bounded::ReadError::Io(source) => AccessError::Read {
                path: path.to_owned(),
                source,
            },
            super::bounded::ReadError::TooLarge => AccessError::TooLarge {
                path: path.to_owned(),
                max: MAX_FILE,
            },
        })?;
        Self::from_json(&text).map_err(|e| AccessError::Invalid(format!("{}: {e}", path.display())))
    }

    /// The policy in a JSON text (see [`Access`]).
    pub fn from_json(text: &str) -> Result<Self, AccessError> {
        let file: File =
            serde_json::from_str(text).map_err(|e| AccessError::Invalid(e.to_string()))?;
        let mut identities = HashMap::with_capacity(file.identities.len());
        for (name, entry) in file.identities {
            let rule = rule(&entry).map_err(|e| AccessError::Invalid(format!("{name}: {e}")))?;
            identities.insert(name, rule);
        }
        let default = match &file.default {
            Some(entry) => {
                Some(Arc::new(rule(entry).map_err(|e| {
                    AccessError::Invalid(format!("default: {e}"))
                })?))
            }
            None => None,
        };
        Ok(Self {
            identities: Arc::new(identities),
            default,
        })
    }

    /// What a caller with these names may do.
    pub(in crate::http) fn grant(&self, names: &[Arc<str>]) -> Grant {
        let matched: Vec<&Rule> = names
            .iter()
            .filter_map(|name| self.identities.get(&**name))
            .collect();
        let matched = match (matched.is_empty(), &self.default) {
            (false, _) => matched,
            (true, Some(default)) => vec![&**default],
            (true, None) => Vec::new(),
        };
        let tools = matched
            .iter()
            .flat_map(|r| r.tools.iter().cloned())
            .collect();
        // The most generous rate; unlimited if any entry is.
        let rate = match matched.iter().any(|r| r.rate.is_none()) || matched.is_empty() {
            true => None,
            false => matched
                .iter()
                .filter_map(|r| r.rate)
                .max_by(|a, b| a.per_second.total_cmp(&b.per_second)),
        };
        Grant { tools, rate }
    }
}

fn rule(entry: &Entry) -> Result<Rule, String> {
    let tools = entry
        .tools
        .iter()
        .map(|text| pattern(text))
        .collect::<Result<_, _>>()?;
    let rate = match (entry.requests_per_second, entry.burst) {
        (None, None) => None,
        (None, Some(_)) => return Err("burst needs requestsPerSecond".to_owned()),
        (Some(per_second), burst) => {
            let burst = burst.unwrap_or(per_second.ceil().max(1.0));
            if !(per_second > 0.0 && per_second <= MAX_RATE) {
                return Err(format!(
                    "requestsPerSecond must be above 0 and at most {MAX_RATE}"
                ));
            }
            if !(1.0..=MAX_RATE).contains(&burst) {
                return Err(format!("burst must be at least 1 and at most {MAX_RATE}"));
            }
            Some(Rate { per_second, burst })
        }
    };
    Ok(Rule { tools, rate })
}

fn pattern(text: &str) -> Result<Pattern, String> {
    let (server, tool) = match text.split_once('/') {
        Some((server, tool)) => (Some(glob(server, text)?), glob(tool, text)?),
        None => (None, glob(text, text)?),
    };
    Ok(Pattern { server, tool })
}

fn glob(part: &str, whole: &str) -> Result<Glob, String> {
    let bad = || format!("tool pattern {whole:?}: `*` may only end a part, and no part is empty");
    match part.strip_suffix('*') {
        _ if part.is_empty() => Err(bad()),
        Some(prefix) if prefix.contains('*') => Err(bad()),
        Some(prefix) => Ok(Glob::Prefix(prefix.to_owned())),
        None if part.contains('*') => Err(bad()),
        None => Ok(Glob::Exact(part.to_owned())),
    }
}

impl Glob {
    fn matches(&self, text: &str) -> bool {
        match self {
            Glob::Exact(exact) => exact == text,
            Glob::Prefix(prefix) => text.starts_with(prefix.as_str()),
        }
    }
}

impl Grant {
    /// Whether the caller sees `tool` of upstream `server`.
    pub(in crate::http) fn sees(&self, server: &str, tool: &str) -> bool {
        self.tools.iter().any(|pattern| {
            pattern.server.as_ref().is_none_or(|s| s.matches(server)) && pattern.tool.matches(tool)
        })
    }
}

#[cfg(test)]
mod tests;
