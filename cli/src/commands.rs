//! `tools`, `call` and `watch`.

use std::process::ExitCode;

use mcp_resilient::{
    CallError, ConnectionState, Supervisor, ToolRegistry, call::CallOptions,
    rmcp::model::CallToolRequestParams, state::Event,
};

use super::{args::ServerArgs, output, safe, signals::Signals};

/// Exit codes of the CLI contract.
pub(crate) mod exit {
    pub(crate) const OK: u8 = 0;
    pub(crate) const TOOL_ERROR: u8 = 1;
    pub(crate) const USAGE: u8 = 2;
    pub(crate) const CONNECT: u8 = 3;
    // A command ended by SIGINT or SIGTERM exits 128 + the signal's number (130, 143), as the
    // shell reports a process the signal killed.
}

/// Says `message` on stderr (redacted and escaped) and returns `code`.
pub(crate) fn fail(code: u8, message: impl std::fmt::Display) -> ExitCode {
    safe::eprint("mcp-resilient", message);
    ExitCode::from(code)
}

/// Starts the supervisor and waits until it is ready, or reports why it is not.
///
/// A one-shot command retries transient failures (a refused port, a timeout) only within the
/// connect timeout, and stops at once on a permanent refusal (`unauthorized`, `rejected`), which
/// the supervisor reports as `failed`.
///
/// A signal ends the wait: the supervisor is shut down, and the command exits 128 + its number.
async fn connect(
    args: &ServerArgs,
    signals: &Signals,
) -> Result<(Supervisor, ToolRegistry), ExitCode> {
    let config = args.to_config().map_err(|e| fail(exit::USAGE, e))?;
    let budget = config.connect_timeout;
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(config, &registry).map_err(|e| match e {
        mcp_resilient::StartError::Config(e) => fail(exit::USAGE, e),
        other => fail(exit::USAGE, other),
    })?;
    let ready = tokio::select! {
        ready = server.wait_ready(budget) => ready,
        () = signals.stop.cancelled() => {
            server.shutdown().await;
            return Err(ExitCode::from(signals.exit_code()));
        }
    };
    match ready {
        Ok(_) => Ok((server, registry)),
        Err(status) => {
            server.shutdown().await;
            let state = status.status.state;
            let within = match state {
                ConnectionState::Failed { .. } => String::new(),
                _ => format!(" within {}", output::human(budget)),
            };
            Err(fail(
                exit::CONNECT,
                format!("could not connect{within}: {}", describe(&state)),
            ))
        }
    }
}

fn describe(state: &ConnectionState) -> String {
    match state {
        ConnectionState::Failed { death, .. } | ConnectionState::Reconnecting { death, .. } => {
            format!("{state} ({}: {})", death.cause, death.detail)
        }
        other => other.to_string(),
    }
}

pub(crate) async fn tools(args: &ServerArgs, json: bool, signals: &Signals) -> ExitCode {
    let (server, registry) = match connect(args, signals).await {
        Ok(connected) => connected,
        Err(code) => return code,
    };
    let snapshot = registry.snapshot();
    if json {
        let status = server.status();
        let tools: Vec<_> = snapshot
            .tools()
            .map(|tool| output::tool_json(tool, status.protocol()))
            .collect();
        println!("{}", safe::json(&tools));
    } else {
        for tool in snapshot.tools() {
            let description = tool.definition.description.as_deref().unwrap_or("");
            println!(
                "{:<40} {}",
                safe::line(&tool.public_name),
                safe::line(description.lines().next().unwrap_or(""))
            );
        }
    }
    server.shutdown().await;
    ExitCode::from(exit::OK)
}

pub(crate) async fn call(
    args: &ServerArgs,
    tool: &str,
    args_json: &str,
    signals: &Signals,
) -> ExitCode {
    let arguments: serde_json::Value = match serde_json::from_str(args_json) {
        Ok(value @ (serde_json::Value::Object(_) | serde_json::Value::Null)) => value,
        Ok(_) => return fail(exit::USAGE, "ARGS_JSON must be a JSON object"),
        Err(e) => return fail(exit::USAGE, format!("ARGS_JSON is not JSON: {e}")),
    };
    let (server, registry) = match connect(args, signals).await {
        Ok(connected) => connected,
        Err(code) => return code,
    };
    let listed = registry
        .snapshot()
        .server(server.name())
        .is_some_and(|set| set.tools.iter().any(|t| &*t.raw_name == tool));
    if !listed {
        let known = registry.snapshot();
        let names = known.tools().map(|t| &*t.raw_name);
        let hint = mcp_resilient::__private::closest(tool, names)
            .map(|near| format!(" (did you mean '{near}'?)"))
            .unwrap_or_default();
        server.shutdown().await;
        return fail(exit::USAGE, format!("no tool named '{tool}'{hint}"));
    }
    let mut params = CallToolRequestParams::new(tool.to_owned());
    if let serde_json::Value::Object(arguments) = arguments {
        params = params.with_arguments(arguments);
    }
    let called = tokio::select! {
        called = server.call(params, CallOptions::default()) => called,
        () = signals.stop.cancelled() => {
            // Dropping the call abandons it (the server is told it was cancelled).
            server.shutdown().await;
            return ExitCode::from(signals.exit_code());
        }
    };
    let code = match called {
        Ok(result) => {
            println!("{}", safe::json(&result));
            if result.is_error == Some(true) {
                exit::TOOL_ERROR
            } else {
                exit::OK
            }
        }
        Err(e @ CallError::ToolNotFound { .. }) => {
            safe::eprint("mcp-resilient", e);
            exit::USAGE
        }
        Err(e @ CallError::Server(_)) => {
            safe::eprint("mcp-resilient", e);
            exit::TOOL_ERROR
        }
        Err(e) => {
            safe::eprint("mcp-resilient", e);
            exit::CONNECT
        }
    };
    server.shutdown().await;
    ExitCode::from(code)
}

/// Prints every event until SIGINT or SIGTERM, then shuts the server down (exit 0).
pub(crate) async fn watch(args: &ServerArgs, json: bool, signals: &Signals) -> ExitCode {
    let config = match args.to_config() {
        Ok(config) => config,
        Err(e) => return fail(exit::USAGE, e),
    };
    let registry = ToolRegistry::new();
    let server = match Supervisor::spawn(config, &registry) {
        Ok(server) => server,
        Err(e) => return fail(exit::USAGE, e),
    };
    let mut events = server.events();
    let name = server.name().to_owned();
    // Subscribed first, read second: the status read here may also arrive as an event, which
    // its sequence number tells apart.
    let now = server.status();
    output::print_initial(&name, &now, json);
    let mut shown = now.seq;
    let mut print = |event: &Event| {
        if already_shown(shown, event) {
            return;
        }
        if let Event::State { status, .. } = event {
            shown = status.seq;
        }
        output::print_event(event, json);
    };
    loop {
        tokio::select! {
            event = events.recv() => match event {
                Ok(event) => print(&event),
                Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => safe::eprint("mcp-resilient", format!("{n} events dropped")),
                Err(_) => break,
            },
            () = signals.stop.cancelled() => break,
        }
    }
    server.shutdown().await;
    while let Ok(event) = events.try_recv() {
        print(&event);
    }
    // The status is `stopped` once shutdown returns; its event may still be on its way.
    let last = Event::State {
        server: name.as_str().into(),
        status: server.status(),
    };
    print(&last);
    ExitCode::from(exit::OK)
}

/// True when `event` announces a status no newer than the one `watch` printed first.
fn already_shown(shown: u64, event: &Event) -> bool {
    matches!(event, Event::State { status, .. } if status.seq <= shown)
}
