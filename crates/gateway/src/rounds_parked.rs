//! A 2025 downstream that asks mid-call (`elicitation/create`,
//! `sampling/createMessage`, `roots/list`) while its caller is a 2026-07-28
//! client, which cannot be asked mid-call. The request comes out of the call
//! as an `InputRequiredResult` while the call waits, parked here. The
//! caller's retry (`tool_execute` with `inputResponses` and the gateway's
//! `requestState`) answers the downstream and picks the call up where it
//! stopped. The state names the parked call, sealed to the project and tool
//! (`sealed.rs`). A call nobody comes back for is cancelled after
//! [`ANSWER_TIMEOUT`], as a question put to a 2025 client would be.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{CallToolRequestParams, CallToolResponse, InputRequiredResult};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::sealed::{self, Purpose};
use downstream::mid_call::{ANSWER_TIMEOUT, Asked, Asker};
use downstream::{self, Downstream};
use store::secrets::Key;

/// Whose a parked call is: its `requestState` is sealed with `key` to the
/// project, the caller (`subject`) and the tool, and a retry must match.
pub(super) struct Owner<'a> {
    pub(super) key: &'a Key,
    pub(super) project_id: i64,
    pub(super) subject: Option<&'a str>,
    pub(super) tool_key: &'a str,
}

/// The key of the one input request a round carries.
const INPUT_KEY: &str = "gateway";

/// What a round's `requestState` seals.
#[derive(Debug, Serialize, Deserialize)]
struct State {
    /// The tool the call is for.
    #[serde(rename = "k")]
    tool_key: String,
    /// The parked call.
    #[serde(rename = "c")]
    call: u64,
    /// The OAuth subject who was asked, if any: another subject of the same
    /// project may not answer for them.
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    subject: Option<String>,
}

/// A call whose downstream may ask mid-call, run as a task of its own so it
/// can wait between rounds; dropping it cancels the call downstream.
#[derive(Debug)]
pub(super) struct Call {
    task: JoinHandle<Result<CallToolResponse, downstream::Error>>,
    asked: mpsc::Receiver<Asked>,
}

impl Drop for Call {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Call {
    /// Starts `call` on `target`; its mid-call requests come back from [`ParkedCalls::next`].
    pub(super) fn start(
        target: Arc<Downstream>,
        params: CallToolRequestParams,
        mut origin: downstream::CallOrigin,
        span: tracing::Span,
    ) -> Self {
        let (rounds, asked) = mpsc::channel(1);
        let capabilities = origin.input_requests.clone().unwrap_or_default();
        origin.ask = Some(Asker::Rounds(rounds, capabilities));
        let task = tokio::spawn(tracing::Instrument::instrument(
            async move { target.call_tool(params, origin).await },
            span,
        ));
        Self { task, asked }
    }
}

/// A parked call and the answer its downstream waits for.
#[derive(Debug)]
struct Waiting {
    call: Call,
    answer: tokio::sync::oneshot::Sender<Result<serde_json::Value, String>>,
}

/// Calls waiting for their callers' input.
#[derive(Debug, Default, Clone)]
pub(super) struct ParkedCalls {
    waiting: Arc<Mutex<HashMap<u64, Waiting>>>,
    next: Arc<AtomicU64>,
}

/// Why a retry could not pick its call up.
#[derive(Debug, thiserror::Error)]
#[error(
    "requestState is not one this gateway gave for '{tool_key}', or its call has ended (a call waits {} s for its input)",
    ANSWER_TIMEOUT.as_secs()
)]
pub struct Unknown {
    /// The tool the retry was for.
    pub tool_key: String,
}

