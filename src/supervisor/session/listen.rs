//! What a generation keeps open for the server to talk to the host: the `subscriptions/listen`
//! stream of a 2026-07-28 generation, and the resource subscriptions of a 2025 one.
//!
//! A 2026-07-28 server keeps no session; the one thing that lives as long as a generation is the
//! listen request, on which the server sends its list-change notifications and the updates of
//! subscribed resources. So it is watched like an SSE stream: a tool list change re-syncs the
//! tools through the actor's serialized, fenced sync; other notifications go to the host's
//! notification handler; the stream ending without its final response is the generation's death
//! (`stream_closed`). A final response (the server ended the subscription in good order), a
//! lagged channel, or a change of the host's resource subscriptions is answered by subscribing
//! again; if that fails, the generation is dead.
//!
//! A 2025 generation is sent `resources/subscribe` for each resource the host subscribed to,
//! once, when it becomes current: subscriptions die with the session they were made on.
//!
//! # Invariants
//!
//! 1. The listener runs until the generation is reported dead (by anyone) or closed; it never
//!    outlives it (its task is owned and awaited by the generation's `Running`).
//! 2. It reports death only through [`Live::report_unless_ended`], like every other watcher.

use std::{collections::BTreeSet, sync::Arc, time::Duration};

use rmcp::{
    model::{
        ClientRequest, ErrorCode, ProtocolVersion, ServerNotification, SubscribeRequestParams,
        SubscriptionFilter,
    },
    service::SubscriptionEnd,
};
use tokio::sync::{mpsc, watch};

use super::{
    connect::era::is_modern,
    link::{Link, Listening},
    live::Live,
    relay::Relay,
};
use crate::supervisor::mailbox::{ListChange, Msg};
use crate::{
    host::HostHandlers,
    state::{Cause, Death},
};

/// How long one `resources/subscribe` of a new 2025 generation may take.
const SUBSCRIBE_LIMIT: Duration = Duration::from_secs(10);

/// What the host wants to hear from a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::supervisor) struct Wanted {
    /// The host has a notification handler: resource and prompt changes are worth asking for.
    pub(in crate::supervisor) notify: bool,
    /// The resources the host subscribed to.
    pub(in crate::supervisor) resources: BTreeSet<String>,
}

impl Wanted {
    pub(in crate::supervisor) fn now(handlers: &HostHandlers, relay: &Relay) -> Self {
        Wanted {
            notify: handlers.listens(),
            resources: relay.subscribed(),
        }
    }

    /// The listen filter for a server with `peer`'s capabilities: what it can send and the host
    /// wants. `None` when that is nothing.
    fn filter(&self, link: &Link) -> Option<SubscriptionFilter> {
        let info = link.peer_info()?;
        let capabilities = &info.capabilities;
        let mut filter = SubscriptionFilter::builder();
        let mut any = false;
        if capabilities.tools.as_ref().and_then(|t| t.list_changed) == Some(true) {
            filter = filter.tools_list_changed();
            any = true;
        }
        if self.notify {
            if capabilities.prompts.as_ref().and_then(|p| p.list_changed) == Some(true) {
                filter = filter.prompts_list_changed();
                any = true;
            }
            let resources = capabilities.resources.as_ref();
            if resources.and_then(|r| r.list_changed) == Some(true) {
                filter = filter.resources_list_changed();
                any = true;
            }
            if resources.and_then(|r| r.subscribe) == Some(true) && !self.resources.is_empty() {
                filter = filter.resource_subscriptions(self.resources.iter().cloned());
                any = true;
            }
        }
        any.then(|| filter.build())
    }
}

/// Opens the listen stream of a 2026-07-28 generation for what `wanted` asks and the server can
/// send; `Ok(None)` when there is nothing to listen to (or the server speaks an earlier era).
pub(in crate::supervisor) async fn subscribe(
    link: &Link,
    protocol: &ProtocolVersion,
    wanted: &Wanted,
) -> Result<Option<Listening>, String> {
    if !is_modern(protocol) {
        return Ok(None);
    }
    let Some(filter) = wanted.filter(link) else {
        return Ok(None);
    };
    match link.listen(filter).await {
        Ok(subscription) => Ok(Some(subscription)),
        // A server that declares list changes and does not serve the stream (an rmcp server
        // that never implements `accepted_subscription_filter` answers so): its tools still
        // answer, its changes go unheard until the next generation lists them again.
        Err(rmcp::ServiceError::McpError(error)) if error.code == ErrorCode::METHOD_NOT_FOUND => {
            tracing::warn!(
                "the server declares list changes but answers subscriptions/listen with -32601 \
                 (method not found): this generation hears no list change; its tools are listed \
                 again on the next"
            );
            Ok(None)
        }
        Err(e) => Err(format!("subscriptions/listen failed: {e}")),
    }
}

/// The listener of one generation: what [`run`] needs besides the generation itself.
pub(in crate::supervisor) struct Listener {
    /// The stream the attempt opened (before its first listing), if there was anything to ask.
    pub(in crate::supervisor) subscription: Option<Listening>,
    /// What that stream was asked for.
    pub(in crate::supervisor) wanted: Wanted,
    pub(in crate::supervisor) tx: mpsc::UnboundedSender<Msg>,
    pub(in crate::supervisor) relay: Arc<Relay>,
    pub(in crate::supervisor) handlers: HostHandlers,
}

