//! [`EventReceiver`] and [`ChangeReceiver`]: readers of a supervisor's events and of a
//! registry's tool changes, with what a lag means said in their types.

use tokio::sync::broadcast;

use super::{Event, ToolsChanged};

/// Why [`EventReceiver::recv`] or [`ChangeReceiver::recv`] returned no item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RecvError {
    /// The reader fell behind: the oldest `0` items were dropped for it, and the next `recv`
    /// returns the oldest one still kept. What was missed is not lost for good: the current
    /// state is always at hand ([`Supervisor::status`](crate::Supervisor::status),
    /// [`ToolRegistry::snapshot`](crate::ToolRegistry::snapshot)); read it to catch up.
    #[error("the reader fell behind and missed {0} items")]
    Lagged(u64),
    /// Nothing more will come: the supervisor is gone, or every clone of the registry was
    /// dropped.
    #[error("closed: nothing more will come")]
    Closed,
}

macro_rules! receiver {
    ($(#[$doc:meta])* $name:ident, $item:ty) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name {
            rx: broadcast::Receiver<$item>,
        }

        impl $name {
            pub(crate) fn new(rx: broadcast::Receiver<$item>) -> Self {
                $name { rx }
            }

            /// Waits for the next item. [`RecvError::Lagged`] when this reader fell behind
            /// (items were dropped for it; the call after it goes on with the oldest one kept),
            /// [`RecvError::Closed`] when nothing more will come.
            ///
            /// # Cancel safety
            ///
            /// Cancel-safe: dropped before it returns, no item is lost.
            pub async fn recv(&mut self) -> Result<$item, RecvError> {
                self.rx.recv().await.map_err(|e| match e {
                    broadcast::error::RecvError::Lagged(missed) => RecvError::Lagged(missed),
                    broadcast::error::RecvError::Closed => RecvError::Closed,
                })
            }

            /// The next item if one is waiting: `Ok(None)` when none is, errors as
            /// [`recv`](Self::recv)'s.
            pub fn try_recv(&mut self) -> Result<Option<$item>, RecvError> {
                match self.rx.try_recv() {
                    Ok(item) => Ok(Some(item)),
                    Err(broadcast::error::TryRecvError::Empty) => Ok(None),
                    Err(broadcast::error::TryRecvError::Lagged(missed)) => {
                        Err(RecvError::Lagged(missed))
                    }
                    Err(broadcast::error::TryRecvError::Closed) => Err(RecvError::Closed),
                }
            }
        }
    };
}

receiver!(
    /// A supervisor's events from the moment it was made ([`Supervisor::events`]): status
    /// changes, tool-set changes, probe misses, stability marks. It keeps up to 32 unread
    /// events; a reader further behind gets [`RecvError::Lagged`].
    ///
    /// [`Supervisor::events`]: crate::Supervisor::events
    EventReceiver,
    Event
);

receiver!(
    /// A registry's tool changes from the moment it was made ([`ToolRegistry::changes`]), in
    /// publish order. It keeps up to 256 unread changes; a reader further behind gets
    /// [`RecvError::Lagged`] and should take a fresh snapshot.
    ///
    /// [`ToolRegistry::changes`]: crate::ToolRegistry::changes
    ChangeReceiver,
    ToolsChanged
);