impl ParkedCalls {
    /// Runs `call` until it ends, or until its downstream asks: then parks it
    /// and answers with the request as an input request, under a state
    /// sealed for its `owner`.
    pub(super) async fn next(&self, mut call: Call, owner: &Owner<'_>) -> Result<CallToolResponse, downstream::Error> {
        let asked = tokio::select! {
            biased;
            ended = &mut call.task => return ended.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic())),
            Some(asked) = call.asked.recv() => asked,
        };
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        let state = sealed::seal(
            owner.key,
            Purpose::RequestState,
            owner.project_id,
            &State {
                tool_key: owner.tool_key.to_string(),
                call: id,
                subject: owner.subject.map(str::to_string),
            },
        );
        let waiting = Waiting {
            call,
            answer: asked.answer,
        };
        self.waiting.lock().expect("rounds lock").insert(id, waiting);
        let waiting = Arc::downgrade(&self.waiting);
        tokio::spawn(async move {
            tokio::time::sleep(ANSWER_TIMEOUT).await;
            // Nobody came back: dropping the call cancels it downstream.
            if let Some(waiting) = waiting.upgrade() {
                waiting.lock().expect("rounds lock").remove(&id);
            }
        });
        let requests = BTreeMap::from([(INPUT_KEY.to_string(), asked.request)]);
        Ok(CallToolResponse::InputRequired(InputRequiredResult::new(
            Some(requests),
            Some(state),
        )))
    }

    /// The parked call a retry (`params`, its `requestState` and
    /// `inputResponses`) names, with the caller's answer passed on to its
    /// downstream; `None` when the state is not the gateway's (a 2026
    /// downstream's own, passed through untouched). Only its `owner` picks it up.
    pub(super) fn resume(&self, owner: &Owner<'_>, params: &CallToolRequestParams) -> Result<Option<Call>, Unknown> {
        let Some(state) = params
            .request_state
            .as_deref()
            .filter(|s| Purpose::RequestState.marks(s))
        else {
            return Ok(None);
        };
        let unknown = || Unknown {
            tool_key: owner.tool_key.to_string(),
        };
        let opened: State =
            sealed::open(owner.key, Purpose::RequestState, owner.project_id, state).ok_or_else(unknown)?;
        if opened.tool_key != owner.tool_key || opened.subject.as_deref() != owner.subject {
            return Err(unknown());
        }
        // The seal binds the state to its project, and it names the subject: the call is this caller's.
        let waiting = self
            .waiting
            .lock()
            .expect("rounds lock")
            .remove(&opened.call)
            .ok_or_else(unknown)?;
        let answer = (params.input_responses.as_ref())
            .and_then(|r| r.get(INPUT_KEY))
            .cloned()
            .ok_or_else(|| "the client's retry carried no answer".to_string());
        // The downstream may have stopped waiting (the call ended meanwhile):
        // then the call's own end is what the caller gets.
        let _ = waiting.answer.send(answer);
        Ok(Some(waiting.call))
    }
}

