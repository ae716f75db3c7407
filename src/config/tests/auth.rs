use crate::{
    auth::{Auth, Grant},
    config::{ServerConfig, TransportConfig, load_servers}};

fn auth_of(json: &str) -> Result<Auth, String> {
    let file = format!(r#"{{"mcpServers": {{"s": {json}}}}}"#);
    let mut loaded = load_servers(&file).map_err(|e| e.to_string())?;
    if let Some(skipped) = loaded.skipped.first() {
        return Err(skipped.error.to_string());
    }
    let config: ServerConfig = loaded.take("s").expect("loaded");
    match config.transport {
        TransportConfig::Remote(remote) => Ok(remote.auth),
        TransportConfig::Stdio(_) => Err("stdio".into()),
    }
}

#[test]
fn auth_takes_a_kind_or_an_object() {
    let url = r#""url": "https://example.com/mcp""#;
    assert_eq!(auth_of(&format!("{{{url}}}")).unwrap(), Auth::None);
    assert_eq!(
        auth_of(&format!(r#"{{{url}, "auth": "none"}}"#)).unwrap(),
        Auth::None
    );
    assert_eq!(
        auth_of(&format!(r#"{{{url}, "auth": "oauth"}}"#)).unwrap(),
        Auth::oauth()
    );
    assert_eq!(
        auth_of(&format!(
            r#"{{{url}, "auth": {{"type": "bearer", "env": "TOKEN"}}}}"#
        ))
        .unwrap(),
        Auth::bearer_env("TOKEN")
    );
    let full = format!(
        r#"{{{url}, "auth": {{"type": "oauth", "clientId": "abc", "clientSecretEnv": "SECRET",
            "scopes": ["read", "write"], "callbackPort": 8976, "grant": "client_credentials",
            "clientMetadataUrl": "https://example.com/client.json"}}}}"#
    );
    let Auth::OAuth(oauth) = auth_of(&full).unwrap() else {
        panic!("not oauth")
    };
    assert_eq!(oauth.client_id.as_deref(), Some("abc"));
    assert_eq!(oauth.client_secret_env.as_deref(), Some("SECRET"));
    assert_eq!(oauth.scopes, ["read", "write"]);
    assert_eq!(oauth.callback_port, 8976);
    assert_eq!(oauth.grant, Grant::ClientCredentials);
    assert_eq!(
        oauth.client_metadata_url.as_deref(),
        Some("https://example.com/client.json")
    );
}

#[test]
fn auth_mistakes_are_refused_with_their_key() {
    let url = r#""url": "https://example.com/mcp""#;
    let refused = |auth: &str| auth_of(&format!(r#"{{{url}, "auth": {auth}}}"#)).unwrap_err();
    assert!(
        refused(r#""bearer""#).contains("env"),
        "{}",
        refused(r#""bearer""#)
    );
    assert!(refused(r#""basic""#).contains("unknown auth `basic`"));
    assert!(refused(r#"{"type": "bearer"}"#).contains("auth.env"));
    assert!(refused(r#"{"type": "oauth", "env": "X"}"#).contains("auth.env"));
    assert!(refused(r#"{"type": "bearer", "env": "X", "scopes": []}"#).contains("auth.scopes"));
    assert!(refused(r#"{"type": "oauth", "grant": "password"}"#).contains("auth.grant"));
    // A secret written into the file is not a key we know: refused, not used.
    let inline = refused(r#"{"type": "oauth", "clientSecret": "s3cr3t"}"#);
    assert!(!inline.contains("s3cr3t"), "{inline}");
    // Auth and a hand-written Authorization header would fight over one header.
    let both = auth_of(&format!(
        r#"{{{url}, "auth": "oauth", "headers": {{"Authorization": "Bearer t"}}}}"#
    ))
    .unwrap_err();
    assert!(both.contains("Authorization"), "{both}");
    // Only remote servers are authorized.
    let stdio = auth_of(r#"{"command": "srv", "auth": "oauth"}"#).unwrap_err();
    assert!(stdio.contains("auth"), "{stdio}");
}

#[test]
fn cursors_oauth_client_is_read_and_its_inline_secret_refused() {
    let url = r#""url": "https://example.com/mcp""#;
    let cursor = auth_of(&format!(
        r#"{{{url}, "auth": {{"CLIENT_ID": "cursor-id", "scopes": ["read"]}}}}"#
    ))
    .unwrap();
    let Auth::OAuth(oauth) = cursor else {
        panic!("not oauth")
    };
    assert_eq!(oauth.client_id.as_deref(), Some("cursor-id"));
    assert_eq!(oauth.scopes, ["read"]);
    let secret = auth_of(&format!(
        r#"{{{url}, "auth": {{"CLIENT_ID": "id", "CLIENT_SECRET": "inline-s3cr3t"}}}}"#
    ))
    .unwrap_err();
    assert!(secret.contains("auth.CLIENT_SECRET"), "{secret}");
    assert!(secret.contains("clientSecretEnv"), "{secret}");
    assert!(!secret.contains("inline-s3cr3t"), "{secret}");
}
