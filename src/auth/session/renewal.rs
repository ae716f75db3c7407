//! The token a request carries, and a new one when the server refuses it: the current token
//! (refreshed shortly before it expires), a renewal after a 401, a step-up after a 403
//! `insufficient_scope`, and a new authorization when nothing else gives a token. Renewals are
//! serialised and look at the store first (invariant 2); step-ups are bounded (invariant 3).

use std::sync::{Arc, atomic::Ordering};

use oauth2::TokenResponse;
use rmcp::transport::auth::{AuthError, AuthorizationManager, WWWAuthenticateParams};

use super::{
    Authorizer, Denied, EXCHANGE_LIMIT, Method, OAuth, PROMPT_WAIT, STEP_UPS,
    refusal::{unanswered, unanswered_detail},
};
use crate::auth::{
    Grant,
    flow::{self, Ask, Bound},
    store,
};

impl Authorizer {
    /// The token to send now, if there is one. An OAuth token close to its expiry is refreshed
    /// first. `Ok(None)`: send without one (the server's 401 will say what it wants).
    pub(super) async fn token(&self) -> Result<Option<String>, Denied> {
        match &self.method {
            Method::Bearer { env } => match std::env::var(env) {
                Ok(token) if !token.is_empty() => Ok(Some(token)),
                _ => Err(self.deny(format!("the token variable `{env}` is not set"))),
            },
            Method::OAuth(oauth) => {
                let token = match self.manager(oauth, false).await? {
                    None => None,
                    // A stored token with more than rmcp's renewal margin left is what rmcp's
                    // `get_access_token` would return (it reads the same record): sent as it
                    // is, with no task for an exchange that will not happen.
                    Some(_)
                        if let Some(token) = self.fresh_for(oauth, None, Margin::Renewal).await =>
                    {
                        return Ok(Some(token));
                    }
                    // Refreshes (the token is about to expire): an HTTP exchange, bounded, on a
                    // task of its own (invariant 5).
                    Some(manager) => {
                        let early = async move { manager.get_access_token().await };
                        let unavailable = match self.detached(early).await {
                            Ok(Ok(token)) => return Ok(Some(token)),
                            Ok(Err(AuthError::AuthorizationRequired)) => None,
                            Ok(Err(e)) if unanswered(&e) => {
                                Some(self.unavailable(unanswered_detail("a refresh", &e)))
                            }
                            Err(timeout) => Some(timeout),
                            Ok(Err(e)) => {
                                return Err(self.deny(format!("could not refresh the token: {e}")));
                            }
                        };
                        match unavailable {
                            // The early refresh found the authorization server down: while the
                            // token has not expired it is still good, so send it.
                            Some(unavailable) => Some(
                                self.fresh_for(oauth, None, Margin::Second)
                                    .await
                                    .ok_or(unavailable)?,
                            ),
                            None => None,
                        }
                    }
                };
                if token.is_some() || oauth.config.grant != Grant::ClientCredentials {
                    return Ok(token);
                }
                // Client credentials need no person: get a token now rather than send the
                // request without one and wait for the 401. A stored one is sent only while it
                // has more than rmcp's renewal margin left: with a second left, a request
                // slowed on a busy machine reached the server after its token had expired.
                let _one_at_a_time = oauth.renewing.lock().await;
                if let Some(token) = self.fresh_for(oauth, None, Margin::Renewal).await {
                    return Ok(Some(token));
                }
                self.obtain(oauth, None, Vec::new()).await.map(Some)
            }
        }
    }

