//! The one-call path (`gateway/call.rs`), in process: every kind of answer
//! leaves exactly one audit row with its outcome, strict audit withholds an
//! answer whose row cannot be written (on SQLite its journal takes it), and
//! a script's inner calls are rows of their own under its request. Needs
//! this crate's binary (the demo server's child process), and PostgreSQL
//! for the full tier's tests of the commit path.

use std::time::Duration;

use mcp_gateway::outcome::Outcome;
use mcp_gateway::store::AuditRow;
use serde_json::{Value, json};

use crate::common::*;

/// The demo server with its test tools (`fail`, `sleep`), calls timed out after 1 s.
fn config() -> String {
    format!("{ANONYMOUS}{}", chaos_server("demo", "timeout_ms = 1000"))
}

/// (meta-tool, key, outcome) of a row, for whole-table assertions.
fn summary(row: &AuditRow) -> (String, Option<String>, Outcome) {
    (row.meta_tool.clone(), row.tool_key.clone(), row.outcome)
}

#[tokio::test]
async fn every_kind_of_answer_leaves_one_row_with_its_outcome() {
    let mut gw = Gateway::start(&config()).await;
    let client = gw.client().await;
    wait_for_tool(&client, "demo:calculate").await;
    let before = gw.last_rows(1000).await.len();

    // Each answer, and what its row must say. Strict audit (the default):
    // the row is durable before the answer leaves, so it is there at once.
    let cases: Vec<(Value, Option<&str>, Outcome, &str)> = vec![
        (
            json!({"toolKey": "demo:calculate", "arguments": {"expression": "6*7"}}),
            Some("demo:calculate"),
            Outcome::Ok,
            "",
        ),
        (
            json!({"toolKey": "demo:fail", "arguments": {"message": "no"}}),
            Some("demo:fail"),
            Outcome::ToolError,
            "",
        ),
        (
            json!({"toolKey": "demo:calculate", "arguments": {"expression": 7}}),
            Some("demo:calculate"),
            Outcome::Failed,
            "TOOL_VALIDATION_ERROR",
        ),
        (
            json!({"toolKey": "demo:nope", "arguments": {}}),
            Some("demo:nope"),
            Outcome::Denied,
            "TOOL_NOT_FOUND",
        ),
        (
            json!({"toolKey": "demo:sleep", "arguments": {"ms": 5000}}),
            Some("demo:sleep"),
            Outcome::Timeout,
            "TOOL_EXECUTION_TIMEOUT",
        ),
    ];
    for (i, (args, key, outcome, code)) in cases.iter().enumerate() {
        let r = call(&client, "tool_execute", args.clone()).await;
        if code.is_empty() {
            assert!(
                r.structured_content.is_some() || !r.content.is_empty(),
                "case {i}: {r:?}"
            );
        } else {
            assert_eq!(error_code(&r), *code, "case {i}");
        }
        let rows = gw.last_rows(1000).await;
        assert_eq!(
            rows.len(),
            before + i + 1,
            "case {i}: one new row, written before the answer"
        );
        let row = rows.last().unwrap();
        assert_eq!(
            summary(row),
            ("tool_execute".into(), key.map(String::from), *outcome),
            "case {i}"
        );
    }

    let found = discover(&client, json!("hash some text")).await;
    let row = gw.last_rows(1).await.pop().unwrap();
    assert_eq!(summary(&row), ("tool_discovery".into(), None, Outcome::Ok));
    assert_eq!(
        row.result_count,
        Some(found.len() as u64),
        "a discovery counts its results"
    );
    assert_eq!(
        gw.last_rows(1000).await.len(),
        before + cases.len() + 1,
        "and nothing else was written"
    );
    gw.stop().await;
}

/// The demo on a store of its own on the test PostgreSQL cluster, where
/// strict audit waits for each row's commit; the database's name.
fn on_postgres() -> (String, String) {
    let url = postgres::Cluster::shared().database();
    let name = url.rsplit('/').next().unwrap().to_string();
    (format!("[store]\nurl = \"{url}\"\n{}", config()), name)
}

/// `sql` in the test cluster's database `name`.
fn psql(name: &str, sql: &str) {
    postgres::Cluster::shared().psql(name, sql);
}

const REFUSE: &str = "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS
     $$ BEGIN RAISE EXCEPTION 'the disk is full'; END $$";