impl Listener {
    /// Whether [`run`] has anything to do for `live`'s generation: a 2026-07-28 listen stream,
    /// or resources of a 2025 one to subscribe to again. When not, no task is spawned.
    pub(in crate::supervisor) fn needed(&self, live: &Live) -> bool {
        is_modern(&live.protocol) || !self.relay.subscribed().is_empty()
    }
}

/// Keeps `live`'s generation listening (see the module docs).
pub(in crate::supervisor) async fn run(listener: Listener, live: Arc<Live>) {
    // Boxed: a 2025 generation's task, which only renews subscriptions and ends, would
    // otherwise hold the listen loop's 4.4 KiB until the generation is closed.
    if is_modern(&live.protocol) {
        Box::pin(listen(listener, live)).await;
    } else {
        Box::pin(resubscribe(&live, &listener.relay.subscribed())).await;
    }
}

/// A 2025 generation: `resources/subscribe` for each subscribed resource. A refusal is logged,
/// not fatal: the server may have dropped the resource.
async fn resubscribe(live: &Live, resources: &BTreeSet<String>) {
    for uri in resources {
        #[allow(deprecated)] // legacy-only, and this is a legacy generation
        let request = ClientRequest::SubscribeRequest(rmcp::model::SubscribeRequest::new(
            SubscribeRequestParams::new(uri.clone()),
        ));
        let sent = tokio::time::timeout(SUBSCRIBE_LIMIT, live.link.send_request(request));
        match sent.await {
            Ok(Ok(_)) => {
                tracing::debug!(server = %live.server, generation = %live.generation, %uri, "resource subscription renewed");
            }
            Ok(Err(error)) => {
                tracing::warn!(server = %live.server, generation = %live.generation, %uri, %error, "resource subscription not renewed");
            }
            Err(_) => {
                tracing::warn!(server = %live.server, generation = %live.generation, %uri, "resource subscription not renewed: no answer within {SUBSCRIBE_LIMIT:?}");
            }
        }
    }
}

/// A 2026-07-28 generation: watches the listen stream, and opens it again when the host's
/// subscriptions change.
async fn listen(listener: Listener, live: Arc<Live>) {
    let Listener {
        mut subscription,
        wanted,
        tx,
        relay,
        handlers,
    } = listener;
    let changed = ListChange::new(live.generation, tx);
    let mut resources: watch::Receiver<BTreeSet<String>> = relay.subscriptions.subscribe();
    // The host may have subscribed between the attempt's listen and now.
    if Wanted::now(&handlers, &relay) != wanted {
        resources.mark_changed();
    }
    // What is awaited only now and then (a new subscription, a cancellation, a host's handler)
    // is boxed, so the task's idle size is the stream's wait (on rmcp's session 4,856 bytes, of
    // which its `Subscription::next` 2,520) and not theirs too (5,824).
    loop {
        let next = tokio::select! {
            next = next(&mut subscription) => next,
            changed = resources.changed() => {
                if changed.is_err() {
                    return;
                }
                let wanted = Wanted::now(&handlers, &relay);
                match Box::pin(subscribe(&live.link, &live.protocol, &wanted)).await {
                    Ok(again) => {
                        if let Some(mut old) = std::mem::replace(&mut subscription, again) {
                            Box::pin(old.cancel()).await;
                        }
                    }
                    Err(detail) => return die(&live, &detail),
                }
                continue;
            }
            _ = live.dead.cancelled() => {
                if let Some(mut subscription) = subscription {
                    Box::pin(subscription.cancel()).await;
                }
                return;
            }
        };
        match next {
            Ok(Some(ServerNotification::ToolListChangedNotification(_))) => {
                changed.raise();
            }
            Ok(Some(other)) => Box::pin(handlers.notify(live.server.clone(), other)).await,
            Ok(None) => {
                let why = match subscription.as_ref().and_then(|s| s.end()) {
                    Some(SubscriptionEnd::Graceful(_)) => "the server ended the subscription",
                    Some(SubscriptionEnd::Lagged { .. }) => "notifications were lost (lagged)",
                    Some(SubscriptionEnd::Cancelled) => "the subscription was cancelled",
                    _ => {
                        return die(&live, "the listen stream ended without its final response");
                    }
                };
                tracing::info!(server = %live.server, generation = %live.generation, "{why}; subscribing again");
                // A change may have been missed meanwhile.
                changed.raise();
                let wanted = Wanted::now(&handlers, &relay);
                match Box::pin(subscribe(&live.link, &live.protocol, &wanted)).await {
                    Ok(again) => subscription = again,
                    Err(detail) => return die(&live, &format!("{why}, and {detail}")),
                }
            }
            Err(e) => return die(&live, &format!("the listen stream failed: {e}")),
        }
    }
}

/// The next notification of `subscription`; pending for ever without one (the select's other
/// arms decide then).
async fn next(
    subscription: &mut Option<Listening>,
) -> Result<Option<ServerNotification>, rmcp::ServiceError> {
    match subscription {
        Some(subscription) => subscription.next().await,
        None => std::future::pending().await,
    }
}

fn die(live: &Live, detail: &str) {
    live.report_unless_ended(Death::new(Cause::StreamClosed, detail));
}
