//! The `confirm` tool (`{"question": string}`): a call that needs the user's answer before it
//! can finish, in both protocol eras.
//!
//! - A 2026-07-28 request is answered `input_required`: one elicitation input request under the
//!   key [`INPUT_KEY`] (a form with a boolean `confirmed`, default `true`, and a string `note`,
//!   default `"ok"`) and a `requestState` holding a one-time nonce and the question. The client
//!   retries the same call with `inputResponses` and the echoed `requestState`.
//! - On an initialize-era session the tool asks through a real `elicitation/create` request to
//!   the client and waits for its answer.
//!
//! Either way the reply is `confirmed: <true|false> (<note>)`. A client that declared no
//! elicitation capability gets a tool error (`isError`) saying so; one that declines or cancels
//! gets a tool error naming its choice.
//!
//! With `"withdraw": true` the question is taken back instead ([`crate::withdraw`]).
//!
//! # Invariants
//!
//! 1. A `requestState` is redeemed at most once: the first round issues its nonce, the retry
//!    takes it. A retry whose state is missing, unknown, already used, malformed or for another
//!    question is answered with a JSON-RPC invalid-params error.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

use rmcp::model::{
    CallToolResponse, CallToolResult, ClientResult, ContentBlock, ElicitRequest,
    ElicitRequestParams, ElicitResult, ElicitationAction, InputRequest, InputRequests,
    InputRequiredResult, InputResponses, ServerRequest,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::random::random_hex;

/// The key of the one input request of a 2026-07-28 round.
pub(crate) const INPUT_KEY: &str = "confirm";

/// The arguments of `confirm`.
#[derive(Deserialize)]
pub(crate) struct Confirm {
    pub(crate) question: String,
    /// Take the question back once the counter is bumped ([`crate::withdraw`]).
    #[serde(default)]
    pub(crate) withdraw: bool,
}

/// What a retry's call carries besides the arguments.
pub(crate) struct Retry {
    pub(crate) input_responses: Option<InputResponses>,
    pub(crate) request_state: Option<String>,
}

/// The `requestState` of a round, as JSON text (opaque to the client).
#[derive(Serialize, Deserialize)]
struct RequestState {
    nonce: String,
    question: String,
}

/// Nonces issued and not yet redeemed; changed only by [`Nonces::issue`] and
/// [`Nonces::redeem`].
#[derive(Default)]
pub(crate) struct Nonces(Mutex<HashSet<String>>);

impl Nonces {
    fn issue(&self, question: &str) -> String {
        let nonce = random_hex(16);
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(nonce.clone());
        let state = RequestState {
            nonce,
            question: question.to_owned(),
        };
        json!(state).to_string()
    }

    /// Takes the nonce of `state` if it was issued for `question` and not redeemed yet.
    fn redeem(&self, state: &str, question: &str) -> Result<(), ErrorData> {
        let invalid = |why: &str| ErrorData::invalid_params(format!("confirm: {why}"), None);
        let state: RequestState =
            serde_json::from_str(state).map_err(|_| invalid("malformed requestState"))?;
        if state.question != question {
            return Err(invalid("requestState is for another question"));
        }
        let mut nonces = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match nonces.remove(&state.nonce) {
            true => Ok(()),
            false => Err(invalid("unknown or already used requestState")),
        }
    }
}

/// The user's answer inside an accepted `ElicitResult`; absent fields take the schema defaults.
#[derive(Deserialize)]
struct Answer {
    #[serde(default = "yes")]
    confirmed: bool,
    #[serde(default = "ok")]
    note: String,
}

fn yes() -> bool {
    true
}

fn ok() -> String {
    "ok".to_owned()
}

pub(crate) fn tool_error(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// The form both eras send.
pub(crate) fn form(question: &str) -> Result<ElicitRequestParams, ErrorData> {
    let params = json!({
        "mode": "form",
        "message": question,
        "requestedSchema": {
            "type": "object",
            "properties": {
                "confirmed": {"type": "boolean", "default": true},
                "note": {"type": "string", "default": "ok"}
            }
        }
    });
    serde_json::from_value(params)
        .map_err(|error| ErrorData::internal_error(format!("confirm form: {error}"), None))
}

/// The tool's reply to the client's answer.
fn reply(answer: ElicitResult) -> Result<CallToolResult, ErrorData> {
    if answer.action != ElicitationAction::Accept {
        let choice = serde_json::to_value(&answer.action).unwrap_or_default();
        let choice = choice.as_str().unwrap_or("no answer").to_owned();
        return Ok(tool_error(format!(
            "not confirmed: the user chose {choice}"
        )));
    }
    let content = answer.content.unwrap_or_else(|| json!({}));
    let Answer { confirmed, note } = serde_json::from_value(content).map_err(|error| {
        ErrorData::invalid_params(format!("confirm: bad answer: {error}"), None)
    })?;
    Ok(CallToolResult::success(vec![ContentBlock::text(format!(
        "confirmed: {confirmed} ({note})"
    ))]))
}

/// Runs `confirm` for one call.
pub(crate) async fn run(
    nonces: &Nonces,
    Confirm { question, .. }: Confirm,
    retry: Retry,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let elicits = context
        .client_capabilities()
        .is_some_and(|caps| caps.elicitation.is_some());
    if !elicits {
        let message = "confirm needs a client that declares the elicitation capability";
        return Ok(tool_error(message.to_owned()).into());
    }
    match crate::era::is_modern(&context) {
        true => input_round(nonces, &question, retry),
        false => ask_peer(&question, context).await.map(Into::into),
    }
}

/// 2026-07-28: the first round asks for input, the retry redeems its state and replies.
fn input_round(
    nonces: &Nonces,
    question: &str,
    Retry {
        input_responses,
        request_state,
    }: Retry,
) -> Result<CallToolResponse, ErrorData> {
    let invalid = |why: &str| ErrorData::invalid_params(format!("confirm: {why}"), None);
    if input_responses.is_none() && request_state.is_none() {
        let request = InputRequest::Elicitation(ElicitRequest::new(form(question)?));
        let requests = InputRequests::from([(INPUT_KEY.to_owned(), request)]);
        let state = nonces.issue(question);
        return Ok(InputRequiredResult::new(Some(requests), Some(state)).into());
    }
    let state = request_state.ok_or_else(|| invalid("retry without requestState"))?;
    nonces.redeem(&state, question)?;
    let mut responses = input_responses.ok_or_else(|| invalid("retry without inputResponses"))?;
    let answer = responses
        .remove(INPUT_KEY)
        .ok_or_else(|| invalid("no input response under \"confirm\""))?;
    let answer: ElicitResult = serde_json::from_value(answer)
        .map_err(|error| invalid(&format!("bad input response: {error}")))?;
    reply(answer).map(Into::into)
}

/// Initialize era: a real `elicitation/create` request to the client.
async fn ask_peer(
    question: &str,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResult, ErrorData> {
    let request = ServerRequest::ElicitRequest(ElicitRequest::new(form(question)?));
    let answer = tokio::select! {
        answer = context.peer.send_request(request) => answer,
        () = context.ct.cancelled() => {
            return Err(ErrorData::internal_error("confirm cancelled", None));
        }
    };
    match answer {
        Ok(ClientResult::ElicitResult(answer)) => reply(answer),
        Ok(_) => Ok(tool_error(
            "confirm: the client answered elicitation/create with another result".into(),
        )),
        Err(error) => Ok(tool_error(format!("confirm: elicitation failed: {error}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_state_is_redeemed_once_and_only_for_its_question() {
        let nonces = Nonces::default();
        let state = nonces.issue("sure?");
        assert!(nonces.redeem(&state, "other?").is_err());
        assert!(nonces.redeem("not json", "sure?").is_err());
        assert!(nonces.redeem(&state, "sure?").is_ok());
        assert!(nonces.redeem(&state, "sure?").is_err(), "used twice");
    }

    #[test]
    fn the_form_has_the_defaults_and_answers_become_the_reply() {
        let form = serde_json::to_value(form("sure?").expect("valid form")).expect("serializes");
        let properties = &form["requestedSchema"]["properties"];
        assert_eq!(properties["confirmed"]["default"], json!(true));
        assert_eq!(properties["note"]["default"], json!("ok"));
        let accepted = ElicitResult::new(ElicitationAction::Accept)
            .with_content(json!({"confirmed": false, "note": "no way"}));
        let text = serde_json::to_value(reply(accepted).expect("reply").content).expect("json");
        assert_eq!(text[0]["text"], json!("confirmed: false (no way)"));
        let declined = reply(ElicitResult::new(ElicitationAction::Decline)).expect("reply");
        assert_eq!(declined.is_error, Some(true));
    }
}
