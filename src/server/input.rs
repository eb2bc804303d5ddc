//! 2026-07-28 input requests across generations. A 2026 downstream that
//! needs its user answers a call with an `InputRequiredResult`; a 2026 client
//! answers and retries (`tool_execute` carries `inputResponses` and
//! `requestState` on to the same server and tool). A 2025 client cannot read
//! that result, so for it the gateway drives the rounds: it puts each input
//! request to the client over its session (`elicitation/create`,
//! `sampling/createMessage`, `roots/list`) and retries the downstream with
//! the answers, as a 2026 client would.

use rmcp::RoleServer;
use rmcp::model::{ClientCapabilities, InputRequest, InputRequiredResult, InputResponses, ServerRequest};
use rmcp::service::{Peer, RequestContext};
use tokio_util::sync::CancellationToken;

use crate::downstream::asks::{self, Unanswered};

/// Rounds a downstream may ask for before the call gives up (as the SDKs' clients do).
pub const MAX_ROUNDS: usize = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;

/// The session to ask over, when the caller is a 2025 client (it
/// initialized a session and sends no per-request protocol version); a 2026
/// client reads the `InputRequiredResult` itself.
pub fn session_to_ask(ctx: &RequestContext<RoleServer>) -> Option<&Peer<RoleServer>> {
    (!ctx.meta.contains_key(crate::wire::PROTOCOL_VERSION_META) && ctx.peer.peer_info().is_some()).then_some(&ctx.peer)
}

/// The capabilities of a 2026-07-28 caller, which reads an
/// `InputRequiredResult` itself and retries with the answers; `None` for
/// any other.
pub fn reads_input_requests(ctx: &RequestContext<RoleServer>) -> Option<ClientCapabilities> {
    if !ctx.meta.contains_key(crate::wire::PROTOCOL_VERSION_META) {
        return None;
    }
    let declared = ctx.meta.get(crate::wire::CLIENT_CAPABILITIES_META).cloned();
    Some(
        declared
            .and_then(|c| serde_json::from_value(c).ok())
            .unwrap_or_default(),
    )
}

/// Puts every input request of `asked` to the client over `peer`; the
/// answers by key, or why they could not be had (a capability the client
/// did not declare, a refusal, no answer in time).
pub async fn ask(peer: &Peer<RoleServer>, asked: &InputRequiredResult) -> Result<InputResponses, String> {
    let mut answers = InputResponses::new();
    for (key, request) in asked.input_requests.iter().flatten() {
        let (request, what) = match request {
            InputRequest::Elicitation(r) => (ServerRequest::ElicitRequest(r.clone()), "a question (elicitation)"),
            InputRequest::CreateMessage(r) => (
                ServerRequest::CreateMessageRequest(r.clone()),
                "a model completion (sampling)",
            ),
            InputRequest::ListRoots(r) => (ServerRequest::ListRootsRequest(r.clone()), "its roots (roots/list)"),
            _ => return Err("it sent an input request of a kind this gateway does not know".into()),
        };
        // The whole upstream call is the bound: cancelling it drops this.
        let answer = asks::send(peer, request, &CancellationToken::new())
            .await
            .map_err(|e| match e {
                Unanswered::Undeclared => {
                    format!("this client cannot answer {what}: it did not declare that capability")
                }
                other => format!("{what}: {other}"),
            })?;
        let answer = serde_json::to_value(answer).map_err(|e| format!("the client's answer to {what}: {e}"))?;
        answers.insert(key.clone(), answer);
    }
    Ok(answers)
}
