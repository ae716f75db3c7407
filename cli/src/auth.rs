//! `login`, `logout` and `auth status`.

use std::{process::ExitCode, time::Duration};

use mcp_resilient::auth::{
    self, Browser, FileTokenStore, Headless, PrintUrl, Prompt, StoredAuth, TokenStore,
};

use super::{
    args::server::ServerArgs,
    exit::{self, fail},
    output, safe,
};
use crate::text::redact;

/// `login NAME`: runs the authorization and stores the tokens under NAME.
pub(crate) async fn login(
    name: &str,
    mut args: ServerArgs,
    no_browser: bool,
    headless: bool,
    wait: Duration,
) -> ExitCode {
    args.named_as(name);
    let config = match args.to_config() {
        Ok(config) => config,
        Err(e) => return fail(exit::USAGE, e),
    };
    let prompt: Box<dyn Prompt> = match (headless, no_browser) {
        (true, _) => Box::new(Headless::new()),
        (false, true) => Box::new(PrintUrl),
        (false, false) => Box::new(Browser),
    };
    match auth::login(&config, prompt.as_ref(), wait).await {
        Ok(stored) => {
            println!("{}", safe::line(&describe(name, &stored)));
            ExitCode::from(exit::OK)
        }
        Err(auth::LoginError::NotRemote(_)) => fail(
            exit::USAGE,
            format!("login needs a remote server: `{name}` is not reached over HTTP"),
        ),
        Err(e) => fail(
            exit::CONNECT,
            format!("login to `{name}` failed: {}", output::with_causes(&e)),
        ),
    }
}

/// `logout NAME`.
pub(crate) async fn logout(name: &str) -> ExitCode {
    let store = match FileTokenStore::for_server(name) {
        Ok(store) => store,
        Err(e) => return fail(exit::USAGE, e),
    };
    let had = match store.load().await {
        Ok(record) => record.is_some(),
        Err(_) => store.path().exists(),
    };
    if let Err(e) = store.clear().await {
        return fail(exit::USAGE, e);
    }
    match had {
        true => println!(
            "logged out of `{name}` (removed {})",
            store.path().display()
        ),
        false => println!("nothing stored for `{name}`"),
    }
    ExitCode::from(exit::OK)
}

/// `auth status`: every token file under the config directory.
pub(crate) async fn status(json: bool) -> ExitCode {
    let Some(dir) = FileTokenStore::default_dir() else {
        return fail(
            exit::USAGE,
            "no config directory: set HOME or MCP_RESILIENT_CONFIG_DIR",
        );
    };
    let mut names: Vec<String> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.strip_suffix(".json")
                    .filter(|n| !n.starts_with('.'))
                    .map(str::to_owned)
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    names.sort();
    let mut rows = Vec::new();
    for name in names {
        let store = FileTokenStore::in_dir(&dir, &name);
        match store.load().await {
            Ok(Some(record)) => rows.push((name, Ok(record))),
            Ok(None) => {}
            Err(e) => rows.push((name, Err(e.to_string()))),
        }
    }
    if json {
        let list: Vec<serde_json::Value> = rows
            .iter()
            .map(|(name, record)| match record {
                Ok(r) => serde_json::json!({
                    "server": name,
                    "url": redact(&r.server_url),
                    "client_id": r.credentials.client_id,
                    "scopes": r.credentials.granted_scopes,
                    "expires_at": r.expires_at(),
                    "refreshable": r.can_refresh(),
                }),
                Err(e) => serde_json::json!({ "server": name, "error": e }),
            })
            .collect();
        println!("{}", safe::json(&list));
        return ExitCode::from(exit::OK);
    }
    if rows.is_empty() {
        println!("no stored authorization in {}", dir.display());
    }
    for (name, record) in rows {
        match record {
            Ok(record) => println!("{}", safe::line(&describe(&name, &record))),
            Err(e) => println!("{}", safe::text(&format!("{name}: {e}"))),
        }
    }
    ExitCode::from(exit::OK)
}

/// One line: who, where, what scopes, when it expires, whether it can be refreshed.
fn describe(name: &str, record: &StoredAuth) -> String {
    let expiry = match record.expires_in() {
        None => "no expiry given".to_owned(),
        Some(left) if left.is_zero() => "expired".to_owned(),
        Some(left) => format!("expires in {}", output::human(left)),
    };
    let refresh = match record.can_refresh() {
        true => "refreshable",
        false => "no refresh token",
    };
    let scopes = match record.credentials.granted_scopes.is_empty() {
        true => "-".to_owned(),
        false => record.credentials.granted_scopes.join(" "),
    };
    format!(
        "{name}: {} (client {}; scopes {scopes}; {expiry}; {refresh})",
        redact(&record.server_url),
        record.credentials.client_id
    )
}
