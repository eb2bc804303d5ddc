//! 2026-07-28 input requests across generations. A 2026 downstream that
//! needs its user answers a call with an `InputRequiredResult`; a 2026 client
//! answers and retries (`tool_execute` carries `inputResponses` and
//! `requestState` on to the same server and tool). A 2025 client cannot read
//! that result, so for it the gateway drives the rounds: it puts each input
//! request to the client over its session (`elicitation/create`,
//! `sampling/createMessage`, `roots/list`) and retries the downstream with
//! the answers, as a 2026 client would.

use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{InputRequest, InputRequiredResult, InputResponses, ServerRequest};
use rmcp::service::{Peer, RequestContext};

/// Rounds a downstream may ask for before the call gives up (as the SDKs' clients do).
pub const MAX_ROUNDS: usize = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;

/// How long a person may take to answer one question.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(600);

/// The `_meta` key every 2026-07-28 request carries.
const PROTOCOL_VERSION_META: &str = "io.modelcontextprotocol/protocolVersion";

/// The session to ask over, when the caller is a 2025 client (it
/// initialized a session and sends no per-request protocol version); a 2026
/// client reads the `InputRequiredResult` itself.
pub fn session_to_ask(ctx: &RequestContext<RoleServer>) -> Option<&Peer<RoleServer>> {
    (!ctx.meta.contains_key(PROTOCOL_VERSION_META) && ctx.peer.peer_info().is_some()).then_some(&ctx.peer)
}

/// Puts every input request of `asked` to the client over `peer`; the
/// answers by key, or why they could not be had (a capability the client
/// did not declare, a refusal, no answer in time).
pub async fn ask(peer: &Peer<RoleServer>, asked: &InputRequiredResult) -> Result<InputResponses, String> {
    let capabilities = peer.peer_info().map(|i| i.capabilities.clone()).unwrap_or_default();
    let mut answers = InputResponses::new();
    for (key, request) in asked.input_requests.iter().flatten() {
        let (request, declared, what) = match request {
            InputRequest::Elicitation(r) => (
                ServerRequest::ElicitRequest(r.clone()),
                capabilities.elicitation.is_some(),
                "a question (elicitation)",
            ),
            InputRequest::CreateMessage(r) => (
                ServerRequest::CreateMessageRequest(r.clone()),
                capabilities.sampling.is_some(),
                "a model completion (sampling)",
            ),
            InputRequest::ListRoots(r) => (
                ServerRequest::ListRootsRequest(r.clone()),
                capabilities.roots.is_some(),
                "its roots (roots/list)",
            ),
            _ => return Err("it sent an input request of a kind this gateway does not know".into()),
        };
        if !declared {
            return Err(format!(
                "this client cannot answer {what}: it did not declare that capability"
            ));
        }
        let answer = tokio::time::timeout(ANSWER_TIMEOUT, peer.send_request(request))
            .await
            .map_err(|_| format!("the client did not answer {what} within {} s", ANSWER_TIMEOUT.as_secs()))?
            .map_err(|e| format!("the client could not answer {what}: {e}"))?;
        let answer = serde_json::to_value(answer).map_err(|e| format!("the client's answer to {what}: {e}"))?;
        answers.insert(key.clone(), answer);
    }
    Ok(answers)
}
