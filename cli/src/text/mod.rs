//! The command line's text helpers are the library's (`mcp_resilient::text`): redaction of URLs
//! in what it prints, did-you-mean, and durations as people write them.

pub(crate) use mcp_resilient::text::{closest, human_duration, redact, redact_url};
