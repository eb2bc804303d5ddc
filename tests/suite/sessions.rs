//! Sessions on the streamable HTTP listener belong to the caller that
//! opened them (issue 32): every message on a session, of every kind and
//! method, is refused to anyone else as if the session did not exist; a
//! caller's sessions are capped; session ids and payloads stay out of the
//! log even at `RUST_LOG=debug`.

use std::time::Duration;

use crate::common;

use common::*;
use reqwest::StatusCode;
use serde_json::{Value, json};

/// One client for the raw requests: building one per request (its TLS
/// roots) cost more than the request, 300 times over. It keeps no idle
/// connection, which another test's runtime could not drive.
static HTTP: std::sync::LazyLock<reqwest::Client> =
    std::sync::LazyLock::new(|| reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap());

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// Two projects, each granted the demo server; no anonymous access.
async fn two_projects(http: &str) -> (Gateway, String, String) {
    two_projects_as(false, http).await
}

/// [`two_projects`], the binary spawned with debug logging when `spawn`:
/// for what its log says.
async fn two_projects_as(spawn: bool, http: &str) -> (Gateway, String, String) {
    let config = format!("{http}{}", chaos_server("demo", ""));
    let gw = if spawn {
        Gateway::spawn_with(&config, &[("RUST_LOG", "debug")]).await
    } else {
        Gateway::start(&config).await
    };
    gw.cli(&["project", "create", "victim"]);
    gw.cli(&["project", "create", "stranger"]);
    gw.cli(&["grant", "--project", "victim", "--server", "demo"]);
    gw.cli(&["grant", "--project", "stranger", "--server", "demo"]);
    let (v, s) = (gw.issue_token("victim"), gw.issue_token("stranger"));
    (gw, v, s)
}

/// A raw HTTP request on `/mcp`: `method`, optional bearer token, session and body.
async fn send(
    gw: &Gateway,
    method: reqwest::Method,
    token: Option<&str>,
    session: Option<&str>,
    body: Option<&str>,
) -> (StatusCode, String) {
    let mut req = HTTP
        .request(method, &gw.url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18");
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(s) = session {
        req = req.header("mcp-session-id", s);
    }
    if let Some(b) = body {
        req = req.header("content-type", "application/json").body(b.to_string());
    }
    let r = req.send().await.unwrap();
    let status = r.status();
    // An SSE stream (GET) stays open; its head is enough.
    let text = if status == StatusCode::OK
        && r.headers()
            .get("content-type")
            .is_some_and(|t| t == "text/event-stream")
        && body.is_none()
    {
        String::new()
    } else {
        r.text().await.unwrap_or_default()
    };
    (status, text)
}

/// Opens a session as `token`; returns its id.
async fn open(gw: &Gateway, token: &str) -> String {
    let r = HTTP
        .post(&gw.url)
        .bearer_auth(token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(INIT)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let id = r.headers()["mcp-session-id"].to_str().unwrap().to_string();
    let _ = r.text().await;
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let (status, _) = send(gw, reqwest::Method::POST, Some(token), Some(&id), Some(note)).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    id
}

/// Every kind of message a client sends on a session.
fn messages() -> Vec<(reqwest::Method, Option<Value>)> {
    let post = |v: Value| (reqwest::Method::POST, Some(v));
    vec![
        (reqwest::Method::GET, None),
        post(json!({"jsonrpc": "2.0", "id": 7, "method": "ping"})),
        post(json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list"})),
        post(json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "tool_discovery", "arguments": {"query": "echo"}}})),
        post(json!({"jsonrpc": "2.0", "id": 10, "method": "resources/list"})),
        post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})),
        post(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}})),
        post(json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})),
        // Answers to the server's own requests: an accepted elicitation, an error, a ping's.
        post(json!({"jsonrpc": "2.0", "id": 0, "result": {"action": "accept", "content": {"confirm": true}}})),
        post(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": "no"}})),
        post(json!({"jsonrpc": "2.0", "id": 2, "result": {}})),
        // A request whose credential is in its own _meta.
        post(json!({"jsonrpc": "2.0", "id": 11, "method": "ping", "params": {"_meta": {"token": "STRANGER"}}})),
        (reqwest::Method::DELETE, None),
    ]
}