// Roots are deprecated by 2026-07-28 (SEP-2577); the simplest request to test with.
#[cfg(test)]
#[allow(deprecated)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use rmcp::model::{CallToolResult, ContentBlock, InputRequest, ListRootsRequest};
    use serde_json::json;
    use tokio::sync::oneshot;

    use rmcp::model::InputResponses;

    use super::*;

    fn key() -> Key {
        Key::from_bytes(&[3; 32], "test").unwrap()
    }

    /// The owner of a call to `tool_key` for `project_id` and `subject`.
    fn owner<'a>(key: &'a Key, project_id: i64, subject: Option<&'a str>, tool_key: &'a str) -> Owner<'a> {
        Owner {
            key,
            project_id,
            subject,
            tool_key,
        }
    }

    /// A retry carrying `state` and, if any, `answers`.
    fn retry(state: &str, answers: Option<&InputResponses>) -> CallToolRequestParams {
        let mut params = CallToolRequestParams::new("t");
        params.request_state = Some(state.to_string());
        params.input_responses = answers.cloned();
        params
    }

    /// A call that asks for roots, then answers with what it was told.
    fn asking_call() -> Call {
        let (rounds, asked) = mpsc::channel(1);
        let task = tokio::spawn(async move {
            let (answer, answered) = oneshot::channel();
            let request = InputRequest::ListRoots(ListRootsRequest::default());
            rounds.send(Asked { request, answer }).await.unwrap();
            let told = answered.await.unwrap().unwrap_or_else(|why| json!(why));
            Ok(CallToolResponse::Complete(CallToolResult::success(vec![
                ContentBlock::text(told.to_string()),
            ])))
        });
        Call { task, asked }
    }

    fn text(response: CallToolResponse) -> String {
        let CallToolResponse::Complete(r) = response else {
            panic!("{response:?}")
        };
        r.content[0].as_text().unwrap().text.clone()
    }

    #[tokio::test]
    async fn a_call_that_asks_waits_for_the_retry_of_its_own_project_and_tool() {
        let (parked, key) = (ParkedCalls::default(), key());
        let first = parked
            .next(asking_call(), &owner(&key, 1, None, "srv:t"))
            .await
            .unwrap();
        let CallToolResponse::InputRequired(asked) = first else {
            panic!("{first:?}")
        };
        assert!(asked.input_requests.unwrap().contains_key(INPUT_KEY));
        let state = asked.request_state.unwrap();
        assert!(
            parked
                .resume(&owner(&key, 1, None, "srv:other"), &retry(&state, None))
                .is_err(),
            "another tool"
        );
        assert!(
            parked
                .resume(&owner(&key, 2, None, "srv:t"), &retry(&state, None))
                .is_err(),
            "another project"
        );
        assert!(
            parked
                .resume(&owner(&key, 1, Some("mallory"), "srv:t"), &retry(&state, None))
                .is_err(),
            "another caller of the project, and the call still waits for its own"
        );
        assert!(
            parked
                .resume(&owner(&key, 1, None, "srv:t"), &retry("a downstream's own", None))
                .unwrap()
                .is_none(),
            "a 2026 downstream's state is not the gateway's"
        );
        let answers = BTreeMap::from([(INPUT_KEY.to_string(), json!({"roots": []}))]);
        let call = parked
            .resume(&owner(&key, 1, None, "srv:t"), &retry(&state, Some(&answers)))
            .unwrap()
            .unwrap();
        let done = parked.next(call, &owner(&key, 1, None, "srv:t")).await.unwrap();
        assert_eq!(text(done), r#"{"roots":[]}"#);
        assert!(
            parked
                .resume(&owner(&key, 1, None, "srv:t"), &retry(&state, None))
                .is_err(),
            "used once"
        );
    }

    #[tokio::test]
    async fn a_retry_without_an_answer_tells_the_downstream() {
        let (parked, key) = (ParkedCalls::default(), key());
        let CallToolResponse::InputRequired(asked) = parked
            .next(asking_call(), &owner(&key, 1, None, "srv:t"))
            .await
            .unwrap()
        else {
            panic!()
        };
        let state = asked.request_state.unwrap();
        let call = parked
            .resume(&owner(&key, 1, None, "srv:t"), &retry(&state, None))
            .unwrap()
            .unwrap();
        let done = parked.next(call, &owner(&key, 1, None, "srv:t")).await.unwrap();
        assert_eq!(text(done), r#""the client's retry carried no answer""#);
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_nobody_comes_back_for_is_cancelled() {
        let (parked, key) = (ParkedCalls::default(), key());
        let cancelled = Arc::new(AtomicBool::new(false));
        struct Flag(Arc<AtomicBool>);
        impl Drop for Flag {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let (asks, asked) = mpsc::channel(1);
        let flag = Flag(cancelled.clone());
        let task = tokio::spawn(async move {
            let _flag = flag;
            let (answer, answered) = oneshot::channel();
            let request = InputRequest::ListRoots(ListRootsRequest::default());
            asks.send(Asked { request, answer }).await.unwrap();
            let _ = answered.await;
            std::future::pending().await
        });
        let first = parked
            .next(Call { task, asked }, &owner(&key, 1, None, "srv:t"))
            .await
            .unwrap();
        let CallToolResponse::InputRequired(asked) = first else {
            panic!()
        };
        tokio::time::sleep(ANSWER_TIMEOUT + std::time::Duration::from_secs(1)).await;
        tokio::task::yield_now().await;
        assert!(cancelled.load(Ordering::SeqCst), "the call was dropped");
        let state = asked.request_state.unwrap();
        assert!(
            parked
                .resume(&owner(&key, 1, None, "srv:t"), &retry(&state, None))
                .is_err()
        );
    }
}
