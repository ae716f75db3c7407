//! The discovery documents: protected resource metadata (RFC 9728) and authorization server
//! metadata (RFC 8414).

use serde_json::{Value, json};

use super::authority::{Authority, Resource};
use super::clients::{AUTH_METHODS, GRANT_TYPES};

/// `GET /.well-known/oauth-protected-resource<path>` (the root form describes `/mcp`).
pub(super) fn protected_resource(authority: &Authority, resource: Resource) -> Value {
    json!({
        "resource": authority.resource_url(resource),
        "authorization_servers": [authority.base],
        "scopes_supported": authority.opts.supported_scopes(),
        "bearer_methods_supported": ["header"],
    })
}

/// `GET /.well-known/oauth-authorization-server`.
pub(super) fn authorization_server(authority: &Authority) -> Value {
    let base = &authority.base;
    json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "registration_endpoint": format!("{base}/register"),
        "jwks_uri": format!("{base}/jwks"),
        "response_types_supported": ["code"],
        "grant_types_supported": GRANT_TYPES,
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": AUTH_METHODS,
        "scopes_supported": authority.opts.supported_scopes(),
        "authorization_response_iss_parameter_supported": true,
    })
}
