//! A 2026-07-28 downstream's input requests, put to a 2025 caller over its
//! session. A 2026 downstream that needs its user answers a call with an
//! `InputRequiredResult`; a 2026 client answers and retries (`tool_execute`
//! carries `inputResponses` and `requestState` on to the same server and
//! tool). A 2025 client cannot read that result, so for it the gateway drives
//! the rounds: it puts each input request to the client over its session
//! (`elicitation/create`, `sampling/createMessage`, `roots/list`) and retries
//! the downstream with the answers, as a 2026 client would. (The other
//! direction, a 2025 downstream's question to a 2026 client, is
//! `rounds_parked.rs`.)

use rmcp::RoleServer;
use rmcp::model::{CallToolResponse, InputRequest, InputRequiredResult, InputResponses, ServerRequest};
use rmcp::service::Peer;
use tokio_util::sync::CancellationToken;
use tracing::info;

use super::call::Context;
use super::{Answer, ExecuteArgs, ExecuteError, Gateway, Retry};
use downstream::mid_call::{self, Asker, Unanswered};

/// Rounds a downstream may ask for before the call gives up (as the SDKs' clients do).
pub(super) const MAX_ROUNDS: usize = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;

impl Gateway {
    /// `tool_execute`, with a 2026 downstream's input rounds driven here
    /// when the caller is a 2025 client; a 2026 client
    /// gets the `InputRequiredResult` as it is.
    pub(super) async fn answer_execute(&self, cx: &Context<'_>, mut args: ExecuteArgs) -> Answer {
        let mut answer = self.answer_execute_once(cx, args.clone()).await;
        let Some(Asker::Session { peer, .. }) = &cx.origin.ask else {
            return answer;
        };
        for _ in 0..MAX_ROUNDS {
            let CallToolResponse::InputRequired(asked) = &answer.result else {
                return answer;
            };
            args.retry = match ask(peer, asked).await {
                Ok(answers) => Retry {
                    input_responses: Some(answers),
                    request_state: asked.request_state.clone(),
                },
                Err(why) => return unanswered(answer, &args.tool_key, why),
            };
            answer = self.answer_execute_once(cx, args.clone()).await;
        }
        match answer.result {
            CallToolResponse::InputRequired(_) => unanswered(
                answer,
                &args.tool_key,
                format!("it still asked after {MAX_ROUNDS} rounds"),
            ),
            _ => answer,
        }
    }
}

/// `answer`, turned into the error of a question that went unanswered.
fn unanswered(mut answer: Answer, key: &str, why: String) -> Answer {
    info!(tool_key = key, why = %why, "input request unanswered");
    let error = ExecuteError::InputUnanswered {
        key: key.to_string(),
        why,
    };
    Answer {
        trail: std::mem::take(&mut answer.trail),
        ..Answer::failed(error, None)
    }
}

/// Puts every input request of `asked` to the client over `peer`; the
/// answers by key, or why they could not be had (a capability the client
/// did not declare, a refusal, no answer in time).
pub(super) async fn ask(peer: &Peer<RoleServer>, asked: &InputRequiredResult) -> Result<InputResponses, String> {
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
        let answer = mid_call::send(peer, request, &CancellationToken::new())
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
