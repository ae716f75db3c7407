//! Multi-round tool calls (2026-07-28, SEP-2322): a server that needs something from the host
//! first answers `input_required` with the requests (elicitation, sampling, roots) and an opaque
//! `requestState`. The host's handlers answer, and the call is sent again with `inputResponses`
//! and the exact `requestState`, within a bounded number of rounds and the call's deadline.

use std::{collections::BTreeMap, time::Duration};

use rmcp::model::{CallToolRequestParams, InputRequest, InputRequiredResult};
use tokio::time::Instant;

use super::CallPath;
use crate::{CallError, call::CallPhase, host::Ask};

/// Most `input_required` rounds one call may take.
const MAX_ROUNDS: u32 = 10;

/// The rounds of one call so far.
#[derive(Debug, Default)]
pub(super) struct Rounds {
    total: u32,
    /// Consecutive rounds that asked nothing and only carried state: each waits longer.
    state_only: u32,
}

impl CallPath {
    /// Answers one `input_required` round: fills `params` with the host's answers and the
    /// server's `requestState` for the next send.
    pub(super) async fn answer_input(
        &self,
        input: InputRequiredResult,
        params: &mut CallToolRequestParams,
        rounds: &mut Rounds,
        deadline: Instant,
        limit: Duration,
    ) -> Result<(), CallError> {
        rounds.total += 1;
        if rounds.total > MAX_ROUNDS {
            return Err(CallError::Protocol {
                detail: format!("the server asked for input more than {MAX_ROUNDS} times"),
            });
        }
        let requests = input.input_requests.unwrap_or_default();
        if requests.is_empty() && input.request_state.is_none() {
            return Err(CallError::Protocol {
                detail: "input_required without requests or state".to_owned(),
            });
        }
        if requests.is_empty() {
            // Only state: the server is working; do not spin.
            let pause = Duration::from_millis(100) * 2u32.saturating_pow(rounds.state_only);
            rounds.state_only += 1;
            tokio::time::sleep_until(
                (Instant::now() + pause.min(Duration::from_secs(2))).min(deadline),
            )
            .await;
        } else {
            rounds.state_only = 0;
        }
        let mut responses = BTreeMap::new();
        for (key, request) in requests {
            let answer = tokio::time::timeout_at(deadline, self.answer_one(request))
                .await
                .map_err(|_| CallError::Timeout {
                    server: self.server.to_string(),
                    phase: CallPhase::HostInput,
                    after: limit,
                })??;
            responses.insert(key, answer);
        }
        params.input_responses = (!responses.is_empty()).then_some(responses);
        params.request_state = input.request_state;
        Ok(())
    }

    async fn answer_one(&self, request: InputRequest) -> Result<serde_json::Value, CallError> {
        let asked = match &request {
            InputRequest::Elicitation(_) => Ask::Elicitation,
            InputRequest::CreateMessage(_) => Ask::Sampling,
            InputRequest::ListRoots(_) => Ask::Roots,
            _ => {
                return Err(CallError::Protocol {
                    detail: "the server asked for an input this client does not know".to_owned(),
                });
            }
        };
        if !self.handlers.can(asked) {
            return Err(CallError::InputRequired {
                server: self.server.to_string(),
                asked,
            });
        }
        let server = self.server.clone();
        #[allow(deprecated)] // sampling and roots: see `crate::host`
        let answer = match request {
            InputRequest::Elicitation(request) => self
                .handlers
                .elicit(server, request.params)
                .await
                .and_then(to_value),
            InputRequest::CreateMessage(request) => self
                .handlers
                .sample(server, request.params)
                .await
                .and_then(to_value),
            InputRequest::ListRoots(_) => self.handlers.roots(server).await.and_then(to_value),
            _ => unreachable!("matched above"),
        };
        answer.map_err(|e| CallError::Protocol {
            detail: format!("the host's {asked} handler failed: {}", e.message),
        })
    }
}

fn to_value<T: serde::Serialize>(answer: T) -> Result<serde_json::Value, rmcp::model::ErrorData> {
    serde_json::to_value(answer)
        .map_err(|e| rmcp::model::ErrorData::internal_error(e.to_string(), None))
}
