//! Code mode end to end: `tool_execute { script }` against the real binary
//! and the demo server. Each abuse is refused with its own code while the
//! gateway stays healthy; inner calls are `tool_execute`s in every respect
//! (what a project may not see is unknown, each call has an audit row
//! under the script's request id); cancelling the script cancels its calls.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use mcp_gateway::outcome::Outcome;
use rmcp::model::{CallToolRequestParams, CallToolResult, ClientRequest, Request};
use rmcp::service::{PeerRequestOptions, RunningService};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

type Client = RunningService<RoleClient, ()>;

/// One demo server, anonymous callers as "local", a short CPU budget (the
/// endless loop ends sooner), and project "quiet" without code mode.
fn config() -> String {
    format!(
        "{ANONYMOUS}[security.code_mode]\ncpu_ms = 500\n\n[security.projects.quiet.code_mode]\nenabled = false\n\n{}",
        chaos_server("demo", "")
    )
}

async fn script(client: &Client, script: &str) -> CallToolResult {
    call(client, "tool_execute", json!({ "script": script })).await
}

/// The `{result, logs, calls}` of a script that succeeded.
async fn ok(client: &Client, body: &str) -> Value {
    let r = script(client, body).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    r.structured_content.unwrap()
}

#[tokio::test]
async fn scripts_call_tools_in_parallel_and_return_only_their_answer() {
    let gw = Gateway::start(&config()).await;
    let client = gw.client().await;
    wait_for_tool(&client, "demo:calculate").await;

    let out = ok(
        &client,
        r#"
        const found = await tools.search("evaluate arithmetic", 3);
        console.log("found", found[0].toolKey, found[0].signature);
        const rs = await Promise.all([1, 2, 3].map((n) => tools.call("demo:calculate", { expression: `${n} * 10` })));
        return { sum: rs.reduce((s, r) => s + r.structuredContent.result, 0), text: rs[0].text };
        "#,
    )
    .await;
    assert_eq!(out["result"], json!({ "sum": 60, "text": "1 * 10 = 10" }), "{out}");
    assert_eq!(out["calls"], 4);
    let log = out["logs"][0].as_str().unwrap();
    assert!(
        log.starts_with("found demo:calculate (args: {expression: string}) => {result: number}"),
        "{log}"
    );

    // Discovery says what the call returns, for the model to write against.
    let results = discover(&client, json!("evaluate arithmetic")).await;
    let calc = results.iter().find(|r| r["toolKey"] == "demo:calculate").unwrap();
    assert_eq!(calc["returns"], "{result: number}");

    // A refused inner call rejects with the code tool_execute gives, and can be caught.
    let out = ok(
        &client,
        r#"
        try { await tools.call("demo:calculate", { expression: 3 }); } catch (e) { return e.code; }
        "#,
    )
    .await;
    assert_eq!(out["result"], "TOOL_VALIDATION_ERROR");

    // `servers` and /readyz say code mode is on, and for whom not.
    let ready = gw.readyz().await;
    assert_eq!(ready["code_mode"]["enabled"], true, "{ready}");
    assert_eq!(ready["code_mode"]["projects_off"], json!(["quiet"]));
    assert_eq!(ready["code_mode"]["limits"]["cpu_ms"], 500);
    let servers = String::from_utf8(gw.cli(&["servers"]).stdout).unwrap();
    assert!(servers.contains("code mode: on, off for quiet"), "{servers}");
}

