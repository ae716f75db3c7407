//! The HTTP client remote transports share: the process-wide default and its redirect policy.

use std::time::Duration;

/// How long a kept-alive connection may sit idle before the client closes it: below the 5 s after
/// which common servers close theirs (uvicorn, Node's `http`), so a request is never sent on a
/// connection the server is closing at that moment. Such a request is reset after it left and
/// counts as a call that may have run (seen against the official Python SDK's server: a call
/// every 5 s, exactly the server's keep-alive, failed `ConnectionLost`). reqwest keeps them 90 s.
pub(in crate::transport) const POOL_IDLE: Duration = Duration::from_secs(4);

/// The process-wide client used by [`Supervisor::builder`]: rustls, a 10 s connect timeout, no
/// overall timeout, idle connections closed after [`POOL_IDLE`], and redirects followed only
/// within the same origin. If it cannot be built (no TLS backend), spawning says so rather than
/// fall back to a client without those rules.
pub(crate) fn default_http_client()
-> Result<&'static reqwest::Client, std::sync::Arc<reqwest::Error>> {
    static CLIENT: std::sync::OnceLock<Result<reqwest::Client, std::sync::Arc<reqwest::Error>>> =
        std::sync::OnceLock::new();
    CLIENT
        .get_or_init(|| {
            reqwest::Client::builder()
                .connect_timeout(Duration::from_secs(10))
                .pool_idle_timeout(POOL_IDLE)
                .redirect(same_origin_redirects())
                .build()
                .map_err(std::sync::Arc::new)
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Follows at most 5 redirects, and only to the origin of the request that was redirected
/// (public, with the reason, as `Supervisor::same_origin_redirects`).
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let same = attempt
            .previous()
            .last()
            .is_some_and(|from| from.origin() == attempt.url().origin());
        if same && attempt.previous().len() <= 5 {
            attempt.follow()
        } else {
            attempt.stop()
        }
    })
}

#[cfg(test)]
mod tests;
