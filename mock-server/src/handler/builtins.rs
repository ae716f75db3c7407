//! The built-in tools other than `confirm` (see [`crate::tools`] for the catalogue).

use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, ProgressNotificationParam};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde::Deserialize;

use super::MockHandler;
use super::params::{Echo, parse, text};
use crate::block::ANNOUNCEMENT;
use crate::crash::{self, AfterFlush};
use crate::progress::cancelled;
use crate::set_tools::SetTools;
use crate::{logging, progress};

/// How long the progress notification of `block` or `peek` may take to go out.
const NOTIFY_TIMEOUT: Duration = Duration::from_secs(2);

/// What `peek` tells a caller that asked for progress before it waits.
const PEEKING: &str = "peeking";

#[derive(Deserialize)]
struct Add {
    a: f64,
    b: f64,
}

#[derive(Deserialize)]
struct Sleep {
    ms: u64,
}

#[derive(Deserialize)]
struct Block {
    ms: u64,
}

#[derive(Deserialize)]
struct Fail {
    message: Option<String>,
}

#[derive(Deserialize)]
struct Crash {
    code: Option<i32>,
}

#[derive(Deserialize)]
struct EndListens {
    graceful: bool,
}

impl MockHandler {
    /// Runs the built-in tool `name` (any but `confirm`; dynamic tools go through `echo`).
    pub(super) async fn call_builtin(
        &self,
        name: &str,
        args: JsonObject,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(match name {
            "echo" => text(parse::<Echo>(args)?.text),
            "add" => {
                let Add { a, b } = parse(args)?;
                text((a + b).to_string())
            }
            "sleep" => {
                let Sleep { ms } = parse(args)?;
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(ms)) => text(format!("slept {ms}ms")),
                    () = context.ct.cancelled() => {
                        self.shared.count_cancelled();
                        return Err(cancelled("sleep"));
                    }
                }
            }
            "peek" => {
                let Sleep { ms } = parse(args)?;
                // A caller that asked for progress learns that the wait began.
                announce(&context, PEEKING).await;
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(ms)) => {
                        let who = crate::whoami::report(&self.shared);
                        text(who["boot_id"].as_str().unwrap_or_default().to_owned())
                    }
                    () = context.ct.cancelled() => {
                        self.shared.count_cancelled();
                        return Err(cancelled("peek"));
                    }
                }
            }
            "whoami" => {
                let who = crate::whoami::report(&self.shared);
                let mut result = text(who.to_string());
                result.structured_content = Some(who);
                result
            }
            "bump" => text(self.shared.bump_counter().await.to_string()),
            "log" => logging::log(&self.shared.log_level, parse(args)?, &context).await?,
            "progress" => match progress::run(parse(args)?, &context).await {
                Ok(result) => result,
                Err(()) => {
                    self.shared.count_cancelled();
                    return Err(cancelled("progress"));
                }
            },
            "fail" => {
                let message = parse::<Fail>(args)?.message;
                CallToolResult::error(vec![ContentBlock::text(
                    message.unwrap_or_else(|| "tool failed".to_owned()),
                )])
            }
            "crash" => {
                let code = parse::<Crash>(args)?.code.unwrap_or(1);
                self.shared.crash.arm(code);
                text(crash::REPLY)
            }
            "hang" => {
                self.shared.set_hang(true);
                text("hanging")
            }
            "block" => self.block(parse(args)?, context).await?,
            "wedge" if !self.shared.stdio => {
                CallToolResult::error(vec![ContentBlock::text("wedge works in stdio mode only")])
            }
            "wedge" => {
                let wedge = crash::WEDGE_MARKER;
                self.shared.crash.arm_after(wedge, AfterFlush::Wedge);
                text(crash::WEDGE_REPLY)
            }
            "end_listens" => {
                let EndListens { graceful } = parse(args)?;
                self.shared.end_listens(graceful);
                text(format!("ended listens (graceful: {graceful})"))
            }
            _ => {
                let change: SetTools = parse(args)?;
                let count = self.shared.set_tools(&change).await;
                text(format!("ok {count}"))
            }
        })
    }
}

impl MockHandler {
    /// The `block` tool. A call that asked for progress gets the block's announcement (see
    /// [`crate::block`]) once the block has started.
    async fn block(
        &self,
        Block { ms }: Block,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let announce = announce(&context, ANNOUNCEMENT);
        let duration = Duration::from_millis(ms);
        if !self.shared.block.run(duration, &context.ct, announce).await {
            self.shared.count_cancelled();
            return Err(cancelled("block"));
        }
        Ok(text(format!("blocked {ms}ms")))
    }
}

/// Sends `notifications/progress` 0 with `message` for the call of `context`, if it asked for
/// progress; given up after [`NOTIFY_TIMEOUT`].
async fn announce(context: &RequestContext<RoleServer>, message: &str) {
    let Some(token) = context.meta.get_progress_token() else {
        return;
    };
    let progress = ProgressNotificationParam::new(token, 0.0).with_message(message);
    let notify = context.peer.notify_progress(progress);
    if !matches!(
        tokio::time::timeout(NOTIFY_TIMEOUT, notify).await,
        Ok(Ok(()))
    ) {
        tracing::debug!(message, "a progress announcement was not sent");
    }
}