#[tokio::test]
async fn abuse_is_refused_with_a_clear_error_and_the_gateway_stays_healthy() {
    let gw = Gateway::spawn(&config()).await;
    let client = gw.client().await;
    wait_for_tool(&client, "demo:calculate").await;
    let cases = [
        ("while (true) {}", "SCRIPT_CPU_LIMIT", "cpu_ms"),
        (
            "const a = []; for (;;) a.push(new Array(100000).fill(7));",
            "SCRIPT_MEMORY_LIMIT",
            "memory_mb",
        ),
        (
            "const f = (n) => f(n + 1) + 1; return f(0);",
            "SCRIPT_STACK_LIMIT",
            "stack_kb",
        ),
        (
            "return 'x'.repeat(100 * 1024 * 1024).length;",
            "SCRIPT_MEMORY_LIMIT",
            "memory_mb",
        ),
        ("return eval(\"import('fs')\");", "SCRIPT_ERROR", "eval is not defined"),
        ("return await import('fs');", "SCRIPT_ERROR", "fs"),
        ("import fs from 'fs';", "SCRIPT_SYNTAX_ERROR", "parse"),
        ("tools.call = () => ({ hijacked: true });", "SCRIPT_ERROR", "TypeError"),
        (
            "Object.setPrototypeOf(tools, { call: () => 1 });",
            "SCRIPT_ERROR",
            "TypeError",
        ),
        (
            "return tools.call.constructor('return process')();",
            "SCRIPT_ERROR",
            "TypeError",
        ),
        (
            "return Object.getPrototypeOf(async () => {}).constructor('return 1')();",
            "SCRIPT_ERROR",
            "TypeError",
        ),
        (
            "for (let i = 0; i < 10000; i++) { try { await tools.call('demo:calculate', { expression: '1' }); } catch (e) {} }",
            "SCRIPT_CALL_LIMIT",
            "max_calls",
        ),
        ("await new Promise(() => {});", "SCRIPT_NEVER_RESOLVES", "never"),
        ("return { f() {} }.f;", "SCRIPT_RESULT_NOT_JSON", "not JSON"),
    ];
    for (body, code, says) in cases {
        let started = Instant::now();
        let r = script(&client, body).await;
        assert_eq!(error_code(&r), code, "{body}: {r:?}");
        let message = r.structured_content.as_ref().unwrap()["error"]["message"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(message.contains(says), "{body}: {message}");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{body} took {:?}",
            started.elapsed()
        );
        // Still healthy: a plain call answers at once.
        let r = execute(&client, "demo:calculate", json!({ "expression": "2+2" })).await;
        assert_eq!(r.is_error, Some(false), "after {body}: {r:?}");
    }
    // The 10,000 calls stopped at the default cap of 200.
    let r = script(
        &client,
        "for (;;) await tools.call('demo:calculate', { expression: '1' });",
    )
    .await;
    assert_eq!(r.structured_content.unwrap()["calls"], 200);
    assert_eq!(gw.readyz().await["ready"], true);
    assert!(
        gw.metrics()
            .await
            .contains("mcp_gateway_scripts_total{outcome=\"SCRIPT_CPU_LIMIT\"} 1")
    );
}

#[tokio::test]
async fn inner_calls_are_tool_executes_hidden_tools_unknown_and_audited_under_the_script() {
    let gw = Gateway::start(&config()).await;
    gw.cli(&["project", "create", "narrow"]);
    gw.cli(&[
        "grant",
        "--project",
        "narrow",
        "--server",
        "demo",
        "--tool",
        "calculate",
    ]);
    gw.cli(&["project", "create", "quiet"]);
    gw.cli(&["grant", "--project", "quiet", "--server", "demo"]);
    let narrow = gw.client_with_token(&gw.issue_token("narrow")).await.unwrap();
    wait_for_tool(&narrow, "demo:calculate").await;

    // demo:echo exists, but not for this project: unknown, as outside a script.
    let outside = execute(&narrow, "demo:echo", json!({})).await;
    let inside = ok(
        &narrow,
        r#"
        const seen = (await tools.search("echo the arguments", 10)).map((f) => f.toolKey);
        try { await tools.call("demo:echo", {}); } catch (e) { return { seen, code: e.code, message: e.message }; }
        "#,
    )
    .await;
    assert_eq!(inside["result"]["code"], error_code(&outside));
    assert_eq!(inside["result"]["message"], text(&outside));
    assert!(
        !inside["result"]["seen"]
            .as_array()
            .unwrap()
            .contains(&json!("demo:echo")),
        "{inside}"
    );

    // Two calls: the script's row counts them, and theirs follow under its request id.
    let out = ok(
        &narrow,
        "const a = await tools.call('demo:calculate', { expression: '6*7' }); \
         const b = await tools.call('demo:calculate', { expression: 'nope(' }); return [a.isError, b.isError];",
    )
    .await;
    assert_eq!(out["result"], json!([false, true]));
    let rows: Vec<Value> = eventually(Duration::from_secs(5), "the script's audit rows", || async {
        let tail: Value = serde_json::from_slice(
            &gw.cli(&["audit", "tail", "--project", "narrow", "-n", "3", "--json"])
                .stdout,
        )
        .unwrap();
        let rows = tail.as_array().unwrap().clone();
        (rows.len() == 3 && rows.iter().all(|r| r["outcome"] != "started")).then_some(rows)
    })
    .await;
    let script_row = rows.iter().find(|r| r["toolKey"].is_null()).expect("the script's row");
    let parent = script_row["requestId"].as_str().unwrap();
    assert_eq!(
        (script_row["metaTool"].as_str(), script_row["resultCount"].as_u64()),
        (Some("tool_execute"), Some(2))
    );
    let mut inner: Vec<(String, String, String)> = rows
        .iter()
        .filter(|r| !r["toolKey"].is_null())
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap().to_string();
            (s("requestId"), s("toolKey"), s("outcome"))
        })
        .collect();
    inner.sort();
    assert_eq!(
        inner,
        [
            (format!("{parent}.1"), "demo:calculate".into(), "ok".into()),
            (format!("{parent}.2"), "demo:calculate".into(), "tool_error".into())
        ]
    );
    // `audit tail --request` shows the script as one request: its row, then its calls.
    let request: Value =
        serde_json::from_slice(&gw.cli(&["audit", "tail", "--request", parent, "--json"]).stdout).unwrap();
    let ids: Vec<&str> = request
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["requestId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [parent.to_string(), format!("{parent}.1"), format!("{parent}.2")]);

    // A project with code mode off is told so, and how to go on.
    let quiet = gw.client_with_token(&gw.issue_token("quiet")).await.unwrap();
    let r = script(&quiet, "return 1").await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENTS");
    assert!(text(&r).contains("scripts are off for project 'quiet'"), "{}", text(&r));
}

