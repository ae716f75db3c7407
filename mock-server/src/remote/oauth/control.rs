//! The OAuth controls on the in-process [`Faults`] handle (also `/_mock/oauth/*`).

use super::options::OAuthStats;
use crate::remote::faults::Faults;

impl Faults {
    /// OAuth mode: every access token issued so far expires now (sessions stay open; their
    /// next request needs a new token). Returns how many were valid; 0 when OAuth mode is off.
    pub fn expire_access_tokens(&self) -> usize {
        self.state.oauth.as_ref().map_or(0, |a| a.expire_access())
    }

    /// OAuth mode: every refresh token is revoked; using one answers `invalid_grant`. Returns
    /// how many there were; 0 when OAuth mode is off.
    pub fn revoke_refresh_tokens(&self) -> usize {
        self.state.oauth.as_ref().map_or(0, |a| a.revoke_refresh())
    }

    /// OAuth mode: the authorization server's counters; `None` when OAuth mode is off.
    pub fn oauth_stats(&self) -> Option<OAuthStats> {
        self.state.oauth.as_ref().map(|a| a.stats())
    }
}
