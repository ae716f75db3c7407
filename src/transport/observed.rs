//! [`Observed`]: the wrapper every transport of a generation goes through, which stamps
//! activity, keeps the delivery ledger, counts progress as it arrives and drops stray responses.

use std::sync::Arc;

use rmcp::{
    RoleClient,
    model::{ProgressToken, ServerNotification},
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};

use super::{Activity, ledger::Sent, stray};

/// Told the progress token of every progress notification as it is received, before rmcp
/// hands the notification on (see `Relay::arrived`).
pub(crate) type ProgressTally = Box<dyn Fn(&ProgressToken) + Send + Sync>;

/// A transport that stamps [`Activity`] on every received message, and sees responses nobody
/// asked for ([`stray`]).
#[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
pub struct Observed<T> {
    inner: T,
    activity: Arc<Activity>,
    outstanding: stray::Outstanding,
    tally: Option<ProgressTally>,
}

impl<T> Observed<T> {
    /// Observes `inner`, the transport of `server`'s `generation`.
    #[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
    pub fn new(
        inner: T,
        activity: Arc<Activity>,
        server: Arc<str>,
        generation: crate::state::Generation,
    ) -> Self {
        Observed {
            inner,
            activity,
            outstanding: stray::Outstanding::new(server, generation),
            tally: None,
        }
    }

    /// Tells `tally` of each progress notification received, in the order received.
    pub(crate) fn counting_progress(mut self, tally: ProgressTally) -> Self {
        self.tally = Some(tally);
        self
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Observed<T> {
    type Error = T::Error;

    /// The wrapped transport's short type name (rmcp prints it in every transport error).
    fn name() -> std::borrow::Cow<'static, str> {
        let full = T::name();
        let head = full.split('<').next().unwrap_or(&full);
        head.rsplit("::").next().unwrap_or(head).to_owned().into()
    }

    /// Counts the write as pending from now until its future finishes or is dropped, so the
    /// probe policy can tell a wedged writer (a full pipe) from a busy server.
    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.outstanding.sent(&item);
        let id = match &item {
            rmcp::model::JsonRpcMessage::Request(request) => {
                let method = request.request.method();
                self.activity.ledger.handed(&request.id, method);
                Some(request.id.clone())
            }
            _ => None,
        };
        let send = self.inner.send(item);
        let pending = PendingSend::new(self.activity.clone());
        let activity = self.activity.clone();
        async move {
            let result = send.await;
            // A pipe's write is its delivery; a remote transport says itself when its POST was
            // delivered (its send may mean more than that, or be cut short).
            if let (true, Some(id)) = (activity.local_writes, &id) {
                activity.ledger.sent(
                    id,
                    if result.is_ok() {
                        Sent::Delivered
                    } else {
                        Sent::Failed
                    },
                );
            }
            drop(pending);
            result
        }
    }

    /// # Cancel safety
    ///
    /// As cancel-safe as the wrapped transport's `receive`: the stamp and the stray check
    /// happen after a message has been taken, in the same poll. A stray response proves the
    /// server alive like any answer, and is dropped here: rmcp would drop it too once the
    /// session runs, but during the handshake it fails the attempt on it.
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let message = self.inner.receive().await?;
            if is_local_error(&message) {
                return Some(message);
            }
            self.activity.touch();
            match &message {
                rmcp::model::JsonRpcMessage::Response(response) => {
                    self.activity.ledger.answered(&response.id)
                }
                rmcp::model::JsonRpcMessage::Error(error) => {
                    if let Some(id) = &error.id {
                        self.activity.ledger.answered(id);
                    }
                }
                rmcp::model::JsonRpcMessage::Notification(notification) => {
                    if let (Some(tally), ServerNotification::ProgressNotification(progress)) =
                        (&self.tally, &notification.notification)
                    {
                        tally(&progress.params.progress_token);
                    }
                }
                _ => {}
            }
            if !self.outstanding.received(&message) {
                return Some(message);
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// The marker rmcp puts in the data of an error it makes up itself when a response stream closed
/// before its answer: such a message did not come from the server and proves nothing.
const LOCAL_ERROR_MARKER: &str = "io.modelcontextprotocol/transportClosed";

fn is_local_error(message: &RxJsonRpcMessage<RoleClient>) -> bool {
    match message {
        rmcp::model::JsonRpcMessage::Error(error) => error
            .error
            .data
            .as_ref()
            .and_then(|data| data.as_object())
            .is_some_and(|data| data.contains_key(LOCAL_ERROR_MARKER)),
        _ => false,
    }
}

/// One write in progress; finished when dropped.
struct PendingSend(Arc<Activity>);

impl PendingSend {
    fn new(activity: Arc<Activity>) -> Self {
        activity.send_started();
        PendingSend(activity)
    }
}

impl Drop for PendingSend {
    fn drop(&mut self) {
        self.0.send_finished();
    }
}
