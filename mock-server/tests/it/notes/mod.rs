//! A client that hands every progress, log-message and resource-update notification it gets
//! (outside a `subscriptions/listen` stream) to the test, in arrival order at the handler.
//!
//! rmcp runs each notification's handler in its own task, so two notifications may reach the
//! channel in either order; tests compare sets, not sequences.
#![allow(dead_code, unreachable_pub, deprecated)] // logging is deprecated in rmcp (SEP-2577)

use rmcp::model::{
    ClientCapabilities, ClientConfig, LoggingMessageNotificationParam, ProgressNotificationParam,
    ProtocolVersion, ResourceUpdatedNotificationParam,
};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient};
use tokio::sync::mpsc;

use crate::common::within;

/// One recorded notification.
#[derive(Debug, Clone)]
pub enum Note {
    /// `notifications/progress`.
    Progress(ProgressNotificationParam),
    /// `notifications/message`.
    Log(LoggingMessageNotificationParam),
    /// `notifications/resources/updated`: its URI.
    Updated(String),
}

/// The client handler: declares no capability, records notifications.
#[derive(Clone)]
pub struct Recorder {
    notes: mpsc::UnboundedSender<Note>,
}

/// What a [`Recorder`] recorded, in order of arrival.
pub struct Notes(mpsc::UnboundedReceiver<Note>);

impl Recorder {
    pub fn new() -> (Self, Notes) {
        let (notes, rx) = mpsc::unbounded_channel();
        (Self { notes }, Notes(rx))
    }
}

impl Notes {
    /// The first recorded note that `pick` accepts (earlier ones are dropped); panics after
    /// the deadline or if the client is gone.
    pub async fn first<T>(&mut self, what: &str, mut pick: impl FnMut(Note) -> Option<T>) -> T {
        within(what, async {
            loop {
                let note = self.0.recv().await.expect("the client is alive");
                if let Some(found) = pick(note) {
                    return found;
                }
            }
        })
        .await
    }

    /// The next `notifications/resources/updated`'s URI.
    pub async fn updated(&mut self) -> String {
        self.first("resources/updated", |note| match note {
            Note::Updated(uri) => Some(uri),
            _ => None,
        })
        .await
    }

    /// The next `notifications/message`.
    pub async fn log(&mut self) -> LoggingMessageNotificationParam {
        self.first("notifications/message", |note| match note {
            Note::Log(message) => Some(message),
            _ => None,
        })
        .await
    }

    /// The next `notifications/progress`.
    pub async fn progress(&mut self) -> ProgressNotificationParam {
        self.first("notifications/progress", |note| match note {
            Note::Progress(progress) => Some(progress),
            _ => None,
        })
        .await
    }

    /// Notes recorded so far and not yet taken.
    pub fn drain(&mut self) -> Vec<Note> {
        std::iter::from_fn(|| self.0.try_recv().ok()).collect()
    }
}

impl ClientHandler for Recorder {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), Default::default())
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.notes.send(Note::Progress(params));
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.notes.send(Note::Log(params));
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.notes.send(Note::Updated(params.uri));
    }
}
