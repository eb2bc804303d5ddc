//! Learning from use, end to end through the binary: a discovery, then a
//! successful execute of a tool it found, teaches the project; the next
//! discovery ranks that tool higher and says why. A failed execute teaches
//! nothing, another project learns nothing, the audit log links the two
//! calls, and `project reset-learning` forgets.

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::{Value, json};

fn explanation_of<'a>(results: &'a [Value], key: &str) -> Option<&'a str> {
    results
        .iter()
        .find(|r| r["toolKey"] == key)
        .and_then(|r| r["explanation"].as_str())
}

fn rank_of(results: &[Value], key: &str) -> Option<usize> {
    results.iter().position(|r| r["toolKey"] == key)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_found_and_run_tool_rises_for_those_words_in_that_project_only() {
    let gw = Gateway::start(&format!("{ANONYMOUS}{}", chaos_server("alpha", ""))).await;
    gw.cli(&["project", "create", "other"]);
    gw.cli(&["grant", "--project", "other", "--server", "alpha"]);
    let other = gw.issue_token("other");
    let client = gw.client().await;
    wait_for_tool(&client, "alpha:sha256").await;

    // "checksum" is in no tool's text; "text" is in many.
    let query = json!("checksum this text");
    let before = discover(&client, query.clone()).await;
    let found_at = rank_of(&before, "alpha:sha256").expect("found among the answers");
    assert!(found_at > 0, "not first yet: {before:?}");
    let r = execute(&client, "alpha:sha256", json!({ "text": "abc" })).await;
    assert_ne!(r.is_error, Some(true), "{r:?}");

    let after = discover(&client, query.clone()).await;
    assert_eq!(rank_of(&after, "alpha:sha256"), Some(0), "{after:?}");
    let explained = gw.explained("local", query.clone()).await;
    let why = explanation_of(&explained, "alpha:sha256").unwrap();
    assert!(why.contains("used once for 'checksum'"), "{why}");

    // Another project's history is its own.
    let theirs = gw.client_with_token(&other).await.unwrap();
    let seen = discover(&theirs, query.clone()).await;
    assert!(rank_of(&seen, "alpha:sha256") > Some(0), "{seen:?}");
    let seen = gw.explained("other", query.clone()).await;
    assert!(
        !explanation_of(&seen, "alpha:sha256").unwrap_or("").contains("used"),
        "{seen:?}"
    );

    // A failed call of a found tool teaches nothing.
    let failing = discover(&client, json!("please fail for me")).await;
    assert!(rank_of(&failing, "alpha:fail").is_some(), "{failing:?}");
    let r = execute(&client, "alpha:fail", json!({})).await;
    assert_eq!(r.is_error, Some(true));
    let again = gw.explained("local", json!("please fail for me")).await;
    assert!(
        !explanation_of(&again, "alpha:fail").unwrap_or("").contains("used"),
        "{again:?}"
    );

    // The audit log links the execute to the discovery that found its tool.
    let rows: Vec<Value> = eventually(Duration::from_secs(10), "audit rows", || async {
        let out = gw.cli(&["audit", "tail", "--project", "local", "-n", "50", "--json"]);
        let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
        let failed_run = |r: &Value| r["toolKey"] == "alpha:fail" && r["metaTool"] == "tool_execute";
        rows.iter().any(failed_run).then_some(rows)
    })
    .await;
    let run = rows
        .iter()
        .find(|r| r["metaTool"] == "tool_execute" && r["toolKey"] == "alpha:sha256")
        .unwrap();
    let found_by = rows
        .iter()
        .find(|r| r["requestId"] == run["follows"])
        .unwrap_or_else(|| panic!("the discovery it follows is logged: {rows:#?}"));
    assert_eq!(found_by["metaTool"], "tool_discovery");
    assert_eq!(found_by["queryTerms"], r#"[["checksum","text"]]"#);
    assert_eq!(run["rank"], found_at as u64 + 1);

    let shown: Value = serde_json::from_slice(&gw.cli(&["project", "show", "local", "--json"]).stdout).unwrap();
    assert_eq!(shown["learnedAssociations"], 2, "checksum and text -> sha256: {shown}");

    // Forgetting applies to the running gateway at its next request.
    let out = gw.cli(&["project", "reset-learning", "local"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let forgot = gw.explained("local", query).await;
    assert!(
        !explanation_of(&forgot, "alpha:sha256").unwrap_or("").contains("used"),
        "{forgot:?}"
    );
}

/// Every table of the SQLite store at `db` holding `needle` (case ignored) in a text or blob.
fn tables_holding(db: &std::path::Path, needle: &str) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut holding = Vec::new();
    for table in tables {
        let mut select = conn.prepare(&format!("SELECT * FROM \"{table}\"")).unwrap();
        let columns = select.column_count();
        let mut rows = select.query([]).unwrap();
        while let Some(row) = rows.next().unwrap() {
            let held = (0..columns).any(|i| match row.get_ref(i).unwrap() {
                rusqlite::types::ValueRef::Text(t) | rusqlite::types::ValueRef::Blob(t) => {
                    String::from_utf8_lossy(t).to_lowercase().contains(needle)
                }
                _ => false,
            });
            if held && !holding.contains(&table) {
                holding.push(table.clone());
            }
        }
    }
    holding
}

/// Issue 41: a credential typed into a discovery was kept (the learned
/// terms, the audit row's query terms, the memory of meanings) and quoted
/// in the explanations the project's other callers read. It is cut out of
/// the query before anything uses it.
#[tokio::test(flavor = "multi_thread")]
async fn a_credential_in_a_query_is_never_kept_or_quoted() {
    let gw = Gateway::start(&format!("{ANONYMOUS}{}", chaos_server("alpha", ""))).await;
    let client = gw.client().await;
    wait_for_tool(&client, "alpha:sha256").await;
    // Lower-case letters and digits: one search term, were it ever one.
    let secret = "q7x2m4n6p8r3t5v9k1w3y5z7b2d4f6h8j0l2";
    let query = json!(format!("checksum this text with ghp_{secret}"));
    let found = discover(&client, query.clone()).await;
    assert!(rank_of(&found, "alpha:sha256").is_some(), "{found:?}");
    let r = execute(&client, "alpha:sha256", json!({ "text": "abc" })).await;
    assert_ne!(r.is_error, Some(true), "{r:?}");

    // The project learned from the discovery, and says so.
    let again = eventually(Duration::from_secs(10), "the lesson", || async {
        let again = gw.explained("local", query.clone()).await;
        explanation_of(&again, "alpha:sha256")
            .is_some_and(|why| why.contains("used once"))
            .then_some(again)
    })
    .await;
    let shown = serde_json::to_string(&again).unwrap();
    assert!(!shown.contains(&secret[..12]), "an explanation quotes it: {shown}");

    gw.audit_folded().await;
    let rows = gw.cli(&["audit", "tail", "--project", "local", "-n", "50", "--json"]);
    let rows = String::from_utf8(rows.stdout).unwrap();
    assert!(rows.contains("checksum"), "the query's other terms are kept: {rows}");
    assert!(!rows.contains(&secret[..12]), "an audit row keeps it: {rows}");
    let db = gw.dir.path().join("mcp-gateway.db");
    assert_eq!(tables_holding(&db, &secret[..12]), Vec::<String>::new());
    assert!(!gw.log().contains(&secret[..12]), "the log keeps it");
}

fn relevance_of(results: &[Value], key: &str) -> Option<f64> {
    results
        .iter()
        .find(|r| r["toolKey"] == key)
        .and_then(|r| r["relevance"].as_f64())
}

/// One run is a hint, not a verdict: a caller who runs the wrong tool once
/// does not put it first for everyone, running it again in the same
/// session adds nothing, and only other sessions that agree lift it further.
#[tokio::test(flavor = "multi_thread")]
async fn one_wrong_run_is_a_hint_and_agreeing_sessions_lift_the_tool() {
    let gw = Gateway::start(&format!("{ANONYMOUS}{}", chaos_server("alpha", ""))).await;
    let careless = gw.client().await;
    wait_for_tool(&careless, "alpha:sha256").await;
    let query = json!("compute a hash of some text");
    let before = discover(&careless, query.clone()).await;
    assert_eq!(rank_of(&before, "alpha:sha256"), Some(0), "{before:?}");
    let unlearned = relevance_of(&before, "alpha:word_count").expect("the wrong tool is among the answers");
    assert!(
        rank_of(&before, "alpha:word_count") > Some(1),
        "the wrong tool starts below second: {before:?}"
    );

    // One session runs the wrong tool, twice.
    for _ in 0..2 {
        let r = execute(&careless, "alpha:word_count", json!({ "text": "abc" })).await;
        assert_ne!(r.is_error, Some(true), "{r:?}");
        discover(&careless, query.clone()).await;
    }
    let observer = gw.client().await;
    let after_one = discover(&observer, query.clone()).await;
    assert_eq!(
        rank_of(&after_one, "alpha:sha256"),
        Some(0),
        "one wrong run reorders nothing: {after_one:?}"
    );
    let hinted = relevance_of(&after_one, "alpha:word_count").unwrap();
    assert!(hinted > unlearned, "a hint still counts: {unlearned} -> {hinted}");
    assert_eq!(
        rank_of(&after_one, "alpha:word_count"),
        Some(1),
        "a hint brings the tool into view, below first: {after_one:?}"
    );
    let first = relevance_of(&after_one, "alpha:sha256").unwrap();
    assert!(
        hinted <= first,
        "nothing shows more relevance than the first: {hinted} > {first}"
    );
    let explained = gw.explained("local", query.clone()).await;
    let why = explanation_of(&explained, "alpha:word_count").unwrap();
    assert!(why.contains("used once for"), "one session is one use: {why}");

    // Five more sessions agree: the lift grows with the evidence.
    for _ in 0..5 {
        let agent = gw.client().await;
        let found = discover(&agent, query.clone()).await;
        assert!(rank_of(&found, "alpha:word_count").is_some(), "{found:?}");
        let r = execute(&agent, "alpha:word_count", json!({ "text": "abc" })).await;
        assert_ne!(r.is_error, Some(true), "{r:?}");
    }
    let agreed = discover(&observer, query.clone()).await;
    let lifted = relevance_of(&agreed, "alpha:word_count").unwrap();
    assert!(
        lifted > hinted + 0.05,
        "repeated, consistent use lifts: {hinted} -> {lifted}"
    );
    let explained = gw.explained("local", query.clone()).await;
    let why = explanation_of(&explained, "alpha:word_count").unwrap();
    assert!(why.contains("used 6 times for"), "{why}");
    assert_eq!(
        rank_of(&agreed, "alpha:word_count"),
        Some(0),
        "six sessions agreeing outweigh the words: {agreed:?}"
    );
}
