//! What a server may ask of the host: elicitation (a question for the user), sampling (a model
//! completion) and roots (the directories it may work in).
//!
//! The same handlers answer both ways a server asks: a 2025-era server sends a request
//! (`elicitation/create`, `sampling/createMessage`, `roots/list`) over its session; a 2026-07-28
//! server answers a tool call with `input_required`, and the supervisor runs the handlers and
//! calls again with their answers and the server's exact `requestState`. The client capabilities
//! a server sees are the handlers that are set.
//!
//! ```
//! use mcp_resilient::host::HostHandlers;
//! use rmcp::model::{ElicitResult, ElicitationAction};
//!
//! let handlers = HostHandlers::new().on_elicit(|server, request| async move {
//!     println!("{server} asks: {request:?}");
//!     Ok(ElicitResult::new(ElicitationAction::Decline))
//! });
//! ```

// Sampling and roots are deprecated by SEP-2577 (rmcp marks their types so), but servers of
// every era up to 2026-07-28 still send them, and a host must be able to answer.
#![allow(deprecated)]

mod defaults;

use std::{fmt, sync::Arc};

use futures::future::BoxFuture;
use rmcp::model::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ElicitationAction, ErrorData, ListRootsResult, ServerNotification,
};

use defaults::accept_defaults;

type ElicitFn = dyn Fn(Arc<str>, ElicitRequestParams) -> BoxFuture<'static, Result<ElicitResult, ErrorData>>
    + Send
    + Sync;
type SampleFn = dyn Fn(
        Arc<str>,
        CreateMessageRequestParams,
    ) -> BoxFuture<'static, Result<CreateMessageResult, ErrorData>>
    + Send
    + Sync;
type RootsFn =
    dyn Fn(Arc<str>) -> BoxFuture<'static, Result<ListRootsResult, ErrorData>> + Send + Sync;
type NotifyFn = dyn Fn(Arc<str>, ServerNotification) -> BoxFuture<'static, ()> + Send + Sync;

/// The host's answers to what servers ask. Cheap to clone; equal when the same handlers are set.
///
/// # Default
/// None set: servers are told the client has none of these capabilities, and a tool call that
/// needs one fails with [`CallError::InputRequired`](crate::CallError::InputRequired).
#[derive(Clone, Default)]
pub struct HostHandlers {
    elicit: Option<Arc<ElicitFn>>,
    sample: Option<Arc<SampleFn>>,
    roots: Option<Arc<RootsFn>>,
    notify: Option<Arc<NotifyFn>>,
}

