//! The crate-private parsers and classifiers that a server's or a user's bytes reach, for the
//! fuzz checks in `fuzz/checks/` (feature `fuzzing`; not a public API, no stability promise).
//!
//! This module only hands items out: the entry points that run a fuzzer's bytes through them,
//! and the properties they assert, live in `fuzz/checks/` (FUZZING.md). Each item re-exported
//! here is declared `pub` in its own module with `expect(unreachable_pub)` when this feature is
//! off (on the item, or on its module for `transport/http/errors.rs` and `answer.rs`), so
//! every other build sees it as crate-private, as before. The two functions stand in for
//! crate-private methods of public types.

use std::sync::Arc;

use rmcp::model::Tool;

pub use crate::config::json::{dotenv::parse_env_file, expand::Vars};
pub use crate::registry::publish::PublishError;
pub use crate::supervisor::session::connect::{
    era::{EraMemory, is_modern},
    handshake::Handshake,
};
// The Streamable HTTP transport's reading of its answers and errors.
pub use crate::transport::http::{
    HttpTransport,
    answer::{Answer, expire_on_400},
    errors::{HttpError, describe, initialize_status, never_ran, status_of, verdict},
};
pub use crate::transport::sse::{Parser, resolve_endpoint};
pub use crate::transport::{Activity, judge::judge, observed::Observed, stdio::StdioTransport};
pub use crate::verdict::{Phase, Verdict, parse_retry_after, plain};
use crate::{registry::ToolRegistry, state::Generation};

/// Records requests 0 to 9 as handed to `activity`'s transport, two each of `initialize`,
/// `tools/list`, `tools/call`, `ping` and `server/discover`: their answers are read typed
/// (`transport::decode`), everything else as rmcp reads it.
pub fn hand_typed_requests(activity: &Activity) {
    let methods = [
        "initialize",
        "tools/list",
        "tools/call",
        "ping",
        "server/discover",
    ];
    for (n, method) in (0..10).zip(methods.iter().cycle()) {
        activity
            .ledger
            .handed(&rmcp::model::RequestId::Number(n), method);
    }
}

/// Generation `n` (`Generation::new`); `None` for 0.
pub fn generation(n: u64) -> Option<Generation> {
    Generation::new(n)
}

/// `ToolRegistry::publish`: replaces `server`'s tools with `tools` as of `generation`.
pub fn publish(
    registry: &ToolRegistry,
    server: &Arc<str>,
    generation: Generation,
    tools: Vec<Tool>,
) -> Result<(), PublishError> {
    registry.publish(server, generation, tools).map(drop)
}
