//! Section 11, hostile input on legacy SSE: the client CPU that bytes a server controls cost.
//!
//! The server is the mock's hostile mode in its own process (`mcp-resilient mock-server
//! --transport sse --hostile KIND --hostile-trigger call`), so `/proc/self/stat` of this
//! process is the client alone. Each repetition connects a supervisor (no heartbeat), calls
//! `trigger`, and measures client CPU and wall time from the call to the verdict that the
//! burst ends in, checking that verdict:
//!
//! - 64 MiB of bare newlines: legal blank lines, then the stream ends (`stream_closed`);
//! - a 16 MiB line without a line end in 8 KiB writes, cut at the line bound (`limit_exceeded`
//!   naming `max_sse_line_bytes`): written back to back (the kernel and hyper hand the client
//!   larger reads), and dripped one write per millisecond (`--hostile-pace-ms 1`: each write is
//!   one read of 8 KiB, so the per-read cost of the runtime shows);
//! - 64 MiB of 64-byte events (`noise`: parsed, then dropped), the baseline;
//! - one invalid UTF-8 byte after a valid event: the time to the verdict (`transport_error`
//!   naming it).
//!
//! CPU is counted in clock ticks (10 ms each on Linux). A repetition that reaches no verdict
//! within [`CAP`] fails with the CPU it had used by then.

use std::time::{Duration, Instant};

use mcp_resilient::{
    ConnectionState, ServerConfig, Supervisor, ToolRegistry,
    config::Heartbeat,
    state::{Cause, Event},
};
use serde_json::json;

use crate::{
    Mode,
    idle::{clk_tck, cpu_ticks},
    mock::{LIMIT, Res, binary, ms},
    stats::{Row, Samples},
};

const SECTION: &str = "11. hostile input: legacy SSE client CPU (trigger -> verdict)";

/// The longest a repetition waits for its verdict.
const CAP: Duration = Duration::from_secs(60);

const MIB: usize = 1 << 20;

