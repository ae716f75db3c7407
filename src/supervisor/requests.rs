//! What a [`Supervisor`] handle sends to its server: tool calls, any other request, and
//! resource subscriptions kept across generations.

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientRequest, ServerResult, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
#[allow(deprecated)]
// resources/(un)subscribe: legacy-only, and so used only on 2025 generations
use rmcp::model::{SubscribeRequest, UnsubscribeRequest};

use super::Supervisor;
use crate::supervisor::session::connect::era::is_modern;
use crate::{CallError, call::CallOptions};

impl Supervisor {
    /// Calls a tool with everything the request may carry (`params.name` is the tool's name on
    /// this server; `_meta` is sent as given, except the progress token, which is this crate's
    /// own: see [`CallOptions::progress`]). It does not check the registered tool set first:
    /// the server decides. A host usually calls through a
    /// [`ToolHandle`](crate::ToolHandle) instead, which survives the tool's renames of server.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the call: the server is sent `notifications/cancelled`.
    pub async fn call(
        &self,
        params: CallToolRequestParams,
        options: CallOptions,
    ) -> Result<CallToolResult, CallError> {
        self.inner.calls.call(params, &options).await
    }

    /// Sends any request (`resources/read`, `prompts/get`, `completion/complete`,
    /// `logging/setLevel`, …) to the current generation, with the rules of a call: it waits for
    /// a ready generation up to `call_wait`, probes first after a long silence, waits out
    /// `Retry-After`, is sent once more to the next generation when the server provably did not
    /// run it, and its failures are judged like a call's (a suspect answer counts as a miss).
    /// A `tools/call` is passed to [`call`](Self::call), so `input_required` rounds are answered.
    ///
    /// The answer is whatever the server sent; a JSON-RPC error is [`CallError::Server`].
    ///
    /// # Cancel safety
    ///
    /// Dropping the future abandons the request: the server is sent `notifications/cancelled`.
    pub async fn request(
        &self,
        request: ClientRequest,
        options: CallOptions,
    ) -> Result<ServerResult, CallError> {
        self.inner.calls.request(request, &options).await
    }

    /// Subscribes to updates of the resource `uri`, now and on every generation after this one
    /// (a 2025 server is sent `resources/subscribe` again after each reconnect; a 2026-07-28
    /// server gets the URI in its listen stream's filter). Updates reach
    /// [`HostHandlers::on_notification`](crate::host::HostHandlers::on_notification).
    ///
    /// With a ready 2025 generation the subscription is sent at once and its answer returned;
    /// when the server refuses it, the URI is not kept. Otherwise the URI is kept and sent when
    /// a generation is ready.
    ///
    /// # Cancel safety
    ///
    /// The URI joins the set before anything is awaited: dropped while `resources/subscribe`
    /// is in flight, the URI stays kept (every later generation is subscribed to it) whether or
    /// not this server saw the request. [`unsubscribe`](Self::unsubscribe) takes it back.
    pub async fn subscribe(&self, uri: &str) -> Result<(), CallError> {
        let added = self
            .inner
            .relay
            .subscriptions
            .send_if_modified(|set| set.insert(uri.to_owned()));
        if !self.sessionful() {
            return Ok(());
        }
        #[allow(deprecated)]
        let request = ClientRequest::SubscribeRequest(SubscribeRequest::new(
            SubscribeRequestParams::new(uri),
        ));
        match self.request(request, CallOptions::default()).await {
            Ok(_) => Ok(()),
            Err(error) => {
                if added && matches!(error, CallError::Server(_)) {
                    self.inner.relay.subscriptions.send_modify(|set| {
                        set.remove(uri);
                    });
                }
                Err(error)
            }
        }
    }

    /// Ends the subscription to `uri` (see [`subscribe`](Self::subscribe)); no later generation
    /// is subscribed to it. A ready 2025 generation is sent `resources/unsubscribe`.
    ///
    /// # Cancel safety
    ///
    /// The URI leaves the set before anything is awaited: dropped while `resources/unsubscribe`
    /// is in flight, no later generation is subscribed to it, and the current one may still
    /// send its updates until it ends.
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), CallError> {
        let removed = self
            .inner
            .relay
            .subscriptions
            .send_if_modified(|set| set.remove(uri));
        if !removed || !self.sessionful() {
            return Ok(());
        }
        #[allow(deprecated)]
        let request = ClientRequest::UnsubscribeRequest(UnsubscribeRequest::new(
            UnsubscribeRequestParams::new(uri),
        ));
        self.request(request, CallOptions::default())
            .await
            .map(drop)
    }

    /// Whether the ready generation speaks an era with sessions (2025-11-25 and earlier), where
    /// subscriptions are requests of their own.
    fn sessionful(&self) -> bool {
        let live = self.inner.board.current().live;
        live.is_some_and(|live| !is_modern(&live.protocol))
    }

    /// Whether the ready generation speaks the stateless era (2026-07-28 and later): no
    /// sessions, no `logging/setLevel`, a log level in each request's `_meta`. False while no
    /// generation is ready.
    pub fn stateless(&self) -> bool {
        let live = self.inner.board.current().live;
        live.is_some_and(|live| is_modern(&live.protocol))
    }

    /// The bounds on what the server may send (its config's [`Limits`](crate::config::Limits)):
    /// what a program that pages through a list itself keeps it within
    /// ([`ListBudget`](crate::config::ListBudget)).
    pub fn limits(&self) -> &crate::config::Limits {
        &self.inner.calls.limits
    }
}
