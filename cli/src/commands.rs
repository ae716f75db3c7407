//! `tools`, `call` and `watch`.

use std::{process::ExitCode, time::Duration};

use mcp_resilient::{
    CallError, Supervisor, ToolRegistry, call::CallOptions, rmcp::model::CallToolRequestParams,
    state::Event,
};

use super::{args::server::ServerArgs, connect::connect, output, safe, signals::Signals};

use crate::exit::{self, fail};

/// `tools`: lists the server's tools once it is ready (see `connect` for the wait).
pub(crate) async fn tools(
    args: &ServerArgs,
    json: bool,
    wait: Option<Duration>,
    signals: &Signals,
) -> ExitCode {
    let (server, registry) = match connect(args, wait, signals).await {
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

/// `call`: calls one tool once the server is ready (see `connect` for the wait) and prints its
/// result; a tool the server does not list is named with the closest one it does.
pub(crate) async fn call(
    args: &ServerArgs,
    tool: &str,
    args_json: &str,
    wait: Option<Duration>,
    signals: &Signals,
) -> ExitCode {
    let arguments: serde_json::Value = match serde_json::from_str(args_json) {
        Ok(value @ (serde_json::Value::Object(_) | serde_json::Value::Null)) => value,
        Ok(_) => return fail(exit::USAGE, "ARGS_JSON must be a JSON object"),
        Err(e) => return fail(exit::USAGE, format!("ARGS_JSON is not JSON: {e}")),
    };
    let (server, registry) = match connect(args, wait, signals).await {
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
        let hint = crate::text::closest(tool, names)
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
    output::print_status(&name, &now, json);
    let mut shown = now.seq;
    loop {
        tokio::select! {
            event = events.recv() => match event {
                Ok(event) => shown = print_new(&event, shown, json),
                Err(mcp_resilient::state::RecvError::Lagged(n)) => safe::eprint("mcp-resilient", format!("{n} events dropped")),
                Err(_) => break,
            },
            () = signals.stop.cancelled() => break,
        }
    }
    server.shutdown().await;
    while let Ok(Some(event)) = events.try_recv() {
        shown = print_new(&event, shown, json);
    }
    // A status is visible before its event is sent (`Status` invariant 3): `stopped` may be
    // the server's status already while its event is still on the way.
    let last = server.status();
    if last.seq > shown {
        output::print_status(&name, &last, json);
    }
    ExitCode::from(exit::OK)
}

/// Prints `event` unless it announces a status no newer than `shown`, the last one printed;
/// returns the new last one.
fn print_new(event: &Event, shown: u64, json: bool) -> u64 {
    match event {
        Event::State { status, .. } if status.seq <= shown => shown,
        Event::State { status, .. } => {
            output::print_event(event, json);
            status.seq
        }
        _ => {
            output::print_event(event, json);
            shown
        }
    }
}
