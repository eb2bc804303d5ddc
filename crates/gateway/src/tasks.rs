//! Tasks (the tasks extension, SEP-2663) of downstream servers, through the
//! gateway. A task a downstream creates reaches the caller under a
//! gateway-minted id: the tool key and the downstream's own id, sealed
//! (`sealed.rs`), so an id cannot be forged, read, used by another project or
//! pointed at another server. `tasks/get|update|cancel` open it, check that the caller
//! may still run that tool (as `tool_execute` does), and reach the same
//! connection the call went through. A caller that did not declare the
//! extension never sees a task: the gateway polls it to its end instead.

use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolResponse, CallToolResult, CreateTaskResult, GetTaskResult, InputResponses, JsonObject, TaskPayload,
};
use serde::{Deserialize, Serialize};

use super::sealed::{self, Purpose};
use super::{ExecuteError, Gateway};
use crate::auth::Caller;
use downstream::{self, Downstream};

/// Polling bounds for a caller that does not poll itself.
const POLL_MIN: Duration = Duration::from_millis(20);
const POLL_MAX: Duration = Duration::from_secs(2);

/// What a gateway task id seals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Sealed {
    /// The tool whose call created the task.
    #[serde(rename = "k")]
    pub tool_key: String,
    /// The downstream's own id for it.
    #[serde(rename = "t")]
    pub task_id: String,
}

/// What a caller asks of a task.
#[derive(Debug)]
pub enum TaskRequest {
    /// `tasks/get`.
    Get,
    /// `tasks/update` with answers to its input requests.
    Update(InputResponses),
    /// `tasks/cancel`.
    Cancel,
}

/// What the gateway answers a task request.
#[derive(Debug)]
pub enum TaskAnswer {
    /// The task's state, under the caller's id.
    State(Box<GetTaskResult>),
    /// `tasks/update` or `tasks/cancel` was passed on.
    Done,
}

fn unknown(id: &str) -> ExecuteError {
    ExecuteError::NotFound(format!("task {id}"))
}

impl Gateway {
    /// Gives a downstream's new task the caller's id for it.
    pub(super) fn adopt_task(
        &self,
        caller: &Caller,
        tool_key: &str,
        mut created: CreateTaskResult,
    ) -> Result<CallToolResponse, ExecuteError> {
        let key = self
            .vault
            .key_or_create()
            .map_err(|e| ExecuteError::Task(e.to_string()))?;
        let sealed = Sealed {
            tool_key: tool_key.to_string(),
            task_id: created.task.task_id.clone(),
        };
        created.task.task_id = sealed::seal(&key, Purpose::Task, caller.project.id, &sealed);
        Ok(CallToolResponse::Task(created))
    }

    /// `tasks/get|update|cancel` of a task id the gateway gave this caller.
    pub async fn task(&self, caller: &Caller, id: &str, request: TaskRequest) -> Result<TaskAnswer, ExecuteError> {
        let key = self
            .vault
            .key_or_create()
            .map_err(|e| ExecuteError::Task(e.to_string()))?;
        let sealed: Sealed = sealed::open(&key, Purpose::Task, caller.project.id, id).ok_or_else(|| unknown(id))?;
        // The same check as tool_execute: a tool the caller may no longer run
        // has no tasks it may reach.
        let view = self.catalog.view_of(caller);
        let entry = view.get(&sealed.tool_key).ok_or_else(|| unknown(id))?;
        let server = self.registry.get(&entry.server).ok_or_else(|| unknown(id))?;
        let target = self.route(caller, &server, &mut JsonObject::new()).await?;
        match request {
            TaskRequest::Get => {
                let mut state = target.get_task(&sealed.task_id).await?;
                state.task.task.task_id = id.to_string();
                Ok(TaskAnswer::State(Box::new(state)))
            }
            TaskRequest::Update(responses) => {
                target.update_task(&sealed.task_id, responses).await?;
                Ok(TaskAnswer::Done)
            }
            TaskRequest::Cancel => {
                target.cancel_task(&sealed.task_id).await?;
                Ok(TaskAnswer::Done)
            }
        }
    }
}

/// Polls `created` on `server` to its end, for a caller that cannot, within
/// the server's timeout (then cancels it): the final result, as if the call
/// had answered it.
pub(super) async fn wait(server: &Downstream, created: &CreateTaskResult) -> Result<CallToolResponse, ExecuteError> {
    let id = &created.task.task_id;
    let deadline = Instant::now() + server.config.timeout;
    let mut every = Duration::from_millis(created.task.poll_interval_ms.unwrap_or(100)).clamp(POLL_MIN, POLL_MAX);
    loop {
        if Instant::now() + every > deadline {
            let _ = server.cancel_task(id).await;
            return Err(ExecuteError::Downstream(downstream::Error::Timeout {
                server: server.name().to_string(),
                tool: format!("task {id}"),
                after: server.config.timeout,
            }));
        }
        tokio::time::sleep(every).await;
        let state = server.get_task(id).await?;
        if let Some(ms) = state.task.task.poll_interval_ms {
            every = Duration::from_millis(ms).clamp(POLL_MIN, POLL_MAX);
        }
        match state.task.payload {
            TaskPayload::Completed { result } => {
                let result: CallToolResult = serde_json::from_value(serde_json::Value::Object(result))
                    .map_err(|e| ExecuteError::Task(format!("task {id} completed without a tool result: {e}")))?;
                return Ok(CallToolResponse::Complete(result));
            }
            TaskPayload::Failed { error } => {
                let error = serde_json::Value::Object(error);
                return Err(ExecuteError::Task(format!("task {id} failed: {error}")));
            }
            TaskPayload::Cancelled => return Err(ExecuteError::Task(format!("task {id} was cancelled"))),
            TaskPayload::InputRequired { .. } => {
                let _ = server.cancel_task(id).await;
                return Err(ExecuteError::Task(format!(
                    "task {id} asks for input, which only a client with the tasks extension can give"
                )));
            }
            _ => {}
        }
    }
}
