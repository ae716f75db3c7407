//! SIGHUP: `serve` reads its servers again (`--config`, or the command line's) and the gateway
//! takes them without a restart (`mcp_resilient_gateway::http::Reload`). A file that does not
//! load, or servers that do not make a gateway, change nothing: the gateway reports it (log,
//! metric, status page) and goes on.

use std::future::Future;

use mcp_resilient_gateway::http::Reload;

use super::args::ServeArgs;
use crate::output::with_causes;

/// Runs `serving` to its end; meanwhile each SIGHUP asks `reload` to take the servers `args`
/// name now. Where SIGHUP cannot be caught it keeps its default action.
pub(super) async fn alongside<T>(
    serving: impl Future<Output = T>,
    args: &ServeArgs,
    reload: Reload,
) -> T {
    tokio::select! {
        outcome = serving => outcome,
        () = hangups(args, reload) => unreachable!("hangups never ends"),
    }
}

async fn hangups(args: &ServeArgs, reload: Reload) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut hangup) = signal(SignalKind::hangup()) {
            while hangup.recv().await.is_some() {
                tracing::info!("SIGHUP received; reading the configuration again");
                reread(args, &reload).await;
            }
        } else {
            tracing::debug!("cannot catch SIGHUP; it ends the process");
        }
    }
    #[cfg(not(unix))]
    let _ = (args, reload);
    std::future::pending::<()>().await;
}

/// Reads the servers again and hands them over; says on stderr what happened.
async fn reread(args: &ServeArgs, reload: &Reload) {
    let said = match super::configs(args) {
        Ok(configs) => match reload.servers(configs).await {
            Ok(done) => format!(
                "configuration reloaded: {} added, {} removed, {} changed, {} unchanged",
                done.added.len(),
                done.removed.len(),
                done.changed.len(),
                done.unchanged.len()
            ),
            Err(error) => format!("configuration not reloaded: {}", with_causes(&error)),
        },
        Err(why) => {
            let error = reload.unreadable(why).await;
            format!("configuration not reloaded: {}", with_causes(&error))
        }
    };
    crate::safe::eprint("mcp-resilient serve", said);
}
