//! [`Abandon`]: the cancellation of a request whose answer nobody will read any more.

use std::time::Duration;

use rmcp::model::{CancelledNotification, CancelledNotificationParam, RequestId};

use crate::supervisor::session::live::Live;

/// How long a cancellation for an abandoned request may take to send before it is given up.
const CANCEL_SEND_LIMIT: Duration = Duration::from_secs(5);

/// Sends `notifications/cancelled` for a request whose answer nobody will read any more (its
/// caller went away, or its deadline passed), so the server can stop working on it; sent by a
/// task of the generation's `cancels`, which an orderly close lets finish ([`Live::cancels`]).
pub(super) struct Abandon<'a> {
    pub(super) live: &'a Live,
    /// The request, until its answer came.
    pub(super) id: Option<RequestId>,
}

impl Drop for Abandon<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let link = self.live.link.clone();
        let params =
            CancelledNotificationParam::new(Some(id), Some("abandoned by the caller".to_owned()));
        let notification = CancelledNotification::new(params);
        let send = async move {
            let sent = link.send_notification(notification.into());
            let _ = tokio::time::timeout(CANCEL_SEND_LIMIT, sent).await;
        };
        self.live.cancels.spawn_on(send, &runtime);
    }
}
