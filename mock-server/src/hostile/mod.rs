//! Hostile mode: servers that answer, but answer badly (too much, too fast, malformed), for
//! the client's bounds on memory, CPU and time. Each kind completes the handshake like a real
//! server first, so what is measured is the client's reaction to the bad bytes alone.
//!
//! - [`sse`]: legacy HTTP+SSE (invalid UTF-8, a newline flood, an endless line, malformed
//!   JSON).

pub mod sse;