    /// The current manager, restored from the store on first use. `Ok(None)`: nothing stored.
    ///
    /// With `recheck` (a renewal), a cached manager is first checked against the store: when the
    /// store holds another client's tokens, it is built again. A request's token does not need
    /// that (rmcp reads the token from the store itself), so it skips the extra read.
    async fn manager(
        &self,
        oauth: &OAuth,
        recheck: bool,
    ) -> Result<Option<Arc<AuthorizationManager>>, Denied> {
        let mut slot = oauth.manager.lock().await;
        if let (Some((manager, _)), false) = (slot.as_ref(), recheck) {
            return Ok(Some(manager.clone()));
        }
        let stored = oauth.bound.record().await.ok().flatten();
        if let Some((manager, client_id)) = slot.as_ref() {
            match &stored {
                // A login since (maybe in another process) registered another client: its
                // refresh token is refused to the old one, so the manager is built again.
                Some(record) if record.credentials.client_id != *client_id => {
                    tracing::info!(server = %self.name, "stored authorization changed; using the new one");
                }
                _ => return Ok(Some(manager.clone())),
            }
        }
        let restored = flow::restore(&self.url, &oauth.config, &oauth.bound).await;
        match restored {
            Ok(Some(manager)) => {
                let manager = Arc::new(manager);
                let client_id = stored.map(|r| r.credentials.client_id).unwrap_or_default();
                *slot = Some((manager.clone(), client_id));
                Ok(Some(manager))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(self.deny(format!("stored authorization unusable: {e}"))),
        }
    }

    /// After a 401 to a request that carried `sent`: a token to send it again with.
    pub(super) async fn renew(
        &self,
        sent: Option<&str>,
        challenge: &str,
    ) -> Result<String, Denied> {
        let oauth = match &self.method {
            Method::Bearer { env } => {
                return Err(self.deny(format!("the server refused the token in `{env}`")));
            }
            Method::OAuth(oauth) => oauth,
        };
        let _one_at_a_time = oauth.renewing.lock().await;
        // Under the refresh lock: a refresh another task or process has under way is awaited
        // and its token used, rather than a second refresh made with a spent refresh token.
        let exclusive = oauth
            .bound
            .exclusive()
            .await
            .map_err(|e| self.deny(format!("token store: {e}")))?;
        if let Some(token) = self.fresh_for(oauth, sent, Margin::Second).await {
            return Ok(token);
        }
        let manager = self.manager(oauth, true).await?;
        let refreshed = match (manager, sent) {
            // The lock goes with the refresh (invariant 5); it is not held across a new
            // authorization, which may wait minutes for a person.
            (Some(manager), Some(_)) => Some(
                self.detached(async move {
                    let refreshed = Bound::holding(manager.refresh_token()).await;
                    drop(exclusive);
                    refreshed
                })
                .await?,
            ),
            _ => {
                drop(exclusive);
                None
            }
        };
        if let Some(refreshed) = refreshed {
            match refreshed {
                Ok(response) => return Ok(response.access_token().secret().to_owned()),
                Err(AuthError::TokenRefreshRejected(_)) => {
                    self.deny("the refresh token was rejected");
                }
                Err(AuthError::AuthorizationRequired) => {}
                Err(e) if unanswered(&e) => {
                    return Err(self.unavailable(unanswered_detail("a refresh", &e)));
                }
                Err(e) => return Err(self.deny(format!("refresh failed: {e}"))),
            }
        }
        self.obtain(oauth, Some(challenge), Vec::new()).await
    }

    /// After a 403 `insufficient_scope`: a token that also has the scopes `challenge` names.
    pub(super) async fn step_up(&self, challenge: &str) -> Result<String, Denied> {
        let oauth = match &self.method {
            Method::Bearer { env } => {
                return Err(self.deny(format!(
                    "the token in `{env}` lacks a scope the server asks for"
                )));
            }
            Method::OAuth(oauth) => oauth,
        };
        let _one_at_a_time = oauth.renewing.lock().await;
        if self.step_ups.fetch_add(1, Ordering::Relaxed) >= STEP_UPS {
            return Err(self.deny("the server keeps asking for more scopes; giving up"));
        }
        let params = WWWAuthenticateParams::parse(challenge, &self.url);
        let mut wanted: Vec<String> = params
            .scope
            .as_deref()
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        if let Some((manager, _)) = oauth.manager.lock().await.clone() {
            for granted in manager.get_current_scopes().await {
                if !wanted.contains(&granted) {
                    wanted.push(granted);
                }
            }
        }
        self.obtain(oauth, Some(challenge), wanted).await
    }

    /// The stored token, when it is not the one that was refused and has more than `margin`
    /// left before it expires.
    async fn fresh_for(&self, oauth: &OAuth, sent: Option<&str>, margin: Margin) -> Option<String> {
        let record = oauth.bound.record().await.ok()??;
        let token = record.credentials.token_response.as_ref()?;
        let value = token.access_token().secret();
        let margin = match margin {
            Margin::Second => 1,
            // rmcp's: min(30 s, half the lifetime), at least a second.
            Margin::Renewal => token
                .expires_in()
                .map_or(1, |lifetime| (lifetime.as_secs() / 2).clamp(1, 30)),
        };
        let fresh = record
            .expires_at()
            .is_none_or(|at| at > store::now_secs().saturating_add(margin));
        (sent != Some(value.as_str()) && fresh).then(|| value.clone())
    }

    /// Runs the configured grant (with the prompt, if any) and installs the new manager.
    async fn obtain(
        &self,
        oauth: &OAuth,
        challenge: Option<&str>,
        scopes: Vec<String>,
    ) -> Result<String, Denied> {
        let ask = Ask {
            url: &self.url,
            config: &oauth.config,
            bound: &oauth.bound,
            challenge,
            scopes,
        };
        let _busy = self.busy.enter();
        // The person's part is bounded by PROMPT_WAIT inside; discovery and the exchanges too.
        let obtained = flow::obtain(ask, oauth.config.prompt.as_deref(), PROMPT_WAIT);
        let obtained = tokio::time::timeout(PROMPT_WAIT + EXCHANGE_LIMIT, obtained)
            .await
            .unwrap_or_else(|_| {
                Err(AuthError::AuthorizationFailed(
                    "the authorization did not finish in time".to_owned(),
                ))
            });
        let manager = match obtained {
            Ok(manager) => manager,
            Err(AuthError::AuthorizationRequired) => {
                let last = self.last_denial.lock().ok().and_then(|l| l.clone());
                return Err(self.deny(
                    last.unwrap_or_else(|| "the server asks for an authorization".to_owned()),
                ));
            }
            Err(e) if unanswered(&e) => {
                return Err(self.unavailable(unanswered_detail("the authorization", &e)));
            }
            Err(e) => return Err(self.deny(format!("authorization failed: {e}"))),
        };
        let token = manager
            .get_access_token()
            .await
            .map_err(|e| self.deny(format!("no token after the authorization: {e}")))?;
        let client_id = oauth
            .bound
            .record()
            .await
            .ok()
            .flatten()
            .map(|r| r.credentials.client_id)
            .unwrap_or_default();
        *oauth.manager.lock().await = Some((Arc::new(manager), client_id));
        tracing::info!(server = %self.name, "authorized");
        Ok(token)
    }
}

/// How much life a stored token must have left to be sent.
#[derive(Debug, Clone, Copy)]
enum Margin {
    /// More than a second: a token refused or not renewable now is still good until it expires.
    Second,
    /// More than rmcp's renewal margin (min(30 s, half its lifetime)): a token that can be
    /// replaced at no one's cost (client credentials) is replaced before it gets close.
    Renewal,
}
