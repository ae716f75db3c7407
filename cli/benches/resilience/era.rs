//! Section 8, protocol 2026-07-28: the same measurements as sections 1-3 on a server without
//! sessions. A 2026 generation opens with `server/discover` (no `initialize`), is probed with
//! `server/discover` (no `ping`), and holds a `subscriptions/listen` stream open whose abrupt end
//! is its death (`stream_closed`). Every config here is pinned to `ProtocolChoice::V2026_07_28`;
//! every repetition checks that 2026-07-28 was negotiated and that the mock never received
//! `ping` or `initialize` (`whoami`'s and `/_mock/state`'s method counts).
//!
//! - call overhead: supervised versus a raw rmcp 3.11 client in `ClientLifecycleMode::Discover`
//!   with its response cache disabled, as the supervisor's; stdio and Streamable HTTP (legacy
//!   SSE has no 2026 form);
//! - detection: a killed HTTP server while idle (the listen stream, with the 2025 row's 200 ms
//!   heartbeat and with a 30 s one so that only the stream can tell), a killed stdio child, a
//!   hung server caught by the `server/discover` probe (200/50 ms x2);
//! - recovery after each kill and the stdio hang, split as in section 3.

use mcp_resilient::config::ProtocolChoice;

use crate::{
    Mode,
    calls::{self, Era as CallsEra},
    faults::{self, Era as FaultsEra, Fault, Scenario, fast_hb, slow_hb},
    mock::Res,
    stats::Row,
};

const CALLS: CallsEra = CallsEra {
    section: "8a. protocol 2026-07-28: call overhead (tools/call echo)",
    protocol: ProtocolChoice::V2026_07_28,
    sse: false,
};

const FAULTS: FaultsEra = FaultsEra {
    protocol: ProtocolChoice::V2026_07_28,
    detect: "8b. protocol 2026-07-28: detection latency (fault -> state leaves ready)",
    recover: "8c. protocol 2026-07-28: recovery (restart -> first successful call on a new generation)",
};

fn scenarios() -> Vec<Scenario> {
    let hang = Some(faults::hang_target());
    vec![
        Scenario {
            name: "child killed (exit/EOF)",
            transport: "stdio",
            fault: Fault::Kill,
            heartbeat: slow_hb(),
            target: Some(("< 10 ms", 10.0)),
        },
        Scenario {
            name: "process killed, idle heartbeat 200 ms",
            transport: "http",
            fault: Fault::Kill,
            heartbeat: fast_hb(),
            target: Some(("< 10 ms", 10.0)),
        },
        Scenario {
            name: "process killed, idle heartbeat 30 s (listen stream only)",
            transport: "http",
            fault: Fault::Kill,
            heartbeat: slow_hb(),
            target: Some(("< 10 ms", 10.0)),
        },
        Scenario {
            name: "hung (heartbeat 200/50 ms x2)",
            transport: "stdio",
            fault: Fault::Hang,
            heartbeat: fast_hb(),
            target: hang,
        },
        Scenario {
            name: "hung (heartbeat 200/50 ms x2)",
            transport: "http",
            fault: Fault::Hang,
            heartbeat: fast_hb(),
            target: hang,
        },
    ]
}

pub async fn run(mode: Mode, rows: &mut Vec<Row>) -> Res<()> {
    calls::run_era(&CALLS, mode, rows).await?;
    faults::run_scenarios(&FAULTS, &scenarios(), mode, rows).await;
    Ok(())
}
