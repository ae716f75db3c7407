//! [`Mailbox`]: where the lean link puts the notifications of one 2026-07-28 subscription
//! ([`super::listen`]) until its handle reads them.
//!
//! # Invariants
//!
//! 1. Notifications come out in the order they were posted. At most [`CAPACITY`] wait (rmcp's
//!    default subscription buffer); one more marks the mailbox lagged, and what comes after is
//!    dropped: once drained, it says so.
//! 2. A post wakes the task that last found the mailbox empty, whichever task posts.

use std::{
    collections::VecDeque,
    sync::{Mutex, MutexGuard, PoisonError},
    task::Waker,
};

use rmcp::model::ServerNotification;

/// The most notifications one subscription holds unread (invariant 1).
pub(super) const CAPACITY: usize = 64;

/// Where the link puts one subscription's notifications (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Mailbox {
    mail: Mutex<Mail>,
}

#[derive(Debug, Default)]
struct Mail {
    queue: VecDeque<ServerNotification>,
    /// More came than [`CAPACITY`] (those past it were dropped).
    lagged: bool,
    /// The task reading the subscription (a notification may come in another task's poll).
    waker: Option<Waker>,
}

#[expect(clippy::large_enum_variant, reason = "one poll's value, never kept")]
pub(super) enum Taken {
    Notification(ServerNotification),
    Lagged,
    Nothing,
}
impl Mailbox {
    pub(super) fn post(&self, notification: ServerNotification) {
        let mut mail = self.lock();
        if mail.lagged {
            return;
        }
        match mail.queue.len() < CAPACITY {
            true => mail.queue.push_back(notification),
            false => {
                tracing::warn!("a listen stream's notifications were not read in time: lagged");
                mail.lagged = true;
            }
        }
        if let Some(waker) = mail.waker.take() {
            waker.wake();
        }
    }

    /// The next notification; lagged once the queue is drained; or nothing yet, and then
    /// `waker` is woken by the next post.
    pub(super) fn take(&self, waker: &Waker) -> Taken {
        let mut mail = self.lock();
        match mail.queue.pop_front() {
            Some(notification) => Taken::Notification(notification),
            None if mail.lagged => Taken::Lagged,
            None => {
                mail.waker = Some(waker.clone());
                Taken::Nothing
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, Mail> {
        self.mail.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use std::task::Waker;

    use rmcp::model::{ProgressNotification, ProgressNotificationParam, ProgressToken, RequestId};

    use super::*;

    fn numbered(n: i64) -> ServerNotification {
        let token = ProgressToken(RequestId::Number(n));
        ProgressNotification::new(ProgressNotificationParam::new(token, 0.0)).into()
    }

    fn number(taken: Taken) -> Option<i64> {
        match taken {
            Taken::Notification(ServerNotification::ProgressNotification(p)) => {
                match p.params.progress_token.0 {
                    RequestId::Number(n) => Some(n),
                    RequestId::String(_) => None,
                }
            }
            _ => None,
        }
    }

    #[test]
    fn notifications_come_out_in_order_and_one_past_the_bound_lags_the_mailbox_once_drained() {
        let mailbox = Mailbox::default();
        let waker = Waker::noop();
        assert!(matches!(mailbox.take(waker), Taken::Nothing));
        for n in 0..=CAPACITY as i64 {
            mailbox.post(numbered(n));
        }
        for n in 0..CAPACITY as i64 {
            assert_eq!(
                number(mailbox.take(waker)),
                Some(n),
                "in order, up to the bound"
            );
        }
        assert!(
            matches!(mailbox.take(waker), Taken::Lagged),
            "the one past it"
        );
        mailbox.post(numbered(99));
        assert!(
            matches!(mailbox.take(waker), Taken::Lagged),
            "and nothing after"
        );
    }
}