#[tokio::test]
async fn cancelling_a_script_cancels_its_calls() {
    let gw = Gateway::start(&config()).await;
    let client = ()
        .serve(rmcp::transport::StreamableHttpClientTransport::from_uri(
            gw.url.as_str(),
        ))
        .await
        .unwrap();
    wait_for_tool(&client, "demo:sleep").await;
    let params = CallToolRequestParams::new("tool_execute").with_arguments(
        json!({ "script": "await tools.call('demo:sleep', { ms: 30000 }); return 1;" })
            .as_object()
            .unwrap()
            .clone(),
    );
    let request = ClientRequest::CallToolRequest(Request::new(params));
    let handle = client
        .peer()
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    handle.cancel(Some("stop".into())).await.unwrap();
    cancel_reached(&client, "demo").await;
    scripts_end(&gw).await;
}

/// Waits, at most 30 s, until no script runs (`/readyz`): each one's
/// thread has stopped (one in a built-in stops when the built-in returns).
async fn scripts_end(gw: &Gateway) {
    eventually(Duration::from_secs(30), "every script's thread stopped", || async {
        (gw.readyz().await["code_mode"]["running"] == 0).then_some(())
    })
    .await;
}

/// `[http] requests_per_minute` charges each call a script makes to its
/// caller's one budget, so a script cannot multiply its caller's rate.
#[tokio::test]
async fn a_scripts_calls_are_charged_to_its_callers_request_rate() {
    let gw = Gateway::start(&format!("[http]\nrequests_per_minute = 6\nburst = 20\n\n{}", config())).await;
    let client = gw.client().await;
    wait_for_tool(&client, "demo:calculate").await;
    let out = ok(
        &client,
        r#"
        let ran = 0; const refused = [];
        for (let i = 0; i < 30; i++) {
          try { await tools.call("demo:calculate", { expression: "1+1" }); ran++; }
          catch (e) { refused.push([e.code, e.message]); }
        }
        return { ran, refused };
        "#,
    )
    .await;
    let ran = out["result"]["ran"].as_u64().unwrap();
    let refused = out["result"]["refused"].as_array().unwrap();
    // The burst of 20 less the requests before: the handshake, the wait, the script.
    assert!((5..20).contains(&ran), "{out}");
    assert_eq!(ran + refused.len() as u64, 30, "{out}");
    assert_eq!(refused[0][0], "RATE_LIMITED", "{out}");
    assert!(refused[0][1].as_str().unwrap().contains("requests_per_minute"), "{out}");
    // The budget is the caller's: its next request is refused too.
    let next =
        CallToolRequestParams::new("tool_discovery").with_arguments(json!({"query": "x"}).as_object().unwrap().clone());
    assert!(client.call_tool(next).await.is_err(), "over its rate after the script");
}