impl HostHandlers {
    /// No handlers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Answers elicitations with `handler(server name, request)`.
    pub fn on_elicit<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(Arc<str>, ElicitRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, ErrorData>> + Send + 'static,
    {
        self.elicit = Some(Arc::new(move |server, request| {
            Box::pin(handler(server, request))
        }));
        self
    }

    /// Answers sampling requests with `handler(server name, request)`.
    pub fn on_sample<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(Arc<str>, CreateMessageRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, ErrorData>> + Send + 'static,
    {
        self.sample = Some(Arc::new(move |server, request| {
            Box::pin(handler(server, request))
        }));
        self
    }

    /// Answers `roots/list` with `handler(server name)`.
    pub fn on_roots<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(Arc<str>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ListRootsResult, ErrorData>> + Send + 'static,
    {
        self.roots = Some(Arc::new(move |server| Box::pin(handler(server))));
        self
    }

    /// Receives what the server tells the host, with the server's name: log messages
    /// (`notifications/message`), resource updates and list changes, prompt list changes,
    /// progress that no call of this crate is waiting for, and custom notifications. Tool list
    /// changes are not passed on: the supervisor re-syncs the registry, and
    /// [`ToolRegistry::changes`](crate::ToolRegistry::changes) says when the tools changed.
    ///
    /// On a 2026-07-28 server these arrive on the generation's listen stream, which then also
    /// asks for resource and prompt list changes (when the server can send them).
    ///
    /// `handler` should return quickly. Over stdio and legacy SSE each notification is handled
    /// in a task of its own (rmcp's), so one that waits (for a slow consumer, say) holds a task
    /// and a notification per message a flooding server sends; over Streamable HTTP they are
    /// handled one after another on the stream they came on, so one that waits holds that
    /// stream, and the answer behind it. Queue what must wait, with a bound of your own.
    pub fn on_notification<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(Arc<str>, ServerNotification) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.notify = Some(Arc::new(move |server, notification| {
            Box::pin(handler(server, notification))
        }));
        self
    }

    /// Elicitations are accepted with every field at its schema default (fields without one are
    /// left out); URL elicitations are declined. For unattended hosts and tests.
    pub fn accept_elicitation_defaults(self) -> Self {
        self.on_elicit(|_, request| async move { Ok(accept_defaults(&request)) })
    }

    /// The client capabilities these handlers add.
    pub(crate) fn capabilities(&self) -> ClientCapabilities {
        let mut capabilities = ClientCapabilities::default();
        if self.elicit.is_some() {
            capabilities.elicitation = Some(Default::default());
        }
        if self.sample.is_some() {
            capabilities.sampling = Some(Default::default());
        }
        if self.roots.is_some() {
            capabilities.roots = Some(Default::default());
        }
        capabilities
    }

    pub(crate) fn can(&self, kind: Ask) -> bool {
        match kind {
            Ask::Elicitation => self.elicit.is_some(),
            Ask::Sampling => self.sample.is_some(),
            Ask::Roots => self.roots.is_some(),
        }
    }

    /// Whether a notification handler is set.
    pub(crate) fn listens(&self) -> bool {
        self.notify.is_some()
    }

    /// Passes `notification` from `server` to the host's handler, if one is set.
    pub(crate) async fn notify(&self, server: Arc<str>, notification: ServerNotification) {
        if let Some(handler) = &self.notify {
            handler(server, notification).await;
        }
    }

    pub(crate) async fn elicit(
        &self,
        server: Arc<str>,
        request: ElicitRequestParams,
    ) -> Result<ElicitResult, ErrorData> {
        match &self.elicit {
            Some(handler) => handler(server, request).await,
            None => Ok(ElicitResult::new(ElicitationAction::Decline)),
        }
    }

    pub(crate) async fn sample(
        &self,
        server: Arc<str>,
        request: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ErrorData> {
        match &self.sample {
            Some(handler) => handler(server, request).await,
            None => Err(ErrorData::method_not_found::<
                rmcp::model::CreateMessageRequestMethod,
            >()),
        }
    }

    pub(crate) async fn roots(&self, server: Arc<str>) -> Result<ListRootsResult, ErrorData> {
        match &self.roots {
            Some(handler) => handler(server).await,
            None => Err(ErrorData::method_not_found::<
                rmcp::model::ListRootsRequestMethod,
            >()),
        }
    }
}

/// What a server asked of the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ask {
    /// `elicitation/create`: a question for the user.
    Elicitation,
    /// `sampling/createMessage`: a model completion.
    Sampling,
    /// `roots/list`: the directories the server may work in.
    Roots,
}

impl fmt::Display for Ask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Ask::Elicitation => "elicitation",
            Ask::Sampling => "sampling",
            Ask::Roots => "roots",
        })
    }
}

impl fmt::Debug for HostHandlers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostHandlers")
            .field("elicit", &self.elicit.is_some())
            .field("sample", &self.sample.is_some())
            .field("roots", &self.roots.is_some())
            .field("notify", &self.notify.is_some())
            .finish()
    }
}

impl PartialEq for HostHandlers {
    fn eq(&self, other: &Self) -> bool {
        fn same<T: ?Sized>(a: &Option<Arc<T>>, b: &Option<Arc<T>>) -> bool {
            match (a, b) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                _ => false,
            }
        }
        same(&self.elicit, &other.elicit)
            && same(&self.sample, &other.sample)
            && same(&self.roots, &other.roots)
            && same(&self.notify, &other.notify)
    }
}
