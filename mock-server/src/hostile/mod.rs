//! Hostile mode: servers that answer, but answer badly — too much, too fast, malformed, or not
//! quite to the protocol — for the client's bounds on memory, CPU and time. Each kind completes
//! the handshake like a real server first (where the kind allows it), so what is measured is the
//! client's reaction to the bad bytes alone. Each kind lives in its own file and is switched on
//! through [`Faults`] (remote modes) or a flag of the binary (`--hostile KIND`,
//! `--discover-refusal SHAPE`).
//!
//! - [`discover`]: the ways a pre-2026 server refuses `server/discover`.
//! - [`sse`]: legacy HTTP+SSE (invalid UTF-8, a newline flood, an endless line, malformed
//!   JSON).
//!
//! [`Faults`]: crate::Faults

pub(crate) mod discover;
pub mod sse;
