//! Reconnecting, decided: when to try again and how long to wait (the policy over the backoff
//! schedule and the outage budget), and who may recover (the retry guard). Pure decisions and
//! one atomic, testable without a runtime; the actor carries them out, and a generation's
//! watchers ask the guard before they report a death.

pub(crate) mod backoff;
pub(crate) mod origin;
pub(crate) mod policy;
pub(crate) mod retry_guard;
