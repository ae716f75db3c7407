//! [`CallPath`]: how a request reaches a server's current generation — shared by the
//! [`Supervisor`](crate::Supervisor) handle, the registry's tool handles and the proxy.
//!
//! The call path reads the board (the status and the generation that takes calls) and never
//! writes it: a death it observes is reported through the generation
//! ([`Live::report_death`](crate::supervisor::session::live::Live::report_death)), and the actor decides.

use std::{sync::Arc, time::Duration};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, JsonObject, ServerResult,
};
use tokio::time::Instant;

mod abandon;
mod answer;
mod cut;
mod errors;
mod input;
mod probe;
mod replays;
mod wait;

use crate::{
    CallError,
    call::CallOptions,
    config::{Replay, ServerConfig},
    supervisor::board::Board,
    supervisor::session::{live::Live, relay::Relay},
};

/// One server's call path: its settings, and what it reads.
#[derive(Debug)]
pub(in crate::supervisor) struct CallPath {
    server: Arc<str>,
    /// The status and the ready generation (read only).
    board: Arc<Board>,
    /// Progress routes, shared with every generation.
    relay: Arc<Relay>,
    call_timeout: Duration,
    /// The host's answers to what the server asks (`input_required` rounds).
    handlers: crate::host::HostHandlers,
    /// How long a call during an outage waits for a ready generation; zero: not at all.
    call_wait: Duration,
    /// Whether a call lost with its generation is sent again to a read-only or idempotent tool.
    replay: Replay,
    /// The heartbeat interval when the heartbeat is on: a call after a longer silence probes
    /// first.
    probe_after: Option<Duration>,
    /// The server's limits, for what callers list through it (the proxy's prompts, resources).
    pub(in crate::supervisor) limits: crate::config::Limits,
    /// Tool calls sent again since the start.
    pub(in crate::supervisor) replays: replays::Replays,
}

/// What became of one send.
#[expect(
    clippy::large_enum_variant,
    reason = "returned once per send and matched at once; boxing would allocate on every call"
)]
enum Sent {
    /// The request is over, one way or the other.
    Done(Result<ServerResult, CallError>),
    /// Refused for load with a `Retry-After` that fit the deadline, now waited out: send again.
    Again,
    /// The server provably did not run the request (its connection was refused, or its session
    /// was unknown); the generation was reported dead. The error is the answer if the request
    /// may not go again.
    Unsent(CallError),
    /// A 2026-07-28 request lost with its answer's cut stream, on a generation that lives on
    /// ([`cut`]): issued again as a new request, or answered by [`CallPath::after_cut`]. What
    /// was observed.
    Cut(String),
}

impl Sent {
    /// How this send ended, for its duration and span.
    fn outcome(&self) -> crate::telemetry::Outcome<'_> {
        use crate::telemetry::{Outcome, error_kind};
        match self {
            Sent::Done(Ok(ServerResult::CallToolResult(result)))
                if result.is_error == Some(true) =>
            {
                Outcome::ToolError
            }
            Sent::Done(Ok(_)) => Outcome::Ok,
            Sent::Done(Err(CallError::Server(error))) => Outcome::Rpc(error),
            Sent::Done(Err(error)) | Sent::Unsent(error) => Outcome::Failed(error_kind(error)),
            Sent::Again => Outcome::Failed("overloaded"),
            Sent::Cut(_) => Outcome::Failed("connection_lost"),
        }
    }
}

impl CallPath {
    pub(in crate::supervisor) fn new(
        server: Arc<str>,
        config: &ServerConfig,
        board: Arc<Board>,
        relay: Arc<Relay>,
    ) -> Self {
        let hb = &config.heartbeat;
        CallPath {
            server,
            board,
            relay,
            call_timeout: config.call_timeout,
            call_wait: config.effective_call_wait(),
            replay: config.replay,
            handlers: config.handlers.clone(),
            probe_after: hb.enabled.then_some(hb.interval),
            limits: config.limits.clone(),
            replays: replays::Replays::default(),
        }
    }

    /// Calls a tool on the current generation.
    ///
    /// The whole call — waiting out an overloaded server's `Retry-After`, resending a request that
    /// never left, answering `input_required` rounds — stays inside one deadline (default: the
    /// server's call timeout), counted from when a ready generation was found.
    pub(in crate::supervisor) async fn call(
        &self,
        params: CallToolRequestParams,
        options: &CallOptions,
    ) -> Result<CallToolResult, CallError> {
        let result = self.call_unrecorded(params, options).await;
        if let Err(error) = &result {
            crate::telemetry::call_failed(&self.server, error);
        }
        result
    }

