//! Who takes the authorization URL to a user agent: a browser, a person reading the terminal,
//! or (for tests and the conformance suite) a headless client that follows the redirects itself.

use std::time::Duration;

use async_trait::async_trait;
use url::Url;

/// Gets an authorization URL opened. The authorization server then redirects the user agent to
/// the loopback callback, which completes the authorization; `open` only has to hand the URL
/// over (it may return before the person has approved).
#[async_trait]
pub trait Prompt: Send + Sync {
    /// Hands `url` to a user agent. An error means the URL could not be delivered at all.
    async fn open(&self, url: &str) -> Result<(), PromptError>;
}

/// Why a [`Prompt`] could not hand the authorization URL over: what it tried, and the error
/// that stopped it, if any, as its [`source`](std::error::Error::source).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct PromptError {
    message: String,
    #[source]
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl PromptError {
    /// An error that says `message` (lowercase, no final period), with no cause.
    pub fn new(message: impl Into<String>) -> Self {
        PromptError {
            message: message.into(),
            source: None,
        }
    }

    /// An error that says `message`, caused by `source`.
    pub fn caused_by(
        message: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        PromptError {
            message: message.into(),
            source: Some(source.into()),
        }
    }
}

/// Prints the URL on standard error, for a person to open.
#[derive(Debug, Clone, Copy, Default)]
pub struct PrintUrl;

#[async_trait]
impl Prompt for PrintUrl {
    async fn open(&self, url: &str) -> Result<(), PromptError> {
        eprintln!("Open this URL in a browser to authorize:\n\n  {url}\n");
        Ok(())
    }
}

/// Opens the system browser (`xdg-open`, or `open` on macOS) and prints the URL as well, in
/// case no browser is there to open it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Browser;

#[async_trait]
impl Prompt for Browser {
    async fn open(&self, url: &str) -> Result<(), PromptError> {
        PrintUrl.open(url).await?;
        let opener = if cfg!(target_os = "macos") {
            "open"
        } else {
            "xdg-open"
        };
        let spawned = tokio::process::Command::new(opener)
            .arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .status();
        match tokio::time::timeout(Duration::from_secs(10), spawned).await {
            Ok(Ok(status)) if status.success() => {}
            _ => eprintln!("(could not start `{opener}`; open the URL yourself)"),
        }
        Ok(())
    }
}

/// Fetches the authorization URL itself and follows its redirects (at most 10) until one lands
/// on a loopback address, the callback, which it fetches too. Only an authorization server that
/// approves without a person (a test server, the conformance suite's) gets that far; anything
/// else (a login page) is an error.
#[derive(Debug, Clone)]
pub struct Headless {
    http: reqwest::Client,
}

impl Default for Headless {
    fn default() -> Self {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap_or_default();
        Headless { http }
    }
}

impl Headless {
    /// A headless prompt with its own HTTP client (no automatic redirects).
    pub fn new() -> Self {
        Self::default()
    }
}

#[async_trait]
impl Prompt for Headless {
    async fn open(&self, url: &str) -> Result<(), PromptError> {
        let mut at =
            Url::parse(url).map_err(|e| PromptError::caused_by("invalid authorization URL", e))?;
        for _ in 0..10 {
            let response = self.http.get(at.clone()).send().await.map_err(|e| {
                PromptError::caused_by(
                    format!("GET {} failed", at.origin().ascii_serialization()),
                    e,
                )
            })?;
            if is_loopback(&at) && at.path().ends_with("/callback") {
                return Ok(());
            }
            if !response.status().is_redirection() {
                return Err(PromptError::new(format!(
                    "the authorization server answered HTTP {} instead of redirecting",
                    response.status()
                )));
            }
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| PromptError::new("a redirect without a Location"))?;
            at = at
                .join(location)
                .map_err(|e| PromptError::caused_by("invalid redirect Location", e))?;
        }
        Err(PromptError::new("more than 10 redirects"))
    }
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d == "localhost",
        None => false,
    }
}
