//! What a hostile SSE server does, and when: its kind ([`SseHostility`]), its trigger
//! ([`Trigger`]) and the rest of its options ([`HostileSseOptions`]; binary: [`SseArgs`]).

use std::time::Duration;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::value_parser;

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
    /// The names of the kinds on the command line.
    pub(crate) const NAMES: [&'static str; 5] = [
        "invalid-utf8",
        "newline-flood",
        "endless-line",
        "malformed-json",
        "event-flood",
    ];

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

/// `--hostile-bytes N`, `--hostile-trigger list|call` and `--hostile-pace-ms N`: the options of
/// a `--transport sse --hostile KIND` server. Each left out keeps [`HostileSseOptions::new`]'s
/// default (but see `pace`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::Args)]
#[command(next_help_heading = "Hostile SSE (--transport sse --hostile KIND)")]
pub(crate) struct SseArgs {
    /// The size of a flood or an endless line.
    #[arg(id = "hostile_bytes", long = "hostile-bytes", value_name = "N")]
    pub(crate) bytes: Option<usize>,
    /// When a session turns hostile: after its first `tools/list` answer (`list`), or on a
    /// `tools/call` of `trigger` (`call`).
    #[arg(
        id = "hostile_trigger",
        long = "hostile-trigger",
        value_name = "WHEN",
        value_parser = PossibleValuesParser::new(["list", "call"]).map(|when| trigger(&when))
    )]
    pub(crate) trigger: Option<Trigger>,
    /// Milliseconds to wait before each chunk of a burst (`endless-line` drips one 8 KiB chunk
    /// per millisecond unless told otherwise, the others send at once).
    #[arg(
        id = "hostile_pace_ms",
        long = "hostile-pace-ms",
        value_name = "MS",
        value_parser = value_parser!(u64).map(Duration::from_millis)
    )]
    pub(crate) pace: Option<Duration>,
}

fn trigger(when: &str) -> Trigger {
    match when {
        "call" => Trigger::Manual,
        _ => Trigger::AfterList,
    }
}

impl SseArgs {
    /// Whether any of these flags was given.
    pub(crate) fn given(&self) -> bool {
        *self != Self::default()
    }

    /// The options of a server of `kind` on `port`.
    pub(crate) fn options(&self, kind: SseHostility, port: u16) -> HostileSseOptions {
        let mut opts = HostileSseOptions::new(kind);
        opts.port = port;
        if let Some(bytes) = self.bytes {
            opts.bytes = bytes;
        }
        if kind == SseHostility::EndlessLine {
            // A slow drip: every 8 KiB chunk reaches the client on its own.
            opts.pace = Duration::from_millis(1);
        }
        if let Some(pace) = self.pace {
            opts.pace = pace;
        }
        if let Some(trigger) = self.trigger {
            opts.trigger = trigger;
        }
        opts
    }
}
