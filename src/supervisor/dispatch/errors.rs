//! The errors a call path makes itself, each built in one place.

use super::CallPath;
use crate::{CallError, state::ConnectionState, supervisor::session::live::Live};

impl CallPath {
    /// The call finds no generation to go to: the server is in `state`, never `ready`.
    pub(super) fn unavailable(&self, state: ConnectionState) -> CallError {
        debug_assert!(!state.is_ready());
        CallError::Unavailable {
            server: self.server.to_string(),
            state,
        }
    }

    /// The call's generation was lost with it; `may_have_run` unless it provably never left.
    pub(super) fn lost(
        &self,
        live: &Live,
        detail: impl Into<String>,
        may_have_run: bool,
    ) -> CallError {
        CallError::ConnectionLost {
            may_have_run,
            server: self.server.to_string(),
            generation: live.generation,
            detail: detail.into(),
        }
    }

    /// The call was not sent: no token could be had (see [`crate::verdict::Verdict::AuthUnavailable`]).
    pub(super) fn auth_unavailable(&self, detail: String) -> CallError {
        CallError::AuthUnavailable {
            server: self.server.to_string(),
            detail,
        }
    }

    /// The server refused the call for good (401, 403, or a refusal it will repeat).
    pub(super) fn rejected(&self, status: Option<u16>, detail: String) -> CallError {
        CallError::Rejected {
            server: self.server.to_string(),
            status,
            detail,
        }
    }
}
