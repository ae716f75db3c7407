//! What handles, watchers and rmcp handlers tell the supervisor task. A leaf: it names only the
//! retry permit and the state types, so every sender can use it without importing the actor.

use tokio::sync::oneshot;

use crate::reconnect::retry_guard::RetryPermit;
use crate::state::{Death, Generation};

/// Messages from handles, watchers and rmcp handlers to the supervisor task.
#[derive(Debug)]
pub(crate) enum Msg {
    /// A generation died; the sender won the retry permit.
    Died { death: Death, permit: RetryPermit },
    /// `notifications/tools/list_changed` (or a host request) for `generation`.
    ListChanged { generation: Generation },
    /// Close what runs, refill the budget, connect again.
    Restart { done: oneshot::Sender<()> },
    /// Stop everything (the status says `stopped` when done).
    Shutdown,
}
