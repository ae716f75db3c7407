//! The resilience benchmark: call overhead, detection, recovery, idle cost and a reconnect storm
//! against the mock server on 127.0.0.1, side by side with a raw rmcp client where one exists.
//!
//! ```sh
//! cargo bench --bench resilience -- --quick     # under 2 minutes on 2 cores
//! cargo bench --bench resilience                # full mode: more repetitions, longer windows
//! cargo bench --bench resilience -- --only calls,faults,idle,storm,verdicts,era,proxy,auth,hostile,scale,serve
//! ```
//!
//! Sections 1-6 speak protocol 2025-11-25 (legacy SSE: 2024-11-05); `era` (section 8) measures
//! calls, detection and recovery at 2026-07-28; `proxy` (section 9) the per-call cost of the
//! `mcp-resilient proxy` binary over a direct supervised call; `auth` (section 10) what OAuth
//! costs a call and how fast token renewals and refusals are handled; `hostile` (section 11) the
//! client CPU that a hostile legacy SSE server's bytes cost (floods, an endless line); `serve`
//! (section 22) the memory per idle host session of `mcp-resilient serve` and the latency it
//! adds for many hosts.
//!
//! Prints a Markdown table and writes the same figures to `target/bench/results.json`. Every
//! measured call is checked (no error, no `isError`, the echo came back); every recovery is
//! checked to be a new generation (and after a kill a new process); failed repetitions are
//! counted in the `failed` column, never dropped.

// The workspace denies `unreachable_pub` for the library's sake; in this binary `pub` is how
// the sections reach the shared helpers, and nothing is an API.
#![allow(unreachable_pub)]

#[path = "resilience/auth.rs"]
mod auth;
#[path = "resilience/calls.rs"]
mod calls;
#[path = "resilience/era.rs"]
mod era;
#[path = "resilience/faults.rs"]
mod faults;
#[path = "resilience/hostile.rs"]
mod hostile;
#[path = "resilience/idle.rs"]
mod idle;
#[path = "resilience/mock.rs"]
mod mock;
#[path = "resilience/proxy.rs"]
mod proxy;
#[path = "resilience/scale.rs"]
mod scale;
#[path = "resilience/serve.rs"]
mod serve;
#[path = "resilience/stats.rs"]
mod stats;
#[path = "resilience/storm.rs"]
mod storm;
#[path = "resilience/verdicts.rs"]
mod verdicts;
// The mock as a child process, shared with the integration tests.
#[path = "../tests/support/mod.rs"]
mod support;

use std::{path::PathBuf, time::Instant};

use serde_json::json;
use stats::{Row, Samples};

/// How hard to measure.
#[derive(Debug, Clone, Copy)]
pub struct Mode {
    /// `--quick`: fewer repetitions and shorter windows.
    pub quick: bool,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    if let Some(at) = args.iter().position(|a| a == "--scale-child") {
        if let Err(e) = runtime.block_on(scale::child(&args[at + 1..])) {
            eprintln!("scale child: {e}");
            std::process::exit(1);
        }
        // As the idle child: no orderly shutdown of thousands of supervisors.
        std::process::exit(0);
    }
    if let Some(at) = args.iter().position(|a| a == "--idle-child") {
        if let Err(e) = runtime.block_on(idle::child(&args[at + 1..])) {
            eprintln!("idle child: {e}");
            std::process::exit(1);
        }
        // Skip the orderly shutdown of many supervisors: the parent only needs the figures.
        std::process::exit(0);
    }
    let mode = Mode {
        quick: args.iter().any(|a| a == "--quick"),
    };
    let only: Option<Vec<String>> = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .map(|s| s.split(',').map(str::to_owned).collect());
    let wanted = |part: &str| only.as_ref().is_none_or(|o| o.iter().any(|p| p == part));
    let started = Instant::now();
    let mut rows: Vec<Row> = Vec::new();
    runtime.block_on(async {
        for (part, section) in [
            "calls", "faults", "idle", "storm", "verdicts", "era", "proxy", "auth", "hostile",
            "scale", "serve",
        ]
        .iter()
        .zip([
            "1. call overhead",
            "2./3. detection and recovery",
            "4. idle cost",
            "5. reconnect storm",
            "6. fault model",
            "8. protocol 2026-07-28",
            "9. proxy overhead per call",
            "10. authorization",
            "11. hostile input",
            "13. scale",
            "22. serve",
        ]) {
            if !wanted(part) {
                continue;
            }
            let t = Instant::now();
            eprintln!("resilience: {section} ...");
            let result = match *part {
                "calls" => calls::run(mode, &mut rows).await,
                "faults" => faults::run(mode, &mut rows).await,
                "idle" => idle::run(mode, &mut rows).await,
                "storm" => storm::run(mode, &mut rows).await,
                "verdicts" => verdicts::run(mode, &mut rows).await,
                "era" => era::run(mode, &mut rows).await,
                "auth" => auth::run(mode, &mut rows).await,
                "hostile" => hostile::run(mode, &mut rows).await,
                "scale" => scale::run(mode, &mut rows).await,
                "serve" => serve::run(mode, &mut rows).await,
                _ => proxy::run(mode, &mut rows).await,
            };
            if let Err(e) = result {
                let mut s = Samples::default();
                s.fail(e.clone());
                eprintln!("resilience: {section} aborted: {e}");
                rows.push(Row::new("aborted", format!("{section} aborted"), "-", s));
            }
            eprintln!(
                "resilience: {section} done in {:.1} s",
                t.elapsed().as_secs_f64()
            );
        }
    });
    let table = stats::table(&rows);
    println!("{table}");
    let meta = json!({
        "mode": if mode.quick { "quick" } else { "full" },
        "elapsed_s": started.elapsed().as_secs_f64(),
        "machine": machine(),
        "unix_time": mock::now_us() / 1_000_000,
        // Evidence for the idle-memory analysis: each supervisor preallocates a 1024-slot
        // event broadcast channel.
        "size_of_event_bytes": std::mem::size_of::<mcp_resilient::state::Event>(),
    });
    let path = target_dir().join("bench").join("results.json");
    let written = std::fs::create_dir_all(path.parent().unwrap_or(&path)).and_then(|()| {
        std::fs::write(
            &path,
            serde_json::to_string_pretty(&stats::to_json(&rows, meta)).unwrap_or_default(),
        )
    });
    match written {
        Ok(()) => eprintln!(
            "resilience: wrote {} ({:.1} s)",
            path.display(),
            started.elapsed().as_secs_f64()
        ),
        Err(e) => eprintln!("resilience: could not write {}: {e}", path.display()),
    }
    // Skip the runtime's orderly shutdown; every child process was killed on drop.
    std::process::exit(0);
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"))
}

fn machine() -> serde_json::Value {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let model = read("/proc/cpuinfo")
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .map(|v| v.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_default();
    let nofile = read("/proc/self/limits")
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .map(|l| {
            l.split_whitespace()
                .skip(3)
                .take(2)
                .collect::<Vec<_>>()
                .join("/")
        })
        .unwrap_or_default();
    json!({
        "cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "cpu_model": model,
        "kernel": read("/proc/sys/kernel/osrelease").trim(),
        "nofile_soft_hard": nofile,
    })
}
