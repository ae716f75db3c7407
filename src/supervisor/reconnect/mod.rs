//! Reconnecting, decided and paced: when to try again and how long to wait (the policy over the
//! backoff schedule and the outage budget), who may recover (the retry guard), and when a down
//! server's origin listens again and may take another attempt (`origin`: a watch by TCP
//! connects, and a per-origin attempt budget). The policy and the guard are pure decisions and
//! one atomic, testable without a runtime; the actor carries them out, and a generation's
//! watchers ask the guard before they report a death.

pub(crate) mod backoff;
pub(crate) mod origin;
pub(crate) mod policy;
pub(crate) mod retry_guard;
