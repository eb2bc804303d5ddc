//! The demo's `slow_task` as a task (tasks extension, SEP-2663): a client
//! that declared the extension gets a task at once and polls it; it
//! completes after `ms`, or ends cancelled. With `ask`, it first waits in
//! `input_required` for a confirmation (`tasks/update`).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolResult, ContentBlock, CreateTaskResult, DetailedTask, ErrorData, GetTaskResult, InputRequests,
    InputResponses, Task, TaskPayload, TaskStatus,
};
use serde_json::{Value, json};

/// How often a client should ask.
const POLL_MS: u64 = 50;

#[derive(Debug)]
struct Running {
    started: Instant,
    created_at: String,
    run_for: Duration,
    cancelled: bool,
    /// Waits for a confirmation first.
    asks: bool,
    answer: Option<Value>,
}

/// The confirmation an asking task waits for.
fn confirmation() -> InputRequests {
    let ask = json!({
        "method": "elicitation/create",
        "params": {
            "message": "Go on with the slow task?",
            "requestedSchema": { "type": "object", "properties": { "ok": { "type": "boolean" } }, "required": ["ok"] }
        }
    });
    [(
        "confirm".to_string(),
        serde_json::from_value(ask).expect("an elicitation request"),
    )]
    .into()
}

/// The tasks this server runs, by id.
#[derive(Debug, Default)]
pub(super) struct Tasks(Mutex<HashMap<String, Running>>);

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

impl Tasks {
    /// Starts a task that completes after `ms` (and a confirmation, if it `asks`).
    pub(super) fn start(&self, ms: u64, asks: bool) -> CreateTaskResult {
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).unwrap_or_default();
        let id = format!("demo-task-{}", vocab::text::hex(&bytes));
        let created_at = now();
        self.0.lock().expect("tasks lock").insert(
            id.clone(),
            Running {
                started: Instant::now(),
                created_at: created_at.clone(),
                run_for: Duration::from_millis(ms),
                cancelled: false,
                asks,
                answer: None,
            },
        );
        CreateTaskResult::new(
            Task::new(id, TaskStatus::Working, created_at.clone(), created_at).with_poll_interval_ms(POLL_MS),
        )
    }

    /// `tasks/get`.
    pub(super) fn get(&self, id: &str) -> Result<GetTaskResult, ErrorData> {
        let tasks = self.0.lock().expect("tasks lock");
        let task = tasks
            .get(id)
            .ok_or_else(|| ErrorData::invalid_params(format!("unknown task '{id}'"), None))?;
        let payload = if task.cancelled {
            TaskPayload::Cancelled
        } else if task.asks && task.answer.is_none() {
            TaskPayload::InputRequired {
                input_requests: confirmation(),
            }
        } else if task.started.elapsed() >= task.run_for {
            let answered = task
                .answer
                .as_ref()
                .map(|a| format!(", answered {a}"))
                .unwrap_or_default();
            let result = CallToolResult::success(vec![ContentBlock::text(format!(
                "done after {} ms{answered}",
                task.run_for.as_millis()
            ))]);
            let serde_json::Value::Object(result) = serde_json::to_value(result).unwrap_or_default() else {
                unreachable!("a result is an object")
            };
            TaskPayload::Completed { result }
        } else {
            TaskPayload::Working
        };
        let base = Task::new(id, TaskStatus::Working, task.created_at.clone(), now()).with_poll_interval_ms(POLL_MS);
        Ok(GetTaskResult::new(DetailedTask::new(base, payload)))
    }

    /// `tasks/update`: the confirmation an asking task waits for.
    pub(super) fn update(&self, id: &str, responses: InputResponses) -> Result<(), ErrorData> {
        let mut tasks = self.0.lock().expect("tasks lock");
        let task = tasks
            .get_mut(id)
            .ok_or_else(|| ErrorData::invalid_params(format!("unknown task '{id}'"), None))?;
        let answer = responses
            .get("confirm")
            .ok_or_else(|| ErrorData::invalid_params("expected the response 'confirm'", None))?;
        task.answer = Some(answer.clone());
        Ok(())
    }

    /// `tasks/cancel`: a task still working ends cancelled.
    pub(super) fn cancel(&self, id: &str) -> Result<(), ErrorData> {
        let mut tasks = self.0.lock().expect("tasks lock");
        let task = tasks
            .get_mut(id)
            .ok_or_else(|| ErrorData::invalid_params(format!("unknown task '{id}'"), None))?;
        if task.started.elapsed() < task.run_for {
            task.cancelled = true;
        }
        Ok(())
    }
}
