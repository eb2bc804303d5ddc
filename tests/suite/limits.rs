//! `[[limits]]` through the binary: calls per day of a tool, per project,
//! refused past the limit with `TOOL_LIMIT_REACHED` and when to retry, in
//! scripts too; and on PostgreSQL one count for every replica.

use std::time::Duration;

use crate::common;

use common::postgres::Cluster;
use common::*;
use serde_json::json;

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// Two calls a day of alpha's sha256 for each project, and a limit of one
/// call a day that only project `other` has.
const LIMITS: &str = r#"
[[limits]]
server = "alpha"
tool = "sha256"
per_day = 2

[[limits]]
server = "alpha"
project = "other"
per_day = 1
"#;

async fn sha256(client: &Client) -> rmcp::model::CallToolResult {
    execute(client, "alpha:sha256", json!({ "text": "abc" })).await
}

/// `error` of a refused call: its code and the seconds it says to wait.
fn refused(r: &rmcp::model::CallToolResult) -> (String, u64) {
    assert_eq!(r.is_error, Some(true), "{r:?}");
    let error = &r.structured_content.as_ref().unwrap()["error"];
    (
        error["code"].as_str().unwrap().to_string(),
        error["retryAfter"].as_u64().unwrap_or(0),
    )
}

#[tokio::test]
async fn a_tool_past_its_limit_is_refused_with_when_to_retry() {
    let gw = Gateway::start(&format!("{ANONYMOUS}{}{LIMITS}", chaos_server("alpha", ""))).await;
    let client = gw.client().await;
    wait_for_tool(&client, "alpha:sha256").await;
    for _ in 0..2 {
        assert_eq!(sha256(&client).await.is_error, Some(false));
    }
    let r = sha256(&client).await;
    let (code, retry_after) = refused(&r);
    assert_eq!(code, "TOOL_LIMIT_REACHED");
    // Two calls just made weigh one until at least half a day into the next.
    assert!((43_200..=2 * 86_400).contains(&retry_after), "{retry_after}");
    let error = &r.structured_content.as_ref().unwrap()["error"];
    let at = chrono::DateTime::parse_from_rfc3339(error["retryAt"].as_str().unwrap()).unwrap();
    let from_now = at.timestamp() - chrono::Utc::now().timestamp();
    assert!(from_now.abs_diff(retry_after as i64) <= 2, "{at} is in {retry_after} s");
    assert!(
        text(&r).contains(&format!(
            "'alpha:sha256' has reached its limit of 2 calls a day for project 'local'; one more call fits at {}",
            error["retryAt"].as_str().unwrap()
        )),
        "{}",
        text(&r)
    );
    // Its server's other tools are not limited, and a refused call spent nothing of theirs.
    let r = execute(&client, "alpha:word_count", json!({ "text": "a b" })).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");

    // A script's call is refused the same way.
    let r = call(
        &client,
        "tool_execute",
        json!({ "script": "try { await tools.call('alpha:sha256', { text: 'abc' }) } catch (e) { return String(e) }" }),
    )
    .await;
    let thrown = r.structured_content.unwrap()["result"].as_str().unwrap().to_string();
    assert!(
        thrown.contains("TOOL_LIMIT_REACHED") || thrown.contains("has reached its limit"),
        "{thrown}"
    );

    // Project `other` has a limit of its own on the whole server, counted apart.
    gw.cli(&["project", "create", "other", "--search", "bm25"]);
    gw.cli(&["grant", "--project", "other", "--server", "alpha"]);
    let other = gw.client_with_token(&gw.issue_token("other")).await.unwrap();
    let r = execute(&other, "alpha:word_count", json!({ "text": "a b" })).await;
    assert_eq!(r.is_error, Some(false), "other's first call: {r:?}");
    let r = sha256(&other).await;
    assert_eq!(refused(&r).0, "TOOL_LIMIT_REACHED");
    assert!(
        text(&r).contains("limit of 1 call a day for project 'other'"),
        "{}",
        text(&r)
    );

    // The audit log has each refusal, as denied (the last row may still be
    // in the journal, which the store folds in behind).
    eventually(Duration::from_secs(10), "three refusals audited as denied", || async {
        let audit = String::from_utf8(gw.cli(&["audit", "tail", "-n", "30"]).stdout).unwrap();
        let denied = audit
            .lines()
            .filter(|l| l.contains("denied") && l.ends_with("alpha:sha256"))
            .count();
        (denied == 3).then_some(())
    })
    .await;
}

/// Two replicas on one PostgreSQL store count in the same windows.
#[tokio::test]
#[ignore = "full tier: needs PostgreSQL (scripts/setup)"]
async fn replicas_on_postgresql_share_one_count() {
    let store = format!("[store]\nurl = \"{}\"\n\n", Cluster::shared().database());
    let config = format!("{ANONYMOUS}{store}{}{LIMITS}", chaos_server("alpha", ""));
    let (a, b) = (Gateway::start(&config).await, Gateway::start(&config).await);
    let (ca, cb) = (a.client().await, b.client().await);
    wait_for_tool(&ca, "alpha:sha256").await;
    wait_for_tool(&cb, "alpha:sha256").await;
    assert_eq!(sha256(&ca).await.is_error, Some(false));
    assert_eq!(sha256(&cb).await.is_error, Some(false));
    for client in [&ca, &cb] {
        let r = sha256(client).await;
        assert_eq!(refused(&r).0, "TOOL_LIMIT_REACHED", "{r:?}");
    }
}
