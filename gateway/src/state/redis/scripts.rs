//! What the store says to Redis: one hash per host session, and the scripts that change it only
//! while this process owns it.
//!
//! A session's record is the hash `{prefix}host:{sha256 of the session id}` (the id itself never
//! reaches Redis: it is what lets a host in) with two fields: `owner`, the fencing value of the
//! replica that holds the session (`{replica}/{n}`, new at every claim), and `state`, the
//! [`HostState`](super::super::HostState) as JSON. The record expires `ttl` after the last write
//! or touch of its owner.
//!
//! # Invariants
//!
//! 1. Every change but the host's own end of the session (`DELETE`, which deletes the record
//!    whoever owns it) is a script that compares `owner` with the writer's fencing value first,
//!    so a replica whose session was claimed by another can no longer change it (its scripts
//!    answer [`Written::Fenced`]).
//! 2. A claim is a compare-and-swap of `owner` from the value read with the state to a fresh
//!    value: of two replicas claiming at once, one swaps and the other sees a value it did not
//!    read.

use redis::{Script, aio::ConnectionManager};
use sha2::{Digest, Sha256};

/// Writes the state if the record is this owner's or has none (new, expired, or Redis lost it).
const WRITE: &str = r"
local owner = redis.call('HGET', KEYS[1], 'owner')
if owner and owner ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'state', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
";

/// Refreshes the TTL of this owner's record; -1 when the record is gone (write it again).
const TOUCH: &str = r"
local owner = redis.call('HGET', KEYS[1], 'owner')
if not owner then return -1 end
if owner ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
";

/// Swaps `owner` from the value read (ARGV[1]) to this claim's (ARGV[2]).
const SWAP: &str = r"
local owner = redis.call('HGET', KEYS[1], 'owner')
if not owner or owner ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'owner', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
";

/// What a write, a touch or a delete found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Written {
    /// Done.
    Done,
    /// Another replica owns the session now.
    Fenced,
    /// The record is gone (expired, or Redis lost it): write the whole state again.
    Missing,
}

/// The scripts, loaded once per store (Redis keeps them by hash).
#[derive(Debug)]
pub(super) struct Scripts {
    write: Script,
    touch: Script,
    swap: Script,
    prefix: String,
}

impl Scripts {
    pub(super) fn new(prefix: &str) -> Self {
        Self {
            write: Script::new(WRITE),
            touch: Script::new(TOUCH),
            swap: Script::new(SWAP),
            prefix: prefix.to_owned(),
        }
    }

    /// The record's key for session `id`.
    pub(super) fn key(&self, id: &str) -> String {
        let digest = Sha256::digest(id.as_bytes());
        let mut key = format!("{}host:", self.prefix);
        for byte in digest {
            key.push_str(&format!("{byte:02x}"));
        }
        key
    }

    pub(super) async fn write(
        &self,
        conn: &mut ConnectionManager,
        id: &str,
        owner: &str,
        state: &str,
        ttl_ms: u64,
    ) -> redis::RedisResult<Written> {
        let done: i64 = self
            .write
            .key(self.key(id))
            .arg(owner)
            .arg(state)
            .arg(ttl_ms)
            .invoke_async(conn)
            .await?;
        Ok(if done == 1 {
            Written::Done
        } else {
            Written::Fenced
        })
    }

    pub(super) async fn touch(
        &self,
        conn: &mut ConnectionManager,
        id: &str,
        owner: &str,
        ttl_ms: u64,
    ) -> redis::RedisResult<Written> {
        let done: i64 = self
            .touch
            .key(self.key(id))
            .arg(owner)
            .arg(ttl_ms)
            .invoke_async(conn)
            .await?;
        Ok(match done {
            1 => Written::Done,
            0 => Written::Fenced,
            _ => Written::Missing,
        })
    }

    /// Deletes the record, whoever owns it: the host ended the session.
    pub(super) async fn forget(
        &self,
        conn: &mut ConnectionManager,
        id: &str,
    ) -> redis::RedisResult<Written> {
        let _: i64 = redis::cmd("DEL")
            .arg(self.key(id))
            .query_async(conn)
            .await?;
        Ok(Written::Done)
    }

    /// The record's owner and state, if there is one.
    pub(super) async fn read(
        &self,
        conn: &mut ConnectionManager,
        id: &str,
    ) -> redis::RedisResult<Option<(String, String)>> {
        let (owner, state): (Option<String>, Option<String>) = redis::cmd("HMGET")
            .arg(self.key(id))
            .arg("owner")
            .arg("state")
            .query_async(conn)
            .await?;
        Ok(owner.zip(state))
    }

    /// Swaps the owner from `seen` to `mine`; false if someone else changed it first.
    pub(super) async fn swap(
        &self,
        conn: &mut ConnectionManager,
        id: &str,
        seen: &str,
        mine: &str,
        ttl_ms: u64,
    ) -> redis::RedisResult<bool> {
        let done: i64 = self
            .swap
            .key(self.key(id))
            .arg(seen)
            .arg(mine)
            .arg(ttl_ms)
            .invoke_async(conn)
            .await?;
        Ok(done == 1)
    }
}
