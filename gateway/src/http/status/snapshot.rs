//! The status page's facts as one JSON document (`/status.json`, each event of
//! `/status/events`, and what `/status` renders).

use std::{
    sync::atomic::Ordering,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use serde_json::{Value, json};

use mcp_resilient::ConnectionState;

use super::{Board, track};
use crate::calls;

fn millis(at: SystemTime) -> u64 {
    let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

/// The facts at `now` (invariants 2 and 3 of the module).
pub(super) fn take(board: &Board, now: SystemTime) -> Value {
    let sessions = board.hub.hosts.sessions();
    let tracked = board.tracked();
    let upstreams: Vec<Value> = (tracked.iter())
        .map(|(upstream, track)| upstream_facts(upstream, track, sessions, now))
        .collect();
    // The shared servers now listed (a server a reload removed takes its count with it).
    let replays: u64 = (tracked.iter())
        .map(|(upstream, _)| upstream.supervisor.replayed_calls())
        .sum();
    let (by_revision, listens) = board.hub.hosts.revisions();
    let by_token: serde_json::Map<String, Value> = (board.admission.per_token().into_iter())
        .map(|(key, n)| (calls::bounded(&board.gate.doors.label(&key), 64), n.into()))
        .collect();
    let tools: Vec<Value> = calls::last_minute()
        .into_iter()
        .map(|minute| {
            json!({
                "tool": minute.tool,
                "calls": minute.calls,
                "calls_per_s": minute.calls as f64 / 60.0,
                "error_rate": minute.errors as f64 / minute.calls.max(1) as f64,
                "p50_ms": minute.p50.map(|d| d.as_secs_f64() * 1e3),
                "p95_ms": minute.p95.map(|d| d.as_secs_f64() * 1e3),
            })
        })
        .collect();
    let store = &board.store;
    let reachable = match store.last_claim.load(Ordering::Relaxed) {
        1 => Value::Bool(true),
        2 => Value::Bool(false),
        _ => Value::Null,
    };
    json!({
        "at_ms": millis(now),
        "replica": board.replica,
        "front": board.front,
        "upstreams": upstreams,
        "sessions": {
            "total": sessions,
            "by_revision": (by_revision.into_iter().map(|(k, n)| (k, Value::from(n)))).collect::<serde_json::Map<_, _>>(),
            "listen_streams": listens,
            "by_token": by_token,
        },
        "tools": tools,
        "reloads": board.reload_facts(),
        "answers": {
            "may_have_run": calls::may_have_run_count(),
            "replays": replays,
        },
        "fleet": {
            "replica": board.replica,
            "records_held": board.host_store.len(),
            "records_shared": store.shared.load(Ordering::Relaxed),
            "takeovers": store.takeovers.load(Ordering::Relaxed),
            "claims_failed": store.claims_failed.load(Ordering::Relaxed),
            "store_answered_last_claim": reachable,
        },
    })
}

fn upstream_facts(
    upstream: &crate::upstream::Upstream,
    track: &track::Shared,
    sessions: usize,
    now: SystemTime,
) -> Value {
    let status = upstream.supervisor.status();
    let mut track = track::lock(track);
    track.prune(now);
    let up_for = track.ready_since.map(|since| since.elapsed().as_secs_f64());
    let attempt = match &status.state {
        ConnectionState::Connecting { attempt } | ConnectionState::Reconnecting { attempt, .. } => {
            Some(*attempt)
        }
        _ => None,
    };
    let next_in = (track.next_attempt)
        .map(|at| at.duration_since(now).unwrap_or(Duration::ZERO).as_millis() as u64);
    let death = track.last_death.as_ref().map(
        |death| json!({"cause": death.cause, "detail": death.detail, "at_ms": millis(death.at)}),
    );
    let timeline: Vec<Value> = (track.marks.iter())
        .map(|(at, mark)| {
            let kind = match mark {
                track::Mark::Died => "died",
                track::Mark::Ready => "ready",
            };
            json!({"at_ms": millis(*at), "kind": kind})
        })
        .collect();
    json!({
        "name": upstream.name(),
        "state": status.state.as_str(),
        "generation": status.generation.map(|g| g.get()),
        "protocol": status.protocol().map(|p| calls::bounded(p, 32)),
        "up_for_s": up_for,
        "last_death": death,
        // Milliseconds to the hundredth.
        "probe_rtt_ms": (upstream.supervisor.probe_round_trip())
            .map(|d| (d.as_secs_f64() * 1e5).round() / 100.0),
        "attempt": attempt,
        "next_attempt_in_ms": next_in,
        "host_sessions": sessions,
        "timeline": timeline,
    })
}
