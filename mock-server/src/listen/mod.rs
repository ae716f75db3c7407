//! `subscriptions/listen` (2026-07-28): the server's live subscriptions, how a tool-set change
//! or a resource update reaches them, and how `end_listens` ends them.
//!
//! rmcp acknowledges a subscription (`notifications/subscriptions/acknowledged`) *before* it
//! calls the handler's `listen`, so a change made between the two would find no sink to notify.
//! Every change and every end therefore gets a number (an *event*); the handler takes a mark
//! (the last event number) before the acknowledgment and, once its sink is registered, catches
//! up on whatever happened after the mark.
//!
//! # Invariants
//!
//! 1. A subscription acknowledged before a notifying tools change, or before an update of a
//!    resource its filter accepted, is notified of it: either the change finds its sink
//!    registered, or the registration finds the change newer than the mark and the subscription
//!    notifies itself (both may happen: a duplicate, never a loss).
//! 2. An `end_listens` after the acknowledgment ends the subscription, the same way.
//! 3. A sink is registered only while its `listen` runs (a `Registration` removes it).
//! 4. An abrupt end in remote modes ends no `listen` itself: it cuts the HTTP responses of the
//!    listen requests that arrived before it (each holds the abort token current at its
//!    arrival), which drops their streams; rmcp then cancels the `listen`, and nothing more is
//!    written. Elsewhere (stdio) an abrupt end answers the listen request with an error.

mod registry;
mod serve;

pub(crate) use registry::Listens;
pub(crate) use serve::{PendingMarks, serve};
