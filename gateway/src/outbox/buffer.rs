//! The bound on what the outbox may drop: how many log and progress notifications, and how many
//! bytes of them, it keeps for a host that is not reading.

/// How many log and progress notifications the proxy keeps for a host that is not reading, and
/// how many bytes of them (as JSON); past either, new ones are dropped (and counted). Responses
/// and list changes do not count and are never dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NotificationBuffer {
    pub(in crate::outbox) max_buffered_notifications: usize,
    pub(in crate::outbox) max_buffered_notification_bytes: usize,
}

impl NotificationBuffer {
    /// The strictest of the upstreams' [`Limits`](mcp_resilient::config::Limits): the host's queue is
    /// shared by all of them, and none may buffer more for the host than its own limits allow.
    pub(crate) fn of(configs: &[mcp_resilient::ServerConfig]) -> Self {
        let limits = configs.iter().map(|config| config.get_limits());
        let defaults = mcp_resilient::config::Limits::default();
        Self {
            max_buffered_notifications: limits
                .clone()
                .map(|l| l.get_max_buffered_notifications())
                .min()
                .unwrap_or(defaults.get_max_buffered_notifications()),
            max_buffered_notification_bytes: limits
                .map(|l| l.get_max_buffered_notification_bytes())
                .min()
                .unwrap_or(defaults.get_max_buffered_notification_bytes()),
        }
    }
}

impl Default for NotificationBuffer {
    fn default() -> Self {
        Self::of(&[])
    }
}
