//! What the parser hands out: a dispatched event, or why the stream can no longer be read.

/// A dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
pub struct Event {
    /// The event type (`message` when the event named none).
    pub event: String,
    pub data: String,
}

/// Why the stream can no longer be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[cfg_attr(not(feature = "fuzzing"), expect(unreachable_pub))]
pub enum SseError {
    #[error(
        "an SSE line exceeded limits.max_sse_line_bytes ({limit} bytes) at stream offset {offset} \
         ({seen} bytes without a line end so far)"
    )]
    LineTooLong {
        limit: usize,
        seen: usize,
        offset: u64,
    },
    #[error(
        "an SSE event exceeded limits.max_sse_event_bytes ({limit} bytes) at stream offset {offset} \
         ({seen} bytes since its start so far)"
    )]
    EventTooLarge {
        limit: usize,
        seen: usize,
        offset: u64,
    },
    #[error("invalid UTF-8 at stream offset {offset}")]
    InvalidUtf8 { offset: u64 },
}