#[tokio::test]
async fn a_session_answers_only_the_caller_that_opened_it() {
    let (gw, victim, stranger) = two_projects_as(true, "").await;
    let session = open(&gw, &victim).await;
    let forged = "7f0c2a5e-2d55-4d8e-9a37-5f7a1c4b9e21";
    // (who, token, expected status): none and a bad token are refused as
    // callers; another project's valid token finds no such session.
    let strangers = [
        ("no credential", None, StatusCode::UNAUTHORIZED),
        ("a bad token", Some("mgw_1_not-a-real-token"), StatusCode::UNAUTHORIZED),
        ("another project", Some(stranger.as_str()), StatusCode::NOT_FOUND),
    ];
    for (method, body) in messages() {
        let body = body.map(|b| b.to_string().replace("STRANGER", &stranger));
        for (who, token, expected) in strangers {
            // With no header, a request's own _meta.token (the stranger's) is its credential.
            let own = body.as_deref().is_some_and(|b| b.contains("_meta"));
            let expected = if own && token.is_none() {
                StatusCode::NOT_FOUND
            } else {
                expected
            };
            let (status, text) = send(&gw, method.clone(), token, Some(&session), body.as_deref()).await;
            assert_eq!(status, expected, "{who}: {method} {body:?}: {text}");
            if expected == StatusCode::NOT_FOUND {
                // Exactly what a wrong id gets.
                let (wrong, wrong_text) = send(&gw, method.clone(), token, Some(forged), body.as_deref()).await;
                assert_eq!(
                    (status, text.as_str()),
                    (wrong, wrong_text.as_str()),
                    "{who}: {method} {body:?}"
                );
            }
        }
        if method == reqwest::Method::DELETE {
            continue;
        }
        // The owner's same message goes through: the refusals above are about who, not what.
        let body = body.map(|b| b.replace(&stranger, &victim));
        let (status, text) = send(&gw, method.clone(), Some(&victim), Some(&session), body.as_deref()).await;
        assert!(status.is_success(), "the owner: {method} {body:?}: {status} {text}");
    }
    // Nothing a stranger sent ended or disturbed the session.
    let ping = r#"{"jsonrpc":"2.0","id":99,"method":"ping"}"#;
    let (status, text) = send(&gw, reqwest::Method::POST, Some(&victim), Some(&session), Some(ping)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(text.contains("\"id\":99"), "{text}");
    // The owner may end it; then it is gone for them too. 200, not rmcp's
    // 202: the official Python SDK warns on anything but 200, 204 or 405.
    let (status, _) = send(&gw, reqwest::Method::DELETE, Some(&victim), Some(&session), None).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = send(&gw, reqwest::Method::POST, Some(&victim), Some(&session), Some(ping)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Session ids never reach the log, even at debug; a hash prefix may.
    let log = gw.log();
    assert!(log.contains("DEBUG"), "the gateway ran at debug");
    assert!(!log.contains(&session), "a session id in the log:\n{log}");
    for token in [&victim, &stranger] {
        assert!(!log.contains(token.as_str()), "a token in the log");
    }
}

/// Every method a client may send (MCP 2025-06-18 and 2026-07-28).
const METHODS: &[&str] = &[
    "ping",
    "initialize",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "tasks/get",
    "tasks/list",
    "tasks/cancel",
    "tasks/result",
    "subscriptions/listen",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/roots/list_changed",
    "no/such/method",
];

/// A property over many generated messages: whatever its kind, method, id
/// or params, a message on a session with someone else's credential is
/// refused before rmcp reads it (401 without a valid credential, else 404).
#[tokio::test]
async fn generated_messages_with_a_wrong_credential_never_reach_the_session() {
    let (gw, victim, stranger) = two_projects("").await;
    let session = open(&gw, &victim).await;
    // Reproducible: the seed is fixed, and each failure names its case.
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut next = |n: usize| rng.below(n);
    for case in 0..300 {
        let method = METHODS[next(METHODS.len())];
        let id = match next(3) {
            0 => json!(next(1000)),
            1 => json!(format!("req-{}", next(1000))),
            _ => json!(0),
        };
        let params = match next(3) {
            0 => json!({}),
            1 => json!({"name": "tool_execute", "arguments": {"toolKey": "demo:crash", "arguments": {}}}),
            _ => json!({"requestId": id, "_meta": {"progressToken": 1}}),
        };
        let (http_method, body) = match next(6) {
            0 => (reqwest::Method::GET, None),
            1 => (reqwest::Method::DELETE, None),
            2 => (
                reqwest::Method::POST,
                Some(json!({"jsonrpc": "2.0", "method": method, "params": params})),
            ),
            3 => (
                reqwest::Method::POST,
                Some(json!({"jsonrpc": "2.0", "id": id, "result": {"action": "accept"}})),
            ),
            4 => (
                reqwest::Method::POST,
                Some(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32000, "message": "x"}})),
            ),
            _ => (
                reqwest::Method::POST,
                Some(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})),
            ),
        };
        let (token, expected) = match next(3) {
            0 => (None, StatusCode::UNAUTHORIZED),
            1 => (Some("mgw_9_forged"), StatusCode::UNAUTHORIZED),
            _ => (Some(stranger.as_str()), StatusCode::NOT_FOUND),
        };
        let body = body.map(|b| b.to_string());
        let (status, text) = send(&gw, http_method.clone(), token, Some(&session), body.as_deref()).await;
        assert_eq!(status, expected, "case {case}: {http_method} {body:?}: {text}");
    }
    // None of it reached the session: it is open, and its server never ran `crash`.
    let ping = r#"{"jsonrpc":"2.0","id":99,"method":"ping"}"#;
    let (status, text) = send(&gw, reqwest::Method::POST, Some(&victim), Some(&session), Some(ping)).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let ready = gw.readyz().await;
    assert_eq!(
        ready["servers"][0]["restarts"], 0,
        "a stranger's call to crash ran: {ready}"
    );
}

