//! Tasks (the tasks extension) through the gateway, with the real binary and
//! the demo server's `slow_task`: a client with the extension gets a task
//! under a sealed gateway id and polls, cancels and loses it as its grants
//! say, and answers its questions through `tasks/update`; another project
//! cannot use the id; a client without the extension gets the final result,
//! the gateway having polled for it.

use crate::common;

use std::time::Duration;

use common::*;
use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig, GetTaskParams,
    TaskPayload, TaskStatus, UpdateTaskParams,
};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;

/// A client that declared the tasks extension, with `token`.
async fn task_client(gw: &Gateway, token: &str) -> RunningService<RoleClient, ClientConfig> {
    let mut info = ClientConfig::default();
    info.capabilities = ClientCapabilities::builder().enable_tasks().build();
    let config = StreamableHttpClientTransportConfig::with_uri(gw.url.as_str()).auth_header(token);
    info.serve(StreamableHttpClientTransport::from_config(config))
        .await
        .unwrap()
}

fn slow_task(ms: u64) -> CallToolRequestParams {
    task_call(json!({ "ms": ms }))
}

fn task_call(arguments: serde_json::Value) -> CallToolRequestParams {
    CallToolRequestParams::new("tool_execute").with_arguments(
        json!({ "toolKey": "demo:slow_task", "arguments": arguments })
            .as_object()
            .unwrap()
            .clone(),
    )
}

async fn status(client: &RunningService<RoleClient, ClientConfig>, id: &str) -> Result<TaskPayload, String> {
    client
        .get_task(GetTaskParams::new(id))
        .await
        .map(|r| {
            assert_eq!(r.task.task.task_id, id, "the caller's id, never the downstream's");
            r.task.payload
        })
        .map_err(|e| e.to_string())
}

#[tokio::test]
async fn a_task_is_reached_only_by_its_project_under_a_sealed_id() {
    let gw = Gateway::start(&chaos_server("demo", "")).await;
    for p in ["alpha", "beta"] {
        gw.cli(&["project", "create", p]);
        gw.cli(&["grant", "--project", p, "--server", "demo"]);
    }
    let (alpha_token, beta_token) = (gw.issue_token("alpha"), gw.issue_token("beta"));
    let alpha = task_client(&gw, &alpha_token).await;
    let beta = task_client(&gw, &beta_token).await;
    wait_for_tool(&alpha, "demo:slow_task").await;

    let CallToolResponse::Task(created) = alpha.call_tool_once(slow_task(1500)).await.unwrap() else {
        panic!("a client with the tasks extension gets a task");
    };
    let id = created.task.task_id.clone();
    assert!(id.starts_with("gwt_") && !id.contains("demo-task"), "{id}");
    assert_eq!(created.task.status, TaskStatus::Working);
    assert_eq!(status(&alpha, &id).await, Ok(TaskPayload::Working));

    // Another project, an altered id and a made-up one: all unknown.
    let refused = status(&beta, &id).await.unwrap_err();
    assert!(refused.contains("unknown task"), "{refused}");
    let mut altered = id.clone();
    altered.replace_range(id.len() - 4.., "AAAA");
    assert!(status(&alpha, &altered).await.unwrap_err().contains("unknown task"));
    assert!(status(&alpha, "demo-task-0011223344556677").await.is_err());

    // It completes, and its result comes through.
    let done = eventually(Duration::from_secs(10), "the task completed", || async {
        match status(&alpha, &id).await {
            Ok(TaskPayload::Completed { result }) => Some(result),
            _ => None,
        }
    })
    .await;
    assert_eq!(done["content"][0]["text"], "done after 1500 ms");

    // Cancelled through the gateway.
    let CallToolResponse::Task(long) = alpha.call_tool_once(slow_task(60_000)).await.unwrap() else {
        panic!("a task");
    };
    alpha
        .cancel_task(CancelTaskParams::new(long.task.task_id.clone()))
        .await
        .unwrap();
    assert_eq!(status(&alpha, &long.task.task_id).await, Ok(TaskPayload::Cancelled));

    // A task that asks: its question reaches the client, the answer goes
    // back through tasks/update, and it completes with it.
    let CallToolResponse::Task(asking) = alpha
        .call_tool_once(task_call(json!({ "ms": 0, "ask": true })))
        .await
        .unwrap()
    else {
        panic!("a task");
    };
    let asking = asking.task.task_id;
    let Ok(TaskPayload::InputRequired { input_requests }) = status(&alpha, &asking).await else {
        panic!("the task asks first");
    };
    let question = serde_json::to_value(&input_requests["confirm"]).unwrap();
    assert_eq!(question["method"], "elicitation/create");
    let answer = json!({ "action": "accept", "content": { "ok": true } });
    alpha
        .update_task(UpdateTaskParams::new(
            asking.clone(),
            [("confirm".to_string(), answer)].into(),
        ))
        .await
        .unwrap();
    let Ok(TaskPayload::Completed { result }) = status(&alpha, &asking).await else {
        panic!("answered, the task completes");
    };
    let said = result["content"][0]["text"].as_str().unwrap().to_string();
    assert!(said.contains("answered") && said.contains("accept"), "{said}");

    // A client without the extension gets the result: the gateway polled.
    let plain = gw.client_with_token(&alpha_token).await.unwrap();
    let r = execute(&plain, "demo:slow_task", json!({ "ms": 300 })).await;
    assert_eq!(text(&r), "done after 300 ms");
    // ...unless the task asks, which only a client with the extension can answer.
    let r = execute(&plain, "demo:slow_task", json!({ "ms": 0, "ask": true })).await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("asks for input"), "{}", text(&r));

    // Revoked, the tool's tasks are out of reach too.
    gw.cli(&["revoke", "--project", "alpha", "--server", "demo"]);
    assert!(status(&alpha, &id).await.unwrap_err().contains("unknown task"));
}
