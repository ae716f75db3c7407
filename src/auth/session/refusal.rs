//! What a refused or unanswered authorization means: the server's refusal of a request for its
//! token ([`Refusal`]), why no token can be had ([`Denied`]), and which of rmcp's errors mean
//! that the authorization server did not answer (a transient fault, invariant 4).

use rmcp::transport::auth::AuthError;

/// An answer that refused the request for its token, with the server's `WWW-Authenticate`.
pub(crate) enum Refusal {
    /// HTTP 401: the token is missing, expired or revoked.
    Unauthorized(String),
    /// HTTP 403 `insufficient_scope`: the token lacks a scope.
    InsufficientScope(String),
}

/// Why no token can be had. `detail` is safe to show (it never holds a secret).
#[derive(Debug, Clone)]
pub(crate) struct Denied {
    pub(crate) detail: String,
    /// The authorization server could not be reached or did not answer (a network failure, a
    /// 5xx, a timeout): nothing says the grant is gone, so this is a transient fault (the
    /// request never ran), not `unauthorized`, and no login is asked for.
    pub(crate) transient: bool,
}

/// Whether an rmcp auth error means "the authorization server did not answer", as opposed to
/// "it answered no". rmcp documents `TokenRefreshFailed` as the retryable refresh failure (a
/// definitive rejection is `TokenRefreshRejected`).
pub(super) fn unanswered(error: &AuthError) -> bool {
    matches!(
        error,
        AuthError::TokenRefreshFailed(_)
            | AuthError::HttpError(_)
            | AuthError::DiscoveryRequestFailed { .. }
    )
}

/// What an [`unanswered`] error says, without rmcp's prefix where it repeats ours.
pub(super) fn unanswered_detail(what: &str, error: &AuthError) -> String {
    let why = match error {
        AuthError::TokenRefreshFailed(why) => why.clone(),
        other => other.to_string(),
    };
    format!("the authorization server did not answer {what}: {why}")
}
