//! [`Subscription`]: a 2026-07-28 `subscriptions/listen` request on the lean link, read by
//! whoever awaits it.
//!
//! The listen request is a request like any other: its `POST`'s event stream carries the
//! server's acknowledgment, the notifications it asked for (each naming the request's id as its
//! `subscriptionId`), and the final response when the server ends the subscription. The handle
//! owns the request's answer future, so the stream is read by the task that awaits the handle:
//! no task and no channel of the link's. The link's [`Inbound`] routes what the stream delivers
//! to the subscription's [`Mailbox`], a bounded queue the handle drains.
//!
//! # Invariants
//!
//! 1. The notifications naming the subscription reach it in the order received, before its
//!    final answer. At most [`CAPACITY`] wait in its mailbox (rmcp's default buffer); one more
//!    ends the subscription as lagged after those (rmcp's `SubscriptionEnd::Lagged`).
//! 2. Ending, cancelling or dropping the handle drops its `POST` (how 2026-07-28 cancels a
//!    request) and takes its mailbox out of the link's routing.
//! 3. Its ends read as rmcp's `Subscription` reads them: a final result naming it `Graceful`;
//!    the server's `notifications/cancelled` for it `Cancelled`; the transport stopping `Abrupt`;
//!    any other answer, or a notification outside the acknowledged filter, an error.

use std::{pin::Pin, sync::Arc, task::Poll};

use futures::future::BoxFuture;
use rmcp::{
    ServiceError,
    model::{
        ClientRequest, RequestId, ServerNotification, ServerResult, SubscriptionFilter,
        SubscriptionsListenRequest, SubscriptionsListenRequestParams,
    },
    service::SubscriptionEnd,
};

use super::mailbox::{CAPACITY, Mailbox, Taken};
use super::{Inbound, Link, Outgoing};

/// One open `subscriptions/listen` request (see the module docs).
pub(crate) struct Subscription {
    id: RequestId,
    acknowledged: SubscriptionFilter,
    mailbox: Arc<Mailbox>,
    inbound: Arc<Inbound>,
    /// The request's `POST` and its answer; `None` once it ended (invariant 2).
    request: Option<BoxFuture<'static, Result<ServerResult, ServiceError>>>,
    /// The answer, kept while the notifications before it are read (invariant 1); boxed.
    answer: Option<Box<Result<ServerResult, ServiceError>>>,
    end: Option<SubscriptionEnd>,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Subscription({}, {:?})", self.id, self.end)
    }
}

enum Read {
    Notification(ServerNotification),
    Lagged,
    Answer(Result<ServerResult, ServiceError>),
    Ended,
}

impl Link {
    /// Opens a listen stream for `filter` and waits for the server's acknowledgment (rmcp's
    /// `Peer::listen`).
    pub(crate) async fn listen(
        self: &Arc<Self>,
        filter: SubscriptionFilter,
    ) -> Result<Subscription, ServiceError> {
        let params = SubscriptionsListenRequestParams::new(filter.clone());
        let listen = SubscriptionsListenRequest::new(params);
        let listen = ClientRequest::SubscriptionsListenRequest(listen);
        let Outgoing { id, request, .. } = self.start(listen);
        let mailbox = Arc::new(Mailbox::default());
        self.inbound.subscribe(id.clone(), mailbox.clone());
        let (link, answering) = (self.clone(), id.clone());
        let request: BoxFuture<'static, _> = Box::pin(async move {
            let (link, id) = (&link, answering);
            Outgoing { link, id, request }.answer().await
        });
        let mut subscription = Subscription {
            id,
            acknowledged: filter.clone(),
            mailbox,
            inbound: self.inbound.clone(),
            request: Some(request),
            answer: None,
            end: None,
        };
        match subscription.read().await {
            Read::Notification(ServerNotification::SubscriptionsAcknowledgedNotification(ack))
                if ack.params.notifications.is_subset_of(&filter) =>
            {
                subscription.acknowledged = ack.params.notifications;
                Ok(subscription)
            }
            Read::Answer(Err(error)) => Err(error),
            Read::Ended => Err(ServiceError::TransportClosed),
            _ => Err(ServiceError::UnexpectedResponse),
        }
    }
}

