//! Logging: `logging/setLevel` and the `log` tool (`{"level": l, "message": s}`).
//!
//! rmcp marks the whole feature deprecated (SEP-2577, 2026-07-28); the mock still serves it,
//! so this module alone allows the deprecated types.
//!
//! - `logging/setLevel` is answered in both eras and records the level: the last one set is
//!   reported as `log_level` by `whoami` and [`MockState`](crate::MockState).
//! - `log` on an initialize-era session sends `notifications/message` (`data` = the message,
//!   `logger` = `"mcp-mock-server"`) to the caller's session when `level` is at least the last
//!   level set (any level when none was set). On Streamable HTTP sessions rmcp routes it to the
//!   standalone GET stream, elsewhere it shares the reply's stream.
//! - `log` on a 2026-07-28 request follows that revision instead: the notification goes on the
//!   request's own response stream, and only when the request's `_meta` carries
//!   `io.modelcontextprotocol/logLevel` and `level` is at least that (`logging/setLevel` does
//!   not apply). rmcp does not let `notifications/message` onto a `subscriptions/listen`
//!   stream, so listen subscribers never get it.
//!
//! Either way the notification is sent (or given up after a timeout) before the reply, which
//! says what happened: `logged <level>: <message>` or `not logged: <why>`.

#![allow(deprecated)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock, LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde::Deserialize;
use serde_json::json;

use crate::era;

/// How long the `log` notification may take to go out.
const NOTIFY_TIMEOUT: Duration = Duration::from_secs(2);
/// The `logger` of every message the mock sends.
const LOGGER: &str = "mcp-mock-server";

/// Every level, least severe first (RFC 5424 order).
const LEVELS: [LoggingLevel; 8] = [
    LoggingLevel::Debug,
    LoggingLevel::Info,
    LoggingLevel::Notice,
    LoggingLevel::Warning,
    LoggingLevel::Error,
    LoggingLevel::Critical,
    LoggingLevel::Alert,
    LoggingLevel::Emergency,
];

fn rank(level: LoggingLevel) -> usize {
    LEVELS.iter().position(|l| *l == level).unwrap_or(0)
}

/// The wire name of `level` (`"debug"`, …, `"emergency"`).
fn name(level: LoggingLevel) -> String {
    let value = serde_json::to_value(level).unwrap_or_default();
    value.as_str().unwrap_or("debug").to_owned()
}

/// The level `logging/setLevel` set last; changed only by [`LastLevel::set`].
#[derive(Default)]
pub(crate) struct LastLevel(
    /// 0: none set yet; else the level's rank + 1.
    AtomicUsize,
);

impl LastLevel {
    /// Records `logging/setLevel`.
    pub(crate) fn set(&self, params: &rmcp::model::SetLevelRequestParams) {
        self.0.store(rank(params.level) + 1, Ordering::SeqCst);
    }

    fn get(&self) -> Option<LoggingLevel> {
        let stored = self.0.load(Ordering::SeqCst);
        stored.checked_sub(1).and_then(|at| LEVELS.get(at)).copied()
    }

    /// The wire name of the last level set, if any.
    pub(crate) fn name(&self) -> Option<String> {
        self.get().map(name)
    }
}

/// The arguments of `log`.
#[derive(Deserialize)]
pub(crate) struct Log {
    level: LoggingLevel,
    message: String,
}

fn text(text: String) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

/// Runs the `log` tool for one call (see the module docs).
pub(crate) async fn log(
    last: &LastLevel,
    Log { level, message }: Log,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResult, ErrorData> {
    let threshold = match era::is_modern(context) {
        true => match context.meta.log_level() {
            Some(threshold) => Some(threshold),
            None => {
                let why = "the request's _meta has no io.modelcontextprotocol/logLevel";
                return Ok(text(format!("not logged: {why}")));
            }
        },
        false => last.get(),
    };
    if let Some(threshold) = threshold
        && rank(level) < rank(threshold)
    {
        let (level, threshold) = (name(level), name(threshold));
        return Ok(text(format!("not logged: {level} is below {threshold}")));
    }
    let param = LoggingMessageNotificationParam::new(level, json!(message)).with_logger(LOGGER);
    let sent = tokio::time::timeout(NOTIFY_TIMEOUT, context.peer.notify_logging_message(param));
    match sent.await {
        Ok(Ok(())) => Ok(text(format!("logged {}: {message}", name(level)))),
        Ok(Err(error)) => Ok(text(format!("not logged: {error}"))),
        Err(_) => Ok(text("not logged: the send timed out".to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::SetLevelRequestParams;

    use super::*;

    #[test]
    fn the_last_level_set_is_kept_by_name_and_levels_are_ordered() {
        let last = LastLevel::default();
        assert_eq!(last.name(), None);
        last.set(&SetLevelRequestParams::new(LoggingLevel::Warning));
        last.set(&SetLevelRequestParams::new(LoggingLevel::Critical));
        assert_eq!(last.name().as_deref(), Some("critical"));
        assert!(rank(LoggingLevel::Debug) < rank(LoggingLevel::Info));
        assert!(rank(LoggingLevel::Alert) < rank(LoggingLevel::Emergency));
        let names: Vec<String> = LEVELS.iter().map(|l| name(*l)).collect();
        assert_eq!(names[0], "debug");
        assert_eq!(names[7], "emergency");
    }
}