struct Case {
    name: &'static str,
    kind: &'static str,
    bytes: usize,
    /// The verdict the burst must end in, and a word its detail must hold.
    cause: Cause,
    detail: &'static str,
    /// Target on the client CPU median, in ms.
    target: Option<(&'static str, f64)>,
    /// Target on the wall-time median (the byte to the verdict), in ms.
    wall_target: Option<(&'static str, f64)>,
    /// More flags for the hostile mock.
    extra: &'static [&'static str],
}

/// A 16 MiB line without a line end, dripped one 8 KiB write per ms (the mock's default for
/// `endless-line`), cut at the line bound.
const ENDLESS_LINE: Case = Case {
    name: "",
    kind: "endless-line",
    bytes: 16 * MIB + 64 * 1024,
    cause: Cause::LimitExceeded,
    detail: "max_sse_line_bytes",
    target: Some(("< 100 ms", 100.0)),
    wall_target: None,
    extra: &[],
};

const CASES: [Case; 5] = [
    Case {
        name: "one invalid UTF-8 byte after a valid event",
        kind: "invalid-utf8",
        bytes: 0,
        cause: Cause::TransportError,
        detail: "invalid UTF-8",
        target: None,
        wall_target: Some(("< 100 ms", 100.0)),
        extra: &[],
    },
    Case {
        name: "64 MiB of bare newlines",
        kind: "newline-flood",
        bytes: 64 * MIB,
        cause: Cause::StreamClosed,
        detail: "ended",
        target: Some(("< 1000 ms", 1000.0)),
        wall_target: None,
        extra: &[],
    },
    Case {
        name: "16 MiB line without a line end, 8 KiB writes back to back",
        extra: &["--hostile-pace-ms", "0"],
        ..ENDLESS_LINE
    },
    Case {
        name: "16 MiB line without a line end, one 8 KiB write per ms (one read each)",
        ..ENDLESS_LINE
    },
    Case {
        name: "64 MiB of 64-byte events (baseline)",
        kind: "event-flood",
        bytes: 64 * MIB,
        cause: Cause::StreamClosed,
        detail: "ended",
        target: None,
        wall_target: None,
        extra: &[],
    },
];

pub async fn run(mode: Mode, rows: &mut Vec<Row>) -> Res<()> {
    let reps = if mode.quick { 2 } else { 5 };
    for case in &CASES {
        let (mut cpu, mut wall) = (Samples::default(), Samples::default());
        for _ in 0..reps {
            match once(case).await {
                Ok((c, w)) => {
                    cpu.push(c);
                    wall.push(w);
                }
                Err(e) => {
                    cpu.fail(e.clone());
                    wall.fail(e);
                }
            }
        }
        let mut row = Row::new(SECTION, format!("{}: client CPU", case.name), "ms", cpu);
        if let Some((words, limit)) = case.target {
            let met = row.samples.failed == 0 && row.samples.median() < limit;
            row = row.target(words, met);
        }
        let mb_per_s = case.bytes as f64 / MIB as f64 / (wall.median() / 1e3);
        rows.push(row.note(format!("{} MiB sent", case.bytes / MIB)));
        let note = match case.bytes {
            0 => "from the call that triggers the byte".to_owned(),
            _ => format!("{mb_per_s:.0} MiB/s"),
        };
        let mut wall_row = Row::new(SECTION, format!("{}: wall", case.name), "ms", wall).note(note);
        if let Some((words, limit)) = case.wall_target {
            let met = wall_row.samples.failed == 0 && wall_row.samples.median() < limit;
            wall_row = wall_row.target(words, met);
        }
        rows.push(wall_row);
    }
    Ok(())
}

/// One repetition: `(client CPU ms, wall ms)` from the trigger to the verdict.
async fn once(case: &Case) -> Res<(f64, f64)> {
    let bytes = case.bytes.to_string();
    let flags = [
        "mock-server",
        "--hostile",
        case.kind,
        "--hostile-bytes",
        &bytes,
    ];
    let flags = [&flags[..], &["--hostile-trigger", "call"], case.extra].concat();
    let (_child, port) = mcp_mock_server::spawn_process(binary(), &flags, "sse", 0, LIMIT)
        .await
        .map_err(|e| format!("spawn hostile mock: {e}"))?;
    let url = format!("http://127.0.0.1:{port}/sse");
    let config = ServerConfig::sse("hostile", url)
        .heartbeat(Heartbeat::disabled())
        .call_timeout(LIMIT);
    let registry = ToolRegistry::new();
    let server = Supervisor::spawn(config, &registry).map_err(|e| format!("start: {e}"))?;
    let result = measure(case, &server, &registry).await;
    server.shutdown().await;
    result
}

async fn measure(case: &Case, server: &Supervisor, registry: &ToolRegistry) -> Res<(f64, f64)> {
    server
        .wait_ready(LIMIT)
        .await
        .map_err(|s| format!("not ready: {s}"))?;
    let mut events = server.events();
    let trigger = registry
        .handle("mcp__hostile__trigger")
        .map_err(|e| e.to_string())?;
    let (ticks, started) = (cpu_ticks(), Instant::now());
    trigger
        .call(json!({}))
        .await
        .map_err(|e| format!("trigger: {e}"))?;
    let death = tokio::time::timeout(CAP, async {
        loop {
            match events.recv().await {
                // A transport's death reconnects; a limit exceeded is a refusal (`failed`).
                Ok(Event::State {
                    status:
                        mcp_resilient::Status {
                            state:
                                ConnectionState::Reconnecting { death, .. }
                                | ConnectionState::Failed { death, .. },
                            ..
                        },
                    ..
                }) => return Ok(death),
                Ok(_) | Err(mcp_resilient::state::RecvError::Lagged(_)) => {}
                Err(_) => return Err("event channel closed".to_owned()),
            }
        }
    })
    .await;
    let wall = ms(started.elapsed());
    let cpu = (cpu_ticks() - ticks) as f64 * 1e3 / clk_tck();
    let death = match death {
        Ok(death) => death?,
        Err(_) => return Err(format!("no verdict within {CAP:?} ({cpu:.0} ms of CPU)")),
    };
    if death.cause != case.cause || !death.detail.contains(case.detail) {
        let (cause, detail) = (death.cause, death.detail);
        return Err(format!(
            "unexpected verdict after {cpu:.0} ms of CPU: {cause}: {detail}"
        ));
    }
    Ok((cpu, wall))
}
