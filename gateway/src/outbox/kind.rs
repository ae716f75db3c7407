//! What a queued message is, for the outbox's rules: dropped past the bounds, coalesced, or
//! kept whatever happens.

use rmcp::model::{ServerJsonRpcMessage, ServerNotification};

/// What a queued message is, for the rules above.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Kind {
    /// `notifications/message`: may be dropped.
    Log,
    /// `notifications/progress`: may be dropped.
    Progress,
    /// `notifications/resources/updated` for this URI: coalesced, and bounded like the
    /// droppable ones (a server may name endless URIs).
    Updated(String),
    /// A `list_changed` notification, by method: coalesced, never dropped.
    Changed(&'static str),
    /// Never dropped.
    Keep,
}

impl Kind {
    pub(super) fn of(message: &ServerJsonRpcMessage) -> Self {
        let ServerJsonRpcMessage::Notification(notification) = message else {
            return Kind::Keep;
        };
        match &notification.notification {
            ServerNotification::LoggingMessageNotification(_) => Kind::Log,
            ServerNotification::ProgressNotification(_) => Kind::Progress,
            ServerNotification::ResourceUpdatedNotification(updated) => {
                Kind::Updated(updated.params.uri.clone())
            }
            ServerNotification::ToolListChangedNotification(_) => {
                Kind::Changed("notifications/tools/list_changed")
            }
            ServerNotification::PromptListChangedNotification(_) => {
                Kind::Changed("notifications/prompts/list_changed")
            }
            ServerNotification::ResourceListChangedNotification(_) => {
                Kind::Changed("notifications/resources/list_changed")
            }
            _ => Kind::Keep,
        }
    }

    /// The notification's method (what a drop is counted under).
    pub(super) fn method(&self) -> &'static str {
        match self {
            Kind::Log => "notifications/message",
            Kind::Progress => "notifications/progress",
            Kind::Updated(_) => "notifications/resources/updated",
            Kind::Changed(method) => method,
            Kind::Keep => "_OTHER",
        }
    }

    /// Counted against the bounds, and dropped past them.
    pub(super) fn bounded(&self) -> bool {
        matches!(self, Kind::Log | Kind::Progress | Kind::Updated(_))
    }

    /// Coalesced with one like it that is still queued.
    pub(super) fn coalesced(&self) -> bool {
        matches!(self, Kind::Updated(_) | Kind::Changed(_))
    }
}
