//! A claim's take-over: read the record, swap its owner to this process (see [`super::scripts`]).

use std::sync::atomic::Ordering;

use tokio::time::Instant;

use super::{Inner, table::Held};
use crate::state::{HostState, StoreUnavailable};

impl Inner {
    /// Reads the record of `key` and swaps its owner to a fresh value of this process's.
    pub(super) async fn take_over(&self, key: &str) -> Result<Option<HostState>, StoreUnavailable> {
        let mut conn = self.conn.clone();
        let failed = |e: redis::RedisError| {
            self.failed("claim");
            StoreUnavailable::new(format!("Redis: {e}"))
        };
        for _ in 0..3 {
            let read = self.scripts.read(&mut conn, key).await;
            let Some((seen, text)) = read.map_err(failed)? else {
                return Ok(None);
            };
            // A record this process cannot read is no session it can serve: the host starts
            // a new one.
            let Ok(state) = serde_json::from_str::<HostState>(&text) else {
                return Ok(None);
            };
            let mine = self.next_owner();
            let swapped = self
                .scripts
                .swap(&mut conn, key, &seen, &mine, self.ttl_ms())
                .await;
            if swapped.map_err(failed)? {
                let mut table = self.lock();
                table.held.insert(
                    key.to_owned(),
                    Held {
                        state: state.clone(),
                        owner: mine,
                        shared: true,
                        lost: false,
                        touched: Instant::now(),
                    },
                );
                self.claims.fetch_add(1, Ordering::Relaxed);
                return Ok(Some(state));
            }
        }
        Err(StoreUnavailable::new(
            "the session's owner changed under three claims in a row",
        ))
    }
}
