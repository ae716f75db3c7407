//! The `flood` hostile kind: a stdio server that floods `notifications/message`.
//!
//! Each message is `{"flood": i, "pad": "xxx…"}` at level `info`, `i` counting from 0, the pad
//! `bytes` long. The messages go out one after the other, each as soon as the previous one has
//! been written (so the flood runs as fast as the client reads its stdout, and a client that
//! stops reading stops it). It ends after `count` messages or `limit`, whichever comes first;
//! then one `notifications/resources/list_changed` tells the client it is over, and stderr says
//! how many were sent (`flood ended: N messages`).

// Logging is deprecated by SEP-2577; the flood is made of the messages servers still send.
#![allow(deprecated)]

use std::time::Duration;

use clap::builder::TypedValueParser;
use clap::value_parser;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::{Peer, RoleServer};
use serde_json::json;
use tokio::time::Instant;

/// How big and how long a flood is; also its flags (`--flood-count`, `--flood-bytes`,
/// `--flood-ms`), whose defaults are [`FloodPlan::default`]'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::Args)]
#[command(next_help_heading = "Hostile flood (--hostile flood, stdio)")]
pub(crate) struct FloodPlan {
    /// Messages to send.
    #[arg(
        id = "flood_count",
        long = "flood-count",
        value_name = "N",
        default_value_t = 100_000
    )]
    pub(crate) count: u64,
    /// Bytes of each message's pad.
    #[arg(
        id = "flood_bytes",
        long = "flood-bytes",
        value_name = "N",
        default_value_t = 1024
    )]
    pub(crate) bytes: usize,
    /// Milliseconds after which the flood stops in any case.
    #[arg(
        id = "flood_ms",
        long = "flood-ms",
        value_name = "MS",
        default_value = "60000",
        value_parser = value_parser!(u64).map(Duration::from_millis)
    )]
    pub(crate) limit: Duration,
}

impl Default for FloodPlan {
    /// 100 000 messages of 1 KiB, at most 60 s.
    fn default() -> Self {
        Self {
            count: 100_000,
            bytes: 1024,
            limit: Duration::from_secs(60),
        }
    }
}

/// Floods `peer` as `plan` says; returns how many messages went out.
pub(crate) async fn run(peer: Peer<RoleServer>, plan: FloodPlan) -> u64 {
    let pad = "x".repeat(plan.bytes);
    let deadline = Instant::now() + plan.limit;
    let mut sent = 0;
    while sent < plan.count && Instant::now() < deadline {
        let data = json!({"flood": sent, "pad": pad});
        let message = LoggingMessageNotificationParam::new(LoggingLevel::Info, data);
        if peer.notify_logging_message(message).await.is_err() {
            break;
        }
        sent += 1;
    }
    let _ = peer.notify_resource_list_changed().await;
    eprintln!("mcp-mock-server: flood ended: {sent} messages");
    sent
}
