//! `confirm` with `"withdraw": true`: the server takes back a question it asked (a test of the
//! client's side of `notifications/cancelled`). On an initialize-era session that declared
//! elicitation it sends `elicitation/create`, waits until `mock://counter` is next bumped (the
//! `bump` tool, or `Faults::bump_counter`: the test says when the client is busy with the
//! question), sends `notifications/cancelled` for it, pings the client once (a round trip for a
//! stray answer to reach the request log), and replies `withdrawn <id>`. rmcp drops an answer to
//! a cancelled request, so only the request log (`Faults::requests`) shows whether the client
//! answered it anyway. Any other session gets a tool error.

use rmcp::model::{
    CallToolResult, CancelledNotification, CancelledNotificationParam, ContentBlock, ElicitRequest,
    PingRequest, ServerNotification, ServerRequest,
};
use rmcp::service::{PeerRequestOptions, RequestContext, ServiceError};
use rmcp::{ErrorData, RoleServer};

use crate::confirm::{Confirm, form, tool_error};
use crate::shared::Shared;

/// Runs `confirm` with `withdraw` for one call (see the module docs).
pub(crate) async fn run(
    shared: &Shared,
    Confirm { question, .. }: Confirm,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResult, ErrorData> {
    let elicits = context
        .client_capabilities()
        .is_some_and(|caps| caps.elicitation.is_some());
    if !elicits || crate::era::is_modern(&context) {
        let message = "withdraw needs an initialize-era client that declares elicitation";
        return Ok(tool_error(message.to_owned()));
    }
    let failed = |error: ServiceError| ErrorData::internal_error(format!("confirm: {error}"), None);
    let mark = shared.counter();
    let request = ServerRequest::ElicitRequest(ElicitRequest::new(form(&question)?));
    let options = PeerRequestOptions::no_options();
    let asked = (context
        .peer
        .send_cancellable_request(request, options)
        .await)
        .map_err(failed)?;
    tokio::select! {
        () = shared.counter_above(mark) => {}
        () = context.ct.cancelled() => {
            return Err(ErrorData::internal_error("confirm cancelled", None));
        }
    }
    let params = CancelledNotificationParam::new(Some(asked.id.clone()), Some("withdrawn".into()));
    let cancelled = ServerNotification::CancelledNotification(CancelledNotification::new(params));
    context
        .peer
        .send_notification(cancelled)
        .await
        .map_err(failed)?;
    let ping = ServerRequest::PingRequest(PingRequest::default());
    tokio::select! {
        pinged = context.peer.send_request(ping) => { pinged.map_err(failed)?; }
        () = context.ct.cancelled() => {
            return Err(ErrorData::internal_error("confirm cancelled", None));
        }
    }
    Ok(CallToolResult::success(vec![ContentBlock::text(format!(
        "withdrawn {}",
        asked.id
    ))]))
}