/// Scripts in flight are capped gateway-wide and per caller (each holds a
/// thread and its whole heap): past a cap a script is refused at once
/// with `SCRIPT_BUSY`, and its place comes back when one ends.
#[tokio::test]
async fn scripts_past_the_gateway_and_caller_caps_are_refused_with_script_busy() {
    let gw = Gateway::start(&format!(
        "{ANONYMOUS}[security.code_mode]\nmax_scripts = 2\nmax_scripts_per_caller = 1\n\n{}",
        chaos_server("demo", "")
    ))
    .await;
    let (a, b, c) = (gw.client().await, gw.client().await, gw.client().await);
    wait_for_tool(&a, "demo:sleep").await;
    let slow = "await tools.call('demo:sleep', { ms: 3000 }); return 'slept';";
    let (first, second, refused) = tokio::join!(script(&a, slow), script(&b, slow), async {
        tokio::time::sleep(Duration::from_millis(1000)).await;
        let own = script(&a, "return 1").await;
        let anyone = script(&c, "return 1").await;
        let ready = gw.readyz().await;
        (own, anyone, ready)
    });
    let (own, anyone, ready) = refused;
    assert_eq!(error_code(&own), "SCRIPT_BUSY", "{own:?}");
    assert!(text(&own).contains("max_scripts_per_caller"), "{}", text(&own));
    assert_eq!(error_code(&anyone), "SCRIPT_BUSY", "{anyone:?}");
    assert!(
        text(&anyone).contains("(max_scripts)") || text(&anyone).contains("] max_scripts)"),
        "{}",
        text(&anyone)
    );
    assert_eq!(ready["code_mode"]["running"], 2, "{ready}");
    for r in [first, second] {
        assert_eq!(r.structured_content.unwrap()["result"], "slept");
    }
    // Their places came back.
    assert_eq!(ok(&c, "return 2").await["result"], 2);
    assert_eq!(gw.readyz().await["code_mode"]["running"], 0);
}

/// A built-in that loops in C never reaches QuickJS's interrupt handler
/// (the default sort of a large array is one): the gateway reads the
/// script thread's CPU clock from outside and answers at `cpu_ms` plus a
/// second, while the thread keeps its place under the caps until it ends.
#[tokio::test]
async fn a_script_stuck_in_a_built_in_is_answered_for_from_outside_the_engine() {
    let gw = Gateway::start(&format!(
        "{ANONYMOUS}[security.code_mode]\ncpu_ms = 100\nmemory_mb = 512\nmax_memory_mb = 512\n\n{}",
        chaos_server("demo", "")
    ))
    .await;
    let client = gw.client().await;
    let started = Instant::now();
    let r = script(
        &client,
        "const a = new Array(3000000).fill(12345.678); a.sort(); a.sort(); a.sort(); return a.length;",
    )
    .await;
    let answered = started.elapsed();
    assert_eq!(error_code(&r), "SCRIPT_CPU_LIMIT", "{r:?} after {answered:?}");
    assert!(answered < Duration::from_secs(8), "answered after {answered:?}");
    // Told to stop, its thread leaves the engine's built-in and ends.
    scripts_end(&gw).await;
}

/// In a 2025 session a dropped connection is not a cancel (the client may
/// resume the stream, and cancels with `notifications/cancelled`): the
/// script runs on to its end, as docs/src/code-mode.md says.
#[tokio::test]
async fn a_2025_session_script_runs_on_when_its_connection_drops() {
    let gw = Gateway::start(&config()).await;
    let client = gw.client().await;
    wait_for_tool(&client, "demo:sleep").await;
    let post = |session: Option<String>, body: Value| {
        let mut req = reqwest::Client::new()
            .post(&gw.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18");
        if let Some(s) = session {
            req = req.header("mcp-session-id", s);
        }
        req.body(body.to_string()).send()
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    let r = post(None, init).await.unwrap();
    let session = r.headers()["mcp-session-id"].to_str().unwrap().to_string();
    let _ = r.text().await;
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post(Some(session.clone()), note).await.unwrap();
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "tool_execute",
        "arguments": {"script": "const r = await tools.call('demo:sleep', { ms: 1500 }); return r.text + ' and done';"}}});
    let r = post(Some(session), call).await.unwrap();
    assert_eq!(r.status(), 200);
    // The stream's head came; the connection goes before the answer.
    drop(r);
    // Its row, written when it ends: not cancelled, its one call made.
    let script = eventually(Duration::from_secs(10), "the script's row", || async {
        (gw.last_rows(1).await)
            .pop()
            .filter(|r| r.meta_tool == "tool_execute" && r.tool_key.is_none())
    })
    .await;
    assert_eq!((script.outcome, script.result_count), (Outcome::Ok, Some(1)));
}
