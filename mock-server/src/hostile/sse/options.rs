//! What a hostile SSE server does, and when: its kind ([`SseHostility`]), its trigger
//! ([`Trigger`]) and the rest of its options ([`HostileSseOptions`]).

use std::time::Duration;

/// What a triggered session's stream carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SseHostility {
    /// One `message` event whose data holds a `0xFF` byte (never valid UTF-8); the session then
    /// goes on answering as before.
    InvalidUtf8,
    /// [`HostileSseOptions::bytes`] bare `\n` (blank lines: legal, and no event), then the
    /// stream ends.
    NewlineFlood,
    /// `data: ` and then [`HostileSseOptions::bytes`] of `x`, with no line end; then the
    /// stream ends.
    EndlessLine,
    /// One `message` event whose data is not JSON; the session then goes on as before.
    MalformedJson,
    /// [`HostileSseOptions::bytes`] of 64-byte `noise` events (legal, and not `message`: a
    /// client parses and drops them), then the stream ends. The baseline for the floods.
    EventFlood,
}

impl SseHostility {
    /// The kind named `name` on the command line (`invalid-utf8`, `newline-flood`,
    /// `endless-line`, `malformed-json`, `event-flood`).
    pub fn from_name(name: &str) -> Option<SseHostility> {
        Some(match name {
            "invalid-utf8" => SseHostility::InvalidUtf8,
            "newline-flood" => SseHostility::NewlineFlood,
            "endless-line" => SseHostility::EndlessLine,
            "malformed-json" => SseHostility::MalformedJson,
            "event-flood" => SseHostility::EventFlood,
            _ => return None,
        })
    }
}

/// When a session's stream turns hostile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// Right after the session's first `tools/list` answer.
    AfterList,
    /// On [`HostileSseServer::trigger`](super::HostileSseServer::trigger) (every open
    /// session), or after the answer to a `tools/call` of `trigger` (that session).
    Manual,
}

/// How to start a [`HostileSseServer`](super::HostileSseServer).
#[derive(Debug, Clone)]
pub struct HostileSseOptions {
    /// What the stream carries once triggered.
    pub kind: SseHostility,
    /// Port on 127.0.0.1; 0 picks a free one.
    ///
    /// # Default
    /// 0.
    pub port: u16,
    /// Size of a flood or an endless line (at most `usize::MAX`; the burst stops after it).
    ///
    /// # Default
    /// 64 MiB.
    pub bytes: usize,
    /// A burst is written in chunks of this size (at least 1).
    ///
    /// # Default
    /// 8 KiB.
    pub chunk: usize,
    /// How long the stream waits before each chunk of a burst (a slow drip); zero sends as
    /// fast as the connection takes them.
    ///
    /// # Default
    /// Zero.
    pub pace: Duration,
    /// # Default
    /// [`Trigger::AfterList`].
    pub trigger: Trigger,
}

impl HostileSseOptions {
    /// The defaults for `kind`.
    pub fn new(kind: SseHostility) -> Self {
        HostileSseOptions {
            kind,
            port: 0,
            bytes: 64 << 20,
            chunk: 8 << 10,
            pace: Duration::ZERO,
            trigger: Trigger::AfterList,
        }
    }
}
