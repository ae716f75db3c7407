//! How the conformance client authorizes in the `auth/*` scenarios: entirely through the
//! library's OAuth ([`OAuthConfig`]), which runs the authorization code flow itself when the
//! scenario's server answers 401 (discovery, registration, PKCE, the loopback redirect, the
//! code exchange, step-ups). Nothing of OAuth is written here; this module only chooses the
//! settings a real user would write into a configuration.
//!
//! # What the client configures
//!
//! - An in-memory token store: each scenario starts with no tokens, and none outlive it.
//! - The [`Headless`] prompt: the suite's authorization server approves without a person, so
//!   the authorization URL is fetched and its redirects followed up to our loopback callback.
//! - A client metadata document URL (CIMD, SEP-991): the suite's fixed
//!   [`CLIENT_METADATA_URL`], used as the client id where the authorization server advertises
//!   `client_id_metadata_document_supported` (dynamic registration elsewhere).
//! - A pre-registered client when the scenario's context carries `client_id` (and
//!   `client_secret`, e.g. `auth/pre-registration`).
//!
//! # The client secret
//!
//! The library reads a client secret only from an environment variable (never from a
//! configuration), and this crate forbids `unsafe`, so the process cannot set one on itself.
//! When the context carries a secret, [`reexec_with_secret`] runs this same binary once more
//! with [`SECRET_ENV`] set to it; the child finds the variable and configures
//! `client_secret_env`.

use std::process::{Command, ExitCode};

use mcp_resilient::auth::{Auth, Headless, MemoryTokenStore, OAuthConfig};
use serde_json::Value;

use crate::invocation::Invocation;

/// The client metadata document URL the suite's `auth/basic-cimd` expects as the client id.
pub(crate) const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The variable the context's `client_secret` is handed over in (see the module docs).
pub(crate) const SECRET_ENV: &str = "MCP_CONFORMANCE_CLIENT_SECRET";

/// Whether `invocation`'s scenario is about authorization.
pub(crate) fn wanted(invocation: &Invocation) -> bool {
    invocation.scenario.starts_with("auth/")
}

/// The context's value at `key`, when it is a non-empty string.
fn context_str<'a>(invocation: &'a Invocation, key: &str) -> Option<&'a str> {
    invocation
        .context
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// The OAuth settings of an `auth/*` scenario (see the module docs).
pub(crate) fn config(invocation: &Invocation) -> Auth {
    let mut config = OAuthConfig::default()
        .store(MemoryTokenStore::new())
        .prompt(Headless::new())
        .client_metadata_url(CLIENT_METADATA_URL);
    if let Some(client_id) = context_str(invocation, "client_id") {
        config = config.client_id(client_id);
        if context_str(invocation, "client_secret").is_some() {
            config = config.client_secret_env(SECRET_ENV);
        }
    }
    Auth::OAuth(config)
}

/// When the context carries a client secret that this process's environment lacks: runs this
/// binary again, same arguments, with [`SECRET_ENV`] set, and returns its exit code. `None`:
/// nothing to hand over, go on in this process.
pub(crate) fn reexec_with_secret(invocation: &Invocation) -> Option<ExitCode> {
    let secret = context_str(invocation, "client_secret")?;
    if !wanted(invocation) || std::env::var(SECRET_ENV).is_ok_and(|v| v == secret) {
        return None;
    }
    let status = std::env::current_exe()
        .and_then(|me| {
            Command::new(me)
                .args(std::env::args_os().skip(1))
                .env(SECRET_ENV, secret)
                .status()
        })
        .map_err(|e| {
            eprintln!("mcp-conformance-client: cannot re-run with the client secret: {e}")
        });
    Some(match status.ok().and_then(|s| s.code()) {
        Some(0) => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn oauth(scenario: &str, context: Value) -> OAuthConfig {
        let invocation = Invocation {
            url: "http://localhost:1/mcp".into(),
            scenario: scenario.into(),
            protocol: None,
            context,
        };
        match config(&invocation) {
            Auth::OAuth(config) => config,
            other => panic!("not OAuth: {other:?}"),
        }
    }

    #[test]
    fn a_context_client_is_pre_registered_and_its_secret_is_named_by_variable_only() {
        let context = json!({"client_id": "pre", "client_secret": "s3cret"});
        let config = oauth("auth/pre-registration", context);
        // The settings are private; their `Debug` shows each (and never a secret's value).
        let shown = format!("{config:?}");
        assert!(shown.contains(r#"client_id: Some("pre")"#), "{shown}");
        assert!(
            shown.contains(&format!("client_secret_env: Some({SECRET_ENV:?})")),
            "{shown}"
        );
        assert!(!shown.contains("s3cret"));
    }

    #[test]
    fn without_a_context_client_the_metadata_document_or_registration_decides() {
        let config = oauth("auth/basic-cimd", Value::Null);
        let shown = format!("{config:?}");
        assert!(shown.contains("client_id: None"), "{shown}");
        assert!(shown.contains("client_secret_env: None"), "{shown}");
        assert!(
            shown.contains(&format!(
                "client_metadata_url: Some({CLIENT_METADATA_URL:?})"
            )),
            "{shown}"
        );
        assert!(
            shown.contains("store: Some(") && shown.contains("prompt: true"),
            "{shown}"
        );
    }
}