    async fn call_unrecorded(
        &self,
        mut params: CallToolRequestParams,
        options: &CallOptions,
    ) -> Result<CallToolResult, CallError> {
        let (mut live, deadline, limit, mut resent) = self.ready_for(options).await?;
        let (mut overloads, mut rounds) = (0, input::Rounds::default());
        let (mut replayed, mut reissued) = (false, false);
        loop {
            let request = ClientRequest::CallToolRequest(CallToolRequest::new(params.clone()));
            let progress = options.progress.as_ref();
            match self
                .send_once(&live, request, deadline, limit, &mut overloads, progress)
                .await
            {
                Sent::Done(Ok(ServerResult::InputRequiredResult(input))) => {
                    self.answer_input(input, &mut params, &mut rounds, deadline, limit)
                        .await?
                }
                // It may have run, and running it again is harmless: once more, on the next
                // generation (DESIGN invariant 7).
                Sent::Done(Err(
                    lost @ CallError::ConnectionLost {
                        may_have_run: true, ..
                    },
                )) if !replayed && self.may_replay(&live, &params.name) => {
                    self.replays.count_unless(reissued);
                    replayed = true;
                    tracing::info!(server = %self.server, generation = %live.generation, tool = %params.name, "call lost with its generation; sending it again to the next, the tool being read-only or idempotent");
                    live = self.next_live(&live, deadline, lost).await?;
                }
                Sent::Done(result) => return result.and_then(tool_result),
                // Lost with its cut stream, and a second run is harmless: once more, as a new
                // request on the same generation (SEP-2575; see `cut`).
                Sent::Cut(_) if !reissued && self.may_replay(&live, &params.name) => {
                    self.replays.count_unless(replayed);
                    reissued = true;
                    tracing::info!(server = %self.server, generation = %live.generation, tool = %params.name, "the call's answer stream was cut; issuing it again as a new request, the tool being read-only or idempotent");
                }
                Sent::Cut(lost) => {
                    return Err(self.after_cut(&live, deadline, lost, reissued).await);
                }
                Sent::Again => {}
                // The server did not run it: it may go once to the next generation.
                Sent::Unsent(not_run) if !resent => {
                    resent = true;
                    live = self.next_live(&live, deadline, not_run).await?;
                }
                Sent::Unsent(lost) => return Err(lost),
            }
        }
    }

    /// Whether a call to `tool` lost with `live` may be sent again ([`Replay`]).
    fn may_replay(&self, live: &Live, tool: &str) -> bool {
        self.replay == Replay::Annotated && live.replayable(tool)
    }

    /// Sends any request to the current generation, with the same deadline, resend and verdict
    /// rules as a call. A `tools/call` goes through [`call`](Self::call).
    pub(in crate::supervisor) async fn request(
        &self,
        request: ClientRequest,
        options: &CallOptions,
    ) -> Result<ServerResult, CallError> {
        if let ClientRequest::CallToolRequest(call) = request {
            return self
                .call(call.params, options)
                .await
                .map(ServerResult::CallToolResult);
        }
        let (mut live, deadline, limit, mut resent) = self.ready_for(options).await?;
        let (mut overloads, mut reissued) = (0, false);
        loop {
            let progress = options.progress.as_ref();
            match self
                .send_once(
                    &live,
                    request.clone(),
                    deadline,
                    limit,
                    &mut overloads,
                    progress,
                )
                .await
            {
                Sent::Done(result) => return result,
                Sent::Again => {}
                // Every request but a tool call reads: once more, as a new request (see `cut`).
                Sent::Cut(_) if !reissued => {
                    reissued = true;
                    tracing::info!(server = %self.server, generation = %live.generation, "a request's answer stream was cut; issuing it again as a new request");
                }
                Sent::Cut(lost) => return Err(self.after_cut(&live, deadline, lost, true).await),
                Sent::Unsent(not_run) if !resent => {
                    resent = true;
                    live = self.next_live(&live, deadline, not_run).await?;
                }
                Sent::Unsent(lost) => return Err(lost),
            }
        }
    }

    /// The generation a request goes to, its deadline, its limit, and whether it was sent on
    /// already (its one resend spent): the ready generation (or the one `call_wait` waits for),
    /// probed first after a long silence; the next one when that probe ended it.
    async fn ready_for(
        &self,
        options: &CallOptions,
    ) -> Result<(Arc<Live>, Instant, Duration, bool), CallError> {
        let limit = options.timeout.unwrap_or(self.call_timeout);
        let live = self.current(limit).await?;
        let deadline = crate::clock::deadline_in(limit);
        if let Some(interval) = self.probe_after
            && live.activity.idle() > interval
        {
            // The probe is part of the call: it may not outlast the call's own deadline.
            match self.probe_before_call(&live, limit).await {
                Ok(()) => {}
                Err(probe::NotThere::Failed(error)) => return Err(error),
                Err(probe::NotThere::Ended(not_run)) => {
                    let next = self.next_live(&live, deadline, not_run).await?;
                    return Ok((next, deadline, limit, true));
                }
            }
        }
        Ok((live, deadline, limit, false))
    }
}

/// What a `tools/call` answered, as a tool result.
fn tool_result(result: ServerResult) -> Result<CallToolResult, CallError> {
    match result {
        ServerResult::CallToolResult(result) => Ok(result),
        // A result with nothing in it (some servers answer a void tool so).
        ServerResult::EmptyResult(_) => Ok(CallToolResult::default()),
        ServerResult::CreateTaskResult(_) => Err(CallError::Protocol {
            detail: "the server made the call a task, which this client does not poll".to_owned(),
        }),
        other => Err(CallError::Protocol {
            detail: format!("tools/call was answered with another kind of result: {other:?}"),
        }),
    }
}

impl crate::registry::Route for CallPath {
    fn call_tool<'a>(
        &'a self,
        tool: &'a str,
        arguments: Option<JsonObject>,
        options: CallOptions,
    ) -> futures::future::BoxFuture<'a, Result<CallToolResult, CallError>> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Some(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        Box::pin(async move { CallPath::call(self, params, &options).await })
    }

    fn status(&self) -> crate::state::Status {
        self.board.status()
    }

    fn watch(&self) -> crate::supervisor::board::StatusWatch {
        crate::supervisor::board::StatusWatch::new(self.board.subscribe())
    }
}
