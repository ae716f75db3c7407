//! One upstream notification as a host should get it: progress is routed per call (with the
//! host's own token), tool list changes are announced from the registry (only when the listed
//! tools changed), and the rest (cancellations, task status, custom notifications) are the
//! proxy's business, not the host's.

// Logging is deprecated by SEP-2577, but hosts and servers of the session era use it, and the
// proxy passes it on.
#![allow(deprecated)]

use std::sync::Arc;

use rmcp::model::{
    LoggingMessageNotification, PromptListChangedNotification, ResourceListChangedNotification,
    ResourceUpdatedNotification, ServerNotification,
};

use crate::Mode;

/// `notification` from `server` as a host in `mode` gets it, or `None` when it is not passed
/// on (aggregated: a log message's logger names its server).
pub(crate) fn for_host(
    server: &Arc<str>,
    mode: Mode,
    notification: ServerNotification,
) -> Option<ServerNotification> {
    Some(match notification {
        ServerNotification::LoggingMessageNotification(message) => {
            let mut params = message.params;
            if mode == Mode::Aggregated {
                params.logger = Some(match params.logger.take() {
                    Some(logger) => format!("{server}/{logger}"),
                    None => server.to_string(),
                });
            }
            LoggingMessageNotification::new(params).into()
        }
        ServerNotification::ResourceUpdatedNotification(updated) => {
            ResourceUpdatedNotification::new(updated.params).into()
        }
        ServerNotification::ResourceListChangedNotification(_) => {
            ResourceListChangedNotification::default().into()
        }
        ServerNotification::PromptListChangedNotification(_) => {
            PromptListChangedNotification::default().into()
        }
        ServerNotification::ProgressNotification(_) => {
            tracing::debug!(%server, "progress for a call that has ended; dropped");
            return None;
        }
        _ => return None,
    })
}
