//! One session, built and held: a connection attempt (transport, handshake, era, the first
//! tool listing), and the running generation with its watchers (the monitor, the heartbeat, the
//! listen stream, resource subscriptions) and what it shares with callers ([`live::Live`]).
//!
//! A session only *reports* what it observes (a death, a list change) through the mailbox; the
//! actor decides what follows.

pub(crate) mod connect;
pub(crate) mod generation;
pub(crate) mod handler;
pub(crate) mod heartbeat;
pub(crate) mod link;
pub(crate) mod listen;
pub(crate) mod listing;
pub(crate) mod live;
pub(crate) mod origin;
pub(crate) mod origin_rest;
pub(crate) mod probe;
pub(crate) mod relay;
pub(crate) mod resting;
