//! What each fuzz target in `fuzz/fuzz_targets/` runs, and the properties it asserts.
//!
//! Each function takes the bytes a fuzzer made, runs them through the code that a server's or a
//! user's bytes reach, and asserts what that code promises. A broken promise panics, which is
//! what a fuzzer reports; so does any panic inside the code under test, which is a bug whatever
//! the input. FUZZING.md says what each target covers and which parts are rmcp's.
//!
//! The library's crate-private parsers and classifiers come from its hidden module
//! `mcp_resilient::fuzzing` (feature `fuzzing`), which re-exports them and holds nothing else;
//! everything public comes by its public path.
//!
//! The functions are deterministic (no clock, no network, no process environment) so a crash
//! input replays the same way in `cargo test` (`regressions`), on stable.

mod config;
mod front;
mod http;
mod names;
mod sse;
mod stdio;

#[cfg(test)]
mod properties;
#[cfg(test)]
mod regressions;

pub use config::{config_text, dotenv, expansion};
pub use front::own_front;
pub use http::http_answer;
pub use names::public_name;
pub use sse::{sse, sse_endpoint, sse_stream};
pub use stdio::stdio_output;

/// The contract of `verdict::plain`, which every detail a person reads goes through: one line,
/// at most 200 bytes and an ellipsis.
fn assert_plain(text: &str) {
    assert!(!text.contains('\n'), "a detail spans lines: {text:?}");
    assert!(
        text.len() <= 200 + '…'.len_utf8(),
        "a detail is {} bytes long",
        text.len()
    );
}
