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

    /// OAuth mode: the next `count` requests to `/token` (any grant) answer 503 with
    /// `temporarily_unavailable`, as an authorization server that is briefly down; 0 ends an
    /// outage early. Returns how many were still to fail; 0 when OAuth mode is off.
    pub fn fail_token_requests(&self, count: u64) -> u64 {
        self.state
            .oauth
            .as_ref()
            .map_or(0, |a| a.fail_token_requests(count))
    }

    /// OAuth mode: the authorization server's counters; `None` when OAuth mode is off.
    pub fn oauth_stats(&self) -> Option<OAuthStats> {
        self.state.oauth.as_ref().map(|a| a.stats())
    }
}
