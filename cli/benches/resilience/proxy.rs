//! Section 9, proxy overhead per call: `tools/call echo` made (a) directly through the library
//! (`Supervisor` + `ToolHandle::call`) and (b) by an rmcp client, the stand-in host, through the
//! `mcp-resilient proxy` binary, against the same upstream: one Streamable HTTP mock process
//! shared by both, or one stdio mock child each. Protocol 2025-11-25 on every hop.
//!
//! The proxy is the binary of this build (`CARGO_BIN_EXE_mcp-resilient`, which Cargo sets for
//! benches too: under `cargo bench` it is the optimized `target/release/mcp-resilient`). For
//! the stdio upstream a third side, an rmcp client on the stdio of a bare mock child, measures
//! the cost of one stdio hop with its JSON encode/decode — the hop the proxy adds.
//!
//! Sides run in rotating order, round by round, so that machine noise hits them alike; every
//! call is checked (`check_echo`). Each side's round stops at [`ROUND_LIMIT`] even if short.

use std::time::{Duration, Instant};

use mcp_resilient::config::Heartbeat;

use crate::{
    Mode,
    calls::{self, Caller, ERA_2025},
    mock::{self, MockProcess, Res},
    stats::{Row, Samples},
};

const SECTION: &str = "9. proxy overhead per call (tools/call echo, 2025-11-25)";
/// The most one side's round may take; a slower round is cut short (its calls still count).
const ROUND_LIMIT: Duration = Duration::from_secs(20);
const TARGET: f64 = 0.10;

/// One side of the comparison and its samples.
struct Side {
    name: &'static str,
    caller: Caller,
    all: Samples,
    /// The median of each round, for the spread of the overhead between rounds.
    rounds: Vec<f64>,
}

impl Side {
    fn new(name: &'static str, caller: Caller) -> Side {
        Side {
            name,
            caller,
            all: Samples::default(),
            rounds: Vec::new(),
        }
    }

    async fn round(&mut self, calls: usize, tag: &str) {
        let mut round = Samples::default();
        let started = Instant::now();
        for i in 0..calls {
            if started.elapsed() > ROUND_LIMIT {
                break;
            }
            let t = Instant::now();
            match self.caller.call(&format!("{tag}{i}")).await {
                Ok(()) => round.push_ms(t.elapsed()),
                Err(e) => self.all.fail(e),
            }
        }
        self.rounds.push(round.median());
        self.all.values.extend(round.values);
    }
}

/// The proxy binary in front of one upstream, with the stand-in host's session on its stdio.
async fn host(upstream: &[&str]) -> Res<(Caller, tokio::process::Child)> {
    let mut args = vec!["proxy", "--protocol", "2025-11-25"];
    args.extend_from_slice(upstream);
    let (raw, child) = calls::raw_child(&args, &ERA_2025).await?;
    Ok((Caller::Raw(raw), child))
}

/// Warm-up, then `rounds` rounds of `per_round` sequential calls per side, in rotating order.
async fn measure(sides: &mut [Side], mode: Mode) {
    let (rounds, per_round) = if mode.quick { (4, 250) } else { (4, 500) };
    for side in sides.iter_mut() {
        for i in 0..100 {
            let _ = side.caller.call(&format!("w{i}")).await;
        }
    }
    for round in 0..rounds {
        for k in 0..sides.len() {
            let side = &mut sides[(round + k) % sides.len()];
            side.round(per_round, &format!("r{round}-")).await;
        }
    }
}

fn rows_of(upstream: &str, sides: &[Side], rows: &mut Vec<Row>) {
    for side in sides {
        let s = &side.all;
        let note = format!(
            "p50 {:.1} µs, p90 {:.1} µs, p99 {:.1} µs",
            s.median() * 1e3,
            s.quantile(0.9) * 1e3,
            s.p99() * 1e3
        );
        rows.push(
            Row::new(
                SECTION,
                format!("{upstream} upstream: {}", side.name),
                "ms",
                s.clone(),
            )
            .note(note),
        );
    }
    let (direct, proxied) = (&sides[0], &sides[1]);
    let (d, p) = (direct.all.median(), proxied.all.median());
    let per_round: Vec<String> = direct
        .rounds
        .iter()
        .zip(&proxied.rounds)
        .map(|(d, p)| format!("{:+.0}", (p / d - 1.0) * 100.0))
        .collect();
    let ratio = p / d - 1.0;
    rows.push(
        Row::single(
            SECTION,
            format!("{upstream} upstream: proxy overhead at p50"),
            "µs",
            (p - d) * 1e3,
        )
        .target("within 10 % of direct at p50", ratio <= TARGET)
        .note(format!(
            "{:+.1} % at p50; per round {} %",
            ratio * 100.0,
            per_round.join("/")
        )),
    );
    if let Some(bare) = sides.get(2) {
        rows.push(
            Row::single(
                SECTION,
                format!("{upstream} upstream: proxy overhead minus one bare stdio round trip"),
                "µs",
                (p - d - bare.all.median()) * 1e3,
            )
            .note("proxy p50 - direct p50 - bare stdio p50"),
        );
    }
}

pub async fn run(mode: Mode, rows: &mut Vec<Row>) -> Res<()> {
    let hb = Heartbeat::default();
    let rc = mock::backoff(Duration::from_millis(500), 0.0);
    // Streamable HTTP: the supervisor and the proxy on one mock process.
    let mut http = MockProcess::try_start("http").await?;
    let config = mock::remote("direct", &http, rc.clone(), hb.clone());
    let (server, _registry, direct) = calls::supervised(config, "direct", "2025-11-25").await?;
    let url = http.url();
    let (proxied, proxy_child) = host(&["--name", "mock", "--url", &url]).await?;
    let mut sides = [
        Side::new("direct supervised call", direct),
        Side::new("via mcp-resilient proxy", proxied),
    ];
    measure(&mut sides, mode).await;
    rows_of("http", &sides, rows);
    mock::check_era(&http.try_methods().await?, false).map_err(|e| format!("http: {e}"))?;
    server.shutdown().await;
    drop(sides);
    drop(proxy_child);
    http.try_kill().await?;
    // stdio: a mock child each (the proxy's is its own upstream child), and a bare one.
    let config = mock::stdio("direct", rc, hb);
    let (server, _registry, direct) = calls::supervised(config, "direct", "2025-11-25").await?;
    let bin = mock::binary();
    let upstream = ["--name", "mock", "--stdio", "--", bin, "mock-server"];
    let (proxied, proxy_child) = host(&[&upstream[..], &["--transport", "stdio"]].concat()).await?;
    let (bare, bare_child) = calls::raw_child(&["mock-server", "--transport", "stdio"], &ERA_2025)
        .await
        .map(|(raw, child)| (Caller::Raw(raw), child))?;
    let mut sides = [
        Side::new("direct supervised call", direct),
        Side::new("via mcp-resilient proxy", proxied),
        Side::new("bare stdio round trip (rmcp client, mock child)", bare),
    ];
    measure(&mut sides, mode).await;
    rows_of("stdio", &sides, rows);
    server.shutdown().await;
    drop(sides);
    drop(proxy_child);
    drop(bare_child);
    Ok(())
}