#[tokio::test]
async fn debug_logging_never_prints_arguments_or_results() {
    let (gw, victim, _) = two_projects_as(true, "").await;
    let client = gw.client_with_token(&victim).await.unwrap();
    wait_for_tool(&client, "demo:echo").await;
    let marker = "payload-marker-5b0c9e";
    let r = execute(&client, "demo:echo", json!({"text": marker})).await;
    assert!(text(&r).contains(marker), "the call ran: {}", text(&r));
    let log = gw.log();
    assert!(log.contains("DEBUG"), "the gateway ran at debug");
    assert!(!log.contains(marker), "a tool argument or result in the log:\n{log}");
    assert!(!log.contains("peer_info"), "rmcp's peer details in the log");
}

/// An ended session is not kept to be told of changes: with a catalog and
/// grants that never change (anonymous callers, nothing edited), each
/// ended session's peer stayed, the soak's creep.
#[tokio::test]
async fn ended_sessions_are_not_kept_as_listeners() {
    let gw = Gateway::spawn(&format!("{ANONYMOUS}{}", chaos_server("demo", ""))).await;
    for _ in 0..5 {
        gw.client().await.cancel().await.unwrap();
    }
    eventually(Duration::from_secs(10), "the five sessions ended", || async {
        gw.metrics().await.contains("mcp_gateway_sessions_open 0").then_some(())
    })
    .await;
    // The next session's listener is the only one: the ended ones went
    // when it came (a session whose end is not seen yet goes with the next).
    eventually(Duration::from_secs(10), "one listener", || async {
        let client = gw.client().await;
        let metrics = gw.metrics().await;
        client.cancel().await.unwrap();
        metrics.contains("mcp_gateway_change_listeners 1\n").then_some(())
    })
    .await;
}

#[tokio::test]
async fn sessions_are_capped_per_caller_and_in_all() {
    let http = "[http]\nmax_sessions = 5\nmax_sessions_per_caller = 3\n\n";
    let (gw, victim, stranger) = two_projects_as(true, http).await;
    let mut mine = Vec::new();
    for _ in 0..3 {
        mine.push(open(&gw, &victim).await);
    }
    let refused = |status: StatusCode, text: &str, expected: StatusCode, limit: &str| {
        assert_eq!(status, expected, "{text}");
        let body: Value = serde_json::from_str(text).unwrap();
        assert_eq!(body["error"]["code"], -32030, "{text}");
        assert!(body["error"]["message"].as_str().unwrap().contains(limit), "{text}");
    };
    let (status, text) = send(&gw, reqwest::Method::POST, Some(&victim), None, Some(INIT)).await;
    refused(status, &text, StatusCode::TOO_MANY_REQUESTS, "max_sessions_per_caller");
    // Another caller still gets in, up to the gateway's limit.
    open(&gw, &stranger).await;
    open(&gw, &stranger).await;
    let (status, text) = send(&gw, reqwest::Method::POST, Some(&stranger), None, Some(INIT)).await;
    refused(status, &text, StatusCode::SERVICE_UNAVAILABLE, "max_sessions");
    // Ending a session makes room again.
    let (status, _) = send(&gw, reqwest::Method::DELETE, Some(&victim), Some(&mine[0]), None).await;
    assert!(status.is_success());
    open(&gw, &victim).await;
    let metrics = gw.metrics().await;
    assert!(
        metrics.contains("mcp_gateway_sessions_refused_total{limit=\"caller\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("mcp_gateway_sessions_refused_total{limit=\"gateway\"} 1"),
        "{metrics}"
    );
    assert!(metrics.contains("mcp_gateway_sessions_open 5"), "{metrics}");
}
