//! The last minute of tool calls, per tool, for the gateway's status page: calls, errors and a
//! sample of latencies; and the count of calls answered "may have run".
//!
//! One log per process (the proxy and the gateway serve one set of hosts each per process).
//! Every front records; only the gateway's status page (feature `serve`) reads.
//!
//! # Invariants
//!
//! 1. Bounded whatever hosts and servers do: at most [`MAX_TOOLS`] tools (the rest are counted
//!    under [`OTHER`]), names within [`MAX_NAME`] bytes, per tool 60 one-second buckets and at
//!    most [`MAX_SAMPLES`] latencies.
//! 2. Recording takes one short lock and never waits on anything else.

#![cfg_attr(not(feature = "serve"), allow(dead_code))]

use std::{
    collections::{HashMap, VecDeque},
    sync::{
        Mutex, OnceLock, PoisonError,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use tokio::time::Instant;

/// The most tools tracked by name.
pub(crate) const MAX_TOOLS: usize = 256;
/// The longest tool name kept, in bytes.
pub(crate) const MAX_NAME: usize = 128;
/// The most latencies kept per tool (the newest).
pub(crate) const MAX_SAMPLES: usize = 1024;
/// Where calls of tools past [`MAX_TOOLS`] are counted.
pub(crate) const OTHER: &str = "(other tools)";
const MINUTE: u64 = 60;

/// One tool's last minute.
#[derive(Debug)]
struct Window {
    /// `(second, calls, errors)`, by second modulo 60.
    seconds: [(u64, u32, u32); MINUTE as usize],
    /// `(when, latency)`, oldest first.
    samples: VecDeque<(Instant, Duration)>,
}

/// What the status page shows of one tool.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolMinute {
    pub(crate) tool: String,
    pub(crate) calls: u64,
    pub(crate) errors: u64,
    pub(crate) p50: Option<Duration>,
    pub(crate) p95: Option<Duration>,
}

#[derive(Debug, Default)]
struct Log {
    tools: Mutex<HashMap<String, Window>>,
    may_have_run: AtomicU64,
}

fn log() -> &'static Log {
    static LOG: OnceLock<Log> = OnceLock::new();
    LOG.get_or_init(Log::default)
}

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// A call of `tool` ended after `took`, in error or not.
pub(crate) fn record(tool: &str, took: Duration, error: bool) {
    let now = Instant::now();
    let second = now.saturating_duration_since(epoch()).as_secs();
    let mut tools = log().tools.lock().unwrap_or_else(PoisonError::into_inner);
    let name = match tools.contains_key(tool) || tools.len() < MAX_TOOLS {
        true => bounded(tool, MAX_NAME),
        false => OTHER.to_owned(),
    };
    let window = tools.entry(name).or_insert_with(|| Window {
        seconds: [(0, 0, 0); MINUTE as usize],
        samples: VecDeque::new(),
    });
    let slot = &mut window.seconds[(second % MINUTE) as usize];
    if slot.0 != second {
        *slot = (second, 0, 0);
    }
    slot.1 = slot.1.saturating_add(1);
    slot.2 = slot.2.saturating_add(u32::from(error));
    if window.samples.len() >= MAX_SAMPLES {
        window.samples.pop_front();
    }
    window.samples.push_back((now, took));
}

/// A call was answered "may have run" (its generation died while it was in flight).
pub(crate) fn may_have_run() {
    log().may_have_run.fetch_add(1, Ordering::Relaxed);
}

/// Calls answered "may have run" since the process started.
pub(crate) fn may_have_run_count() -> u64 {
    log().may_have_run.load(Ordering::Relaxed)
}

/// Every tool called in the last minute, by name.
pub(crate) fn last_minute() -> Vec<ToolMinute> {
    let now = Instant::now();
    let second = now.saturating_duration_since(epoch()).as_secs();
    let tools = log().tools.lock().unwrap_or_else(PoisonError::into_inner);
    let mut minutes: Vec<ToolMinute> = tools
        .iter()
        .filter_map(|(tool, window)| {
            let recent = window
                .seconds
                .iter()
                .filter(|(at, _, _)| *at + MINUTE > second && *at <= second);
            let (calls, errors) = recent.fold((0u64, 0u64), |(c, e), (_, calls, errors)| {
                (c + u64::from(*calls), e + u64::from(*errors))
            });
            let mut latencies: Vec<Duration> = (window.samples.iter())
                .filter(|(at, _)| now.saturating_duration_since(*at).as_secs() < MINUTE)
                .map(|(_, took)| *took)
                .collect();
            latencies.sort_unstable();
            (calls > 0).then(|| ToolMinute {
                tool: tool.clone(),
                calls,
                errors,
                p50: quantile(&latencies, 50),
                p95: quantile(&latencies, 95),
            })
        })
        .collect();
    minutes.sort_by(|a, b| a.tool.cmp(&b.tool));
    minutes
}

/// `text` cut to at most `max` bytes on a character boundary, with `…` when cut.
pub(crate) fn bounded(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// The `percent`th percentile of sorted `values` (nearest rank).
fn quantile(values: &[Duration], percent: usize) -> Option<Duration> {
    if values.is_empty() {
        return None;
    }
    let rank = (values.len() * percent).div_ceil(100).max(1);
    values.get(rank - 1).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_tracks_at_most_its_bound_of_tools_and_names() {
        for i in 0..(MAX_TOOLS + 50) {
            record(
                &format!("bound-test-{i}-{}", "n".repeat(300)),
                Duration::ZERO,
                false,
            );
        }
        let tools = log().tools.lock().unwrap();
        assert!(tools.len() <= MAX_TOOLS + 1, "{}", tools.len());
        assert!(
            tools
                .keys()
                .all(|name| name.len() <= MAX_NAME + '…'.len_utf8())
        );
        assert!(tools.contains_key(OTHER));
        assert!(tools.values().all(|w| w.samples.len() <= MAX_SAMPLES));
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let values: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(quantile(&values, 50), Some(Duration::from_millis(50)));
        assert_eq!(quantile(&values, 95), Some(Duration::from_millis(95)));
        assert_eq!(quantile(&[], 95), None);
    }
}