/// Strict audit on SQLite: a store that will not take rows (a full disk, a
/// lock) neither refuses nor withholds a call, since its rows are durable in
/// the journal; they land once the store takes them, one row per call.
#[tokio::test]
async fn a_sqlite_store_that_takes_no_rows_delays_them_and_refuses_no_call() {
    let mut gw = Gateway::start(&config()).await;
    let client = gw.client().await;
    wait_for_tool(&client, "demo:calculate").await;
    let db = refuse_audit_rows(&gw.dir.path().join("mcp-gateway.db"));
    let r = execute(&client, "demo:calculate", json!({"expression": "6*7"})).await;
    assert!(text(&r).contains("42"), "answered: {}", text(&r));
    let calculated = |rows: Vec<AuditRow>| {
        rows.into_iter()
            .filter(|r| r.tool_key.as_deref() == Some("demo:calculate"))
            .map(|r| r.outcome)
            .collect::<Vec<_>>()
    };
    let stored = gw.gateway().store().audit_tail(None, 5).unwrap();
    assert!(calculated(stored).is_empty(), "not in the store yet");
    let journaled = gw.gateway().store().journaled_backlog().unwrap();
    assert!(journaled >= 2, "its two rows are journaled: {journaled}");
    // An operator sees the call all the same: its outcome, which replaces
    // its start, marked as only in the journal.
    let journaled = gw.gateway().store().journaled_rows(None).unwrap();
    assert_eq!(calculated(journaled), [Outcome::Ok]);
    let tail = |gw: &Gateway| -> Vec<Value> {
        let out = std::process::Command::new(bin())
            .args(["audit", "tail", "--json", "--config"])
            .arg(gw.dir.path().join("gateway.toml"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
        rows.into_iter().filter(|r| r["toolKey"] == "demo:calculate").collect()
    };
    let shown = tail(&gw);
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert_eq!(
        (&shown[0]["outcome"], &shown[0]["journaled"]),
        (&json!("ok"), &json!(true))
    );

    db.execute_batch("DROP TRIGGER refuse_rows").unwrap();
    eventually(Duration::from_secs(15), "the journaled row", || async {
        (calculated(gw.last_rows(5).await) == [Outcome::Ok]).then_some(())
    })
    .await;
    assert!(calculated(gw.gateway().store().journaled_rows(None).unwrap()).is_empty());
    let shown = tail(&gw);
    assert_eq!(shown.len(), 1, "once, from the store: {shown:?}");
    assert!(shown[0].get("journaled").is_none(), "{shown:?}");
    gw.stop().await;
}

/// Strict audit on PostgreSQL: an answer whose outcome row the store will
/// not take is withheld, with the code that says why, and the row lands
/// once it does.
#[tokio::test]
#[ignore = "full tier: needs PostgreSQL (scripts/setup)"]
async fn an_answer_whose_row_cannot_be_written_is_withheld_and_the_row_kept() {
    let (config, db) = on_postgres();
    let mut gw = Gateway::start(&config).await;
    let client = gw.client().await;
    wait_for_tool(&client, "demo:calculate").await;
    psql(&db, REFUSE);
    psql(
        &db,
        "CREATE TRIGGER refuse_outcomes BEFORE INSERT ON audit_log FOR EACH ROW
         WHEN (NEW.tool_key = 'demo:calculate' AND NEW.outcome <> 'started') EXECUTE FUNCTION refuse()",
    );

    let r = execute(&client, "demo:calculate", json!({"expression": "6*7"})).await;
    assert_eq!(error_code(&r), "AUDIT_UNAVAILABLE");
    assert!(
        !text(&r).contains("42"),
        "the result is not in the withheld answer: {}",
        text(&r)
    );
    let started: Vec<_> = gw.last_rows(5).await.iter().map(summary).collect();
    assert!(
        started.contains(&("tool_execute".into(), Some("demo:calculate".into()), Outcome::Started)),
        "the call is on record as started: {started:?}"
    );

    psql(&db, "DROP TRIGGER refuse_outcomes ON audit_log");
    let row = eventually(Duration::from_secs(15), "the held row", || async {
        gw.last_rows(5)
            .await
            .into_iter()
            .find(|r| r.tool_key.as_deref() == Some("demo:calculate") && r.outcome == Outcome::Ok)
    })
    .await;
    assert_eq!(gw.rows_of(&row.request_id).await.len(), 1, "one row per call");
    gw.stop().await;
}

/// Refused before it runs (PostgreSQL): a store that will not take a call's
/// `started` row refuses the call at once, and the server never sees it.
#[tokio::test]
#[ignore = "full tier: needs PostgreSQL (scripts/setup)"]
async fn a_call_whose_start_cannot_be_recorded_is_refused_and_never_runs() {
    let (config, db) = on_postgres();
    let mut gw = Gateway::start(&config).await;
    let client = gw.client().await;
    wait_for_tool(&client, "demo:stats").await;
    psql(&db, REFUSE);
    psql(
        &db,
        "CREATE TRIGGER refuse_starts BEFORE INSERT ON audit_log FOR EACH ROW
         WHEN (NEW.outcome = 'started') EXECUTE FUNCTION refuse()",
    );
    let r = execute(&client, "demo:echo", json!({})).await;
    assert_eq!(error_code(&r), "AUDIT_UNAVAILABLE");
    psql(&db, "DROP TRIGGER refuse_starts ON audit_log");

    let stats = execute(&client, "demo:stats", json!({})).await;
    assert_eq!(
        stats.structured_content.unwrap()["calls"],
        json!(0),
        "the refused echo never reached the server (stats counts the calls before it)"
    );
    gw.stop().await;
}

/// A script's row leads its request, and each call it made is a row of its
/// own (`ID.1`, `ID.2`) with its own outcome.
#[tokio::test]
async fn a_scripts_inner_calls_are_rows_of_their_own_under_its_request() {
    let mut gw = Gateway::start(&config()).await;
    let client = gw.client().await;
    wait_for_tool(&client, "demo:calculate").await;
    let r = call(
        &client,
        "tool_execute",
        json!({"script": "const a = await tools.call('demo:calculate', { expression: '6*7' }); \
                          const b = await tools.call('demo:fail', {}); \
                          return [a.structuredContent.result, b.isError];"}),
    )
    .await;
    assert_eq!(r.structured_content.unwrap()["result"], json!([42, true]));

    let script = gw.last_rows(1).await.pop().unwrap();
    assert_eq!(
        (script.tool_key.as_deref(), script.outcome, script.result_count),
        (None, Outcome::Ok, Some(2)),
        "the script's own row is written last, when it ends"
    );
    let rows: Vec<_> = gw
        .rows_of(&script.request_id)
        .await
        .iter()
        .map(|r| (r.request_id.clone(), r.tool_key.clone(), r.outcome))
        .collect();
    let id = &script.request_id;
    assert_eq!(
        rows,
        [
            (id.clone(), None, Outcome::Ok),
            (format!("{id}.1"), Some("demo:calculate".into()), Outcome::Ok),
            (format!("{id}.2"), Some("demo:fail".into()), Outcome::ToolError),
        ]
    );
    gw.stop().await;
}