impl Subscription {
    pub(crate) fn end(&self) -> Option<&SubscriptionEnd> {
        self.end.as_ref()
    }

    /// The next notification, or `None` once the subscription ended (how: [`Self::end`]).
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: a notification or an answer read stays for the next call.
    pub(crate) async fn next(&mut self) -> Result<Option<ServerNotification>, ServiceError> {
        if self.end.is_some() {
            return Ok(None);
        }
        match self.read().await {
            Read::Notification(ServerNotification::CancelledNotification(_)) => {
                self.finish(SubscriptionEnd::Cancelled);
                Ok(None)
            }
            Read::Notification(notification) if accepts(&self.acknowledged, &notification) => {
                Ok(Some(notification))
            }
            Read::Notification(_) => {
                self.finish(SubscriptionEnd::Abrupt);
                Err(ServiceError::UnexpectedResponse)
            }
            Read::Lagged => {
                self.finish(SubscriptionEnd::Lagged { capacity: CAPACITY });
                Ok(None)
            }
            Read::Answer(answer) => self.answered(answer),
            Read::Ended => {
                self.finish(SubscriptionEnd::Abrupt);
                Ok(None)
            }
        }
    }

    /// Cancels the subscription: its `POST` is dropped (invariant 2).
    pub(crate) fn cancel(&mut self) {
        self.finish(SubscriptionEnd::Cancelled);
    }

    /// Reads what comes next: what the mailbox holds first, then the request's answer.
    async fn read(&mut self) -> Read {
        let Subscription {
            mailbox,
            request,
            answer,
            ..
        } = self;
        std::future::poll_fn(|cx| {
            if answer.is_none()
                && let Some(pending) = request.as_mut()
                && let Poll::Ready(answered) = Pin::new(pending).poll(cx)
            {
                *request = None;
                *answer = Some(Box::new(answered));
            }
            match mailbox.take(cx.waker()) {
                Taken::Notification(notification) => Poll::Ready(Read::Notification(notification)),
                Taken::Lagged => Poll::Ready(Read::Lagged),
                Taken::Nothing => match answer.take() {
                    Some(answered) => Poll::Ready(Read::Answer(*answered)),
                    None if request.is_none() => Poll::Ready(Read::Ended),
                    None => Poll::Pending,
                },
            }
        })
        .await
    }

    /// The request's answer, read as rmcp reads it (invariant 3).
    fn answered(
        &mut self,
        answer: Result<ServerResult, ServiceError>,
    ) -> Result<Option<ServerNotification>, ServiceError> {
        let graceful = match answer {
            Err(ServiceError::TransportClosed) => None,
            Err(error) => {
                self.finish(SubscriptionEnd::Abrupt);
                return Err(error);
            }
            Ok(ServerResult::SubscriptionsListenResult(result))
                if result.result_type.is_complete()
                    && result.meta.subscription_id().as_ref() == Some(&self.id) =>
            {
                Some(result)
            }
            Ok(_) => {
                self.finish(SubscriptionEnd::Abrupt);
                return Err(ServiceError::UnexpectedResponse);
            }
        };
        let end = graceful.map_or(SubscriptionEnd::Abrupt, SubscriptionEnd::Graceful);
        self.finish(end);
        Ok(None)
    }

    fn finish(&mut self, end: SubscriptionEnd) {
        self.request = None;
        self.inbound.unsubscribe(&self.id);
        self.end.get_or_insert(end);
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.inbound.unsubscribe(&self.id);
    }
}

/// Whether `filter` (what the server acknowledged) lets `notification` through, as rmcp's
/// `Subscription` decides it.
fn accepts(filter: &SubscriptionFilter, notification: &ServerNotification) -> bool {
    match notification {
        ServerNotification::ToolListChangedNotification(_) => {
            filter.tools_list_changed == Some(true)
        }
        ServerNotification::PromptListChangedNotification(_) => {
            filter.prompts_list_changed == Some(true)
        }
        ServerNotification::ResourceListChangedNotification(_) => {
            filter.resources_list_changed == Some(true)
        }
        ServerNotification::ResourceUpdatedNotification(update) => filter
            .resource_subscriptions
            .as_ref()
            .is_some_and(|uris| uris.contains(&update.params.uri)),
        _ => false,
    }
}
