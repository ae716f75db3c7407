//! The calls hosts have in flight on one upstream: what the upstream asks during a call
//! (elicitation, sampling) goes to the host that made it, on the stream of that call.
//!
//! # Invariants
//!
//! 1. A call is listed from before it is sent until its guard drops (answered, failed or
//!    abandoned), so a request the upstream sends while serving it finds it.
//! 2. A shared upstream's request goes to a host only when that host is the only one with calls
//!    in flight on it: never to a host that did not call.

use std::sync::{
    Arc, Mutex, PoisonError,
    atomic::{AtomicU64, Ordering},
};

use rmcp::model::RequestId;

use super::link::HostLink;

/// The calls in flight on one upstream.
#[derive(Debug, Default)]
pub(crate) struct Callers {
    calls: Mutex<Vec<InFlight>>,
    serial: AtomicU64,
}

#[derive(Debug)]
struct InFlight {
    serial: u64,
    host: Arc<HostLink>,
    /// The host's own request (its JSON-RPC id), whose stream the upstream's requests ride.
    request: RequestId,
}

/// Lists a call while it lives.
#[derive(Debug)]
pub(crate) struct CallGuard {
    callers: Arc<Callers>,
    serial: u64,
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        self.callers
            .lock()
            .retain(|call| call.serial != self.serial);
    }
}

impl Callers {
    /// Lists `host`'s call `request` until the guard drops.
    pub(crate) fn enter(self: &Arc<Self>, host: &Arc<HostLink>, request: RequestId) -> CallGuard {
        let serial = self.serial.fetch_add(1, Ordering::Relaxed);
        self.lock().push(InFlight {
            serial,
            host: host.clone(),
            request,
        });
        CallGuard {
            callers: self.clone(),
            serial,
        }
    }

    /// The one host with calls in flight, and its call when it has exactly one; `None` when no
    /// host or several do.
    pub(in crate::host) fn sole(&self) -> Option<(Arc<HostLink>, Option<RequestId>)> {
        let calls = self.lock();
        let first = calls.first()?;
        if calls
            .iter()
            .any(|call| !Arc::ptr_eq(&call.host, &first.host))
        {
            return None;
        }
        let request = (calls.len() == 1).then(|| first.request.clone());
        Some((first.host.clone(), request))
    }

    /// `host`'s call, when it has exactly one in flight here.
    pub(in crate::host) fn origin_of(&self, host: &Arc<HostLink>) -> Option<RequestId> {
        let calls = self.lock();
        let mut own = calls.iter().filter(|call| Arc::ptr_eq(&call.host, host));
        let first = own.next()?;
        own.next().is_none().then(|| first.request.clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<InFlight>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outbox::{NotificationBuffer, Outbox};

    fn host() -> Arc<HostLink> {
        Arc::new(HostLink::new(
            Outbox::new(NotificationBuffer::default()),
            "pipe",
        ))
    }

    #[test]
    fn a_request_goes_to_the_only_calling_host_and_nowhere_when_two_call() {
        let callers = Arc::new(Callers::default());
        let (a, b) = (host(), host());
        assert!(callers.sole().is_none(), "no caller, no host");
        let first = callers.enter(&a, RequestId::Number(7));
        let (sole, request) = callers.sole().expect("one host calls");
        assert!(Arc::ptr_eq(&sole, &a));
        assert_eq!(request, Some(RequestId::Number(7)));
        let second = callers.enter(&a, RequestId::Number(8));
        let (sole, request) = callers.sole().expect("still one host");
        assert!(Arc::ptr_eq(&sole, &a));
        assert_eq!(request, None, "two calls: which stream is not known");
        let other = callers.enter(&b, RequestId::Number(1));
        assert!(callers.sole().is_none(), "two hosts: nobody");
        assert_eq!(callers.origin_of(&b), Some(RequestId::Number(1)));
        drop((first, second));
        let (sole, _) = callers.sole().expect("b alone now");
        assert!(Arc::ptr_eq(&sole, &b));
        drop(other);
        assert!(callers.sole().is_none());
    }
}
