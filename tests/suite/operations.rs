//! Operating the gateway: health and readiness, Prometheus metrics, its
//! log under load, and progress and cancellation passing through
//! `tool_execute`.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use rmcp::model::{CallToolRequestParams, ClientRequest, ProgressNotificationParam, Request};
use rmcp::service::{NotificationContext, PeerRequestOptions};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};

async fn get(url: &str) -> (u16, String) {
    let r = reqwest::get(url).await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

#[tokio::test]
async fn health_readiness_and_metrics_over_http() {
    let gw = Gateway::spawn(&format!("{ANONYMOUS}{}", chaos_server("red", ""))).await;
    let base = gw.url.trim_end_matches("/mcp").to_string();
    let (status, body) = get(&format!("{base}/healthz")).await;
    assert_eq!((status, body.as_str()), (200, r#"{"status":"ok"}"#));

    let ready: Value = eventually(Duration::from_secs(10), "readiness", || async {
        let (status, body) = get(&format!("{base}/readyz")).await;
        (status == 200).then(|| serde_json::from_str(&body).unwrap())
    })
    .await;
    assert_eq!(ready["ready"], true);
    assert_eq!(ready["store"], "ok");
    let red = ready["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "red")
        .unwrap();
    assert_eq!(red["status"], "running");
    let index = ready["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "index")
        .unwrap();
    assert_eq!(
        index["status"], "unconfigured",
        "an unconfigured built-in does not hold readiness back"
    );

    let client = gw.client().await;
    eventually(Duration::from_secs(10), "red's tools", || async {
        let r = execute(&client, "red:calculate", json!({ "expression": "6*7" })).await;
        (r.is_error != Some(true)).then_some(())
    })
    .await;
    execute(&client, "red:fail", json!({})).await;
    call(&client, "tool_discovery", json!({ "query": "arithmetic" })).await;

    let (status, text) = get(&format!("{base}/metrics")).await;
    assert_eq!(status, 200);
    for line in [
        r#"mcp_gateway_calls_total{meta_tool="tool_execute",server="red",outcome="ok"}"#,
        r#"mcp_gateway_calls_total{meta_tool="tool_execute",server="red",outcome="tool_error"} 1"#,
        r#"mcp_gateway_calls_total{meta_tool="tool_discovery",server="",outcome="ok"} 1"#,
        r#"mcp_gateway_downstream_up{server="red"} 1"#,
        r#"mcp_gateway_downstream_restarts{server="red"} 0"#,
        r#"mcp_gateway_downstream_up{server="index"} 0"#,
        r#"mcp_gateway_execute_seconds_bucket{le="+Inf"}"#,
        r#"mcp_gateway_downstream_seconds_count{server="red"}"#,
        "mcp_gateway_catalog_tools ",
        "# TYPE mcp_gateway_discovery_seconds histogram",
    ] {
        assert!(text.contains(line), "{line} missing from /metrics:\n{text}");
    }
}

/// A client that keeps every progress notification it receives.
#[derive(Clone, Default)]
struct Recorder {
    seen: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for Recorder {
    async fn on_progress(&self, params: ProgressNotificationParam, _: NotificationContext<RoleClient>) {
        self.seen.lock().unwrap().push(params);
    }
}

/// `tool_execute` of `key`; rmcp gives the request a progress token of its own.
fn call_request(key: &str, arguments: Value) -> (ClientRequest, PeerRequestOptions) {
    let params = CallToolRequestParams::new("tool_execute").with_arguments(
        json!({ "toolKey": key, "arguments": arguments })
            .as_object()
            .unwrap()
            .clone(),
    );
    (
        ClientRequest::CallToolRequest(Request::new(params)),
        PeerRequestOptions::no_options(),
    )
}

#[tokio::test]
async fn progress_comes_back_and_cancellation_goes_down_through_tool_execute() {
    let gw = Gateway::start(&format!("{ANONYMOUS}{}", chaos_server("red", ""))).await;
    let recorder = Recorder::default();
    let client = recorder
        .clone()
        .serve(StreamableHttpClientTransport::from_uri(gw.url.as_str()))
        .await
        .unwrap();
    wait_for_tool(&client, "red:progress").await;

    let (request, options) = call_request("red:progress", json!({ "steps": 3 }));
    let handle = client.peer().send_cancellable_request(request, options).await.unwrap();
    let token = handle.progress_token.clone();
    let answer = handle.await_response().await.unwrap();
    assert!(format!("{answer:?}").contains("3 steps reported"), "{answer:?}");
    // The client handles notifications on tasks of their own: give them a moment.
    let mut seen = eventually(Duration::from_secs(5), "three progress notifications", || async {
        let seen = recorder.seen.lock().unwrap().clone();
        (seen.len() == 3).then_some(seen)
    })
    .await;
    // rmcp hands notifications to the handler concurrently, so their order is not kept.
    seen.sort_by(|a, b| a.progress.total_cmp(&b.progress));
    for (i, p) in seen.iter().enumerate() {
        assert_eq!(p.progress_token, token, "the client's own token");
        assert_eq!(p.progress, (i + 1) as f64);
        assert_eq!(p.total, Some(3.0));
        assert_eq!(p.message.as_deref(), Some(format!("step {} of 3", i + 1).as_str()));
    }

    // The client gives up on a long call: the downstream call is cancelled too.
    let (request, options) = call_request("red:sleep", json!({ "ms": 30000 }));
    let handle = client.peer().send_cancellable_request(request, options).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    handle.cancel(Some("the user pressed stop".into())).await.unwrap();
    cancel_reached(&client, "red").await;
}

#[tokio::test]
async fn a_result_over_the_server_limit_is_refused_clearly_and_the_gateway_goes_on() {
    let config = format!(
        "{ANONYMOUS}{}{}",
        chaos_server("red", "max_result_bytes = 1048576"),
        chaos_server("blue", "")
    );
    let gw = Gateway::start(&config).await;
    let client = gw.client().await;
    eventually(Duration::from_secs(10), "both servers", || async {
        let a = execute(&client, "red:calculate", json!({ "expression": "1+1" })).await;
        let b = execute(&client, "blue:calculate", json!({ "expression": "1+1" })).await;
        (a.is_error != Some(true) && b.is_error != Some(true)).then_some(())
    })
    .await;

    let r = execute(&client, "red:big", json!({ "kib": 2048 })).await;
    assert_eq!(error_code(&r), "TOOL_RESULT_TOO_LARGE");
    assert!(
        text(&r).contains("more than this server's limit of 1048576 bytes"),
        "{}",
        text(&r)
    );
    let small = execute(&client, "red:big", json!({ "kib": 512 })).await;
    assert_ne!(small.is_error, Some(true));
    // The default limit (32 MiB) lets a 2 MiB result through on the other server.
    let r = execute(&client, "blue:big", json!({ "kib": 2048 })).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    assert_eq!(text(&r).len(), 2048 * 1024);
    // A 50 MB result meets the default limit and is refused as clearly.
    let r = execute(&client, "blue:big", json!({ "kib": 50 * 1024 })).await;
    assert_eq!(error_code(&r), "TOOL_RESULT_TOO_LARGE");
    assert!(text(&r).contains("limit of 33554432 bytes"), "{}", text(&r));
    let r = execute(&client, "blue:calculate", json!({ "expression": "6*7" })).await;
    assert!(text(&r).contains("42"), "{}", text(&r));
    let r = execute(&client, "red:calculate", json!({ "expression": "6*7" })).await;
    assert!(text(&r).contains("42"), "{}", text(&r));
}

#[tokio::test]
async fn a_lazy_server_starts_on_the_first_call_and_stops_when_idle() {
    let lazy = chaos_server("lazy", "start = \"lazy\"\nidle_timeout_ms = 500");
    let first = Gateway::spawn(&format!("{ANONYMOUS}{lazy}")).await;
    let client = first.client().await;
    // Never listed before: started once to learn its tools, then stopped for lack of calls.
    wait_for_tool(&client, "lazy:calculate").await;
    eventually(Duration::from_secs(10), "lazy stopped while idle", || async {
        let ready = first.readyz().await;
        let lazy = ready["servers"]
            .as_array()?
            .iter()
            .find(|s| s["name"] == "lazy")?
            .clone();
        (lazy["status"] == "idle").then_some(())
    })
    .await;
    eventually(Duration::from_secs(5), "the child to exit", || async {
        children_of(first.pid()).is_empty().then_some(())
    })
    .await;
    wait_for_tool(&client, "lazy:calculate").await; // still discoverable while idle
    let r = execute(&client, "lazy:calculate", json!({ "expression": "6*7" })).await;
    assert_eq!(text(&r), "6*7 = 42", "the call starts it: {r:?}");
    assert_eq!(first.log().matches("downstream server running").count(), 2);
    let store = first.dir.path().join("mcp-gateway.db");
    drop(client);

    // Another gateway on the same store: the tools are known, nothing is started until a call.
    let second = Gateway::spawn(&format!("{ANONYMOUS}[store]\npath = \"{}\"\n\n{lazy}", store.display())).await;
    let client = second.client().await;
    wait_for_tool(&client, "lazy:calculate").await;
    assert!(children_of(second.pid()).is_empty(), "started before any call");
    let servers = second.cli(&["servers", "--json"]);
    let servers: Value = serde_json::from_slice(&servers.stdout).unwrap();
    let row = servers
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "lazy")
        .unwrap()
        .clone();
    assert_eq!(row["status"], "idle", "{row}");
    let r = execute(&client, "lazy:calculate", json!({ "expression": "2+2" })).await;
    assert_eq!(text(&r), "2+2 = 4", "{r:?}");
    assert_eq!(children_of(second.pid()).len(), 1);
}

#[tokio::test]
async fn each_token_has_its_own_request_rate() {
    let limits = "[http]\nrequests_per_minute = 60\nburst = 3\n\n";
    let gw = Gateway::start(&format!("{ANONYMOUS}{limits}{}", chaos_server("red", ""))).await;
    let (a, b) = (gw.issue_token("local"), gw.issue_token("local"));
    let http = reqwest::Client::new();
    let post = |token: Option<&str>, body: Value| {
        let mut request = http
            .post(&gw.url)
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(t) = token {
            request = request.bearer_auth(t);
        }
        request.send()
    };
    let ping = json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" });
    for _ in 0..3 {
        assert_ne!(
            post(Some(&a), ping.clone()).await.unwrap().status(),
            429,
            "within the burst"
        );
    }
    let refused = post(Some(&a), ping.clone()).await.unwrap();
    assert_eq!(refused.status(), 429);
    assert_eq!(refused.headers()["retry-after"], "1");
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32029, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("requests_per_minute"),
        "{body}"
    );

    assert_ne!(
        post(Some(&b), ping.clone()).await.unwrap().status(),
        429,
        "another token, another budget"
    );
    assert_ne!(
        post(None, ping.clone()).await.unwrap().status(),
        429,
        "anonymous callers share their own"
    );
    let note = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    assert_ne!(post(Some(&a), note).await.unwrap().status(), 429, "only requests count");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_ne!(post(Some(&a), ping).await.unwrap().status(), 429, "the budget refills");
}

/// A password or API key in a server's URL reaches no log line, neither the
/// `servers` command nor the console; the host still says which server it is.
#[tokio::test]
async fn a_servers_url_password_and_api_key_are_masked_everywhere() {
    // Port 9 refuses at once: the server fails with a transport error that quotes its URL.
    let url = "http://alice:hunter2@127.0.0.1:9/mcp?api_key=sk-live-XYZ&x=1";
    let gw = Gateway::start(&format!("{ANONYMOUS}[[servers]]\nname = \"remote\"\nurl = \"{url}\"\n")).await;
    let masked = "http://alice:***@127.0.0.1:9/mcp?api_key=***&x=1";
    let shows_no_secret = |what: &str, text: &str| {
        for secret in ["hunter2", "sk-live-XYZ"] {
            assert!(!text.contains(secret), "{what} shows {secret}:\n{text}");
        }
        assert!(text.contains(masked), "{what} does not name the server's URL:\n{text}");
    };
    let failed = gw.wait_log("downstream server failed", Duration::from_secs(10)).await;
    assert!(failed.is_some(), "{}", gw.log());

    let out = gw.cli(&["servers"]);
    shows_no_secret("`servers`", &String::from_utf8(out.stdout).unwrap());
    for secret in ["hunter2", "sk-live-XYZ"] {
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains(secret),
            "`servers` logs {secret}"
        );
    }
    let listed: Value = serde_json::from_slice(&gw.cli(&["servers", "--json"]).stdout).unwrap();
    let remote = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "remote")
        .unwrap();
    assert_eq!(remote["status"], "failed");
    shows_no_secret("`servers --json` transport", remote["transport"].as_str().unwrap());
    shows_no_secret("`servers --json` error", remote["error"].as_str().unwrap());

    let out = gw.cli(&["token", "issue", "--admin", "--label", "test", "--json"]);
    let admin: Value = serde_json::from_slice(&out.stdout).unwrap();
    let admin = admin["token"].as_str().unwrap();
    let console = |path: &str| {
        let url = format!("{}/console/api/{path}", gw.url.trim_end_matches("/mcp"));
        async move {
            let r = reqwest::Client::new().get(url).bearer_auth(admin).send().await.unwrap();
            assert_eq!(r.status(), 200);
            r.text().await.unwrap()
        }
    };
    let overview = console("overview").await;
    shows_no_secret("the console's overview", &overview);
    let server: Value = serde_json::from_str(&console("servers/remote").await).unwrap();
    shows_no_secret("the console's server page", &server.to_string());
    assert!(
        server["server"]["lastError"]["message"]
            .as_str()
            .unwrap()
            .contains(masked),
        "{server}"
    );

    shows_no_secret("the log", &gw.log());
}

/// A first start on the shipped `gateway.toml` says in a few lines where it
/// listens, each server and its status, which search is in force and what to
/// do next; the rest (each migration, rmcp's peer details, the demo's
/// answer to a subscription it does not offer) stays at debug.
#[tokio::test]
async fn a_first_start_on_the_shipped_config_is_short_and_says_what_next() {
    // The binary, as a newcomer starts it: the shipped config runs the
    // gateway's own executable (`${MCP_GATEWAY_EXE}`) as its demo server.
    let gw = Gateway::spawn(include_str!("../../gateway.toml")).await;
    gw.wait_log("downstream server running server=demo", Duration::from_secs(20))
        .await
        .unwrap_or_else(|| panic!("the demo server came up:\n{}", gw.log()));
    // The tests run offline: the model fetch's refusal is the one warning expected.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let log = gw.log();
    let lines: Vec<&str> = log.lines().filter(|l| !l.contains("embedding model")).collect();
    for needle in [
        "store created",
        "mcp-gateway starting",
        "listening on http://",
        "next: point an MCP client",
        "search:",
    ] {
        assert!(log.contains(needle), "{needle} is said at start:\n{log}");
    }
    assert!(
        !log.contains("WARN") || lines.iter().all(|l| !l.contains("WARN")),
        "no warning at start:\n{log}"
    );
    assert!(
        !log.contains("peer_info") && !log.contains("subscriptions/listen"),
        "{log}"
    );
    assert_eq!(
        log.matches("store created").count() + log.matches("store migrated").count(),
        1,
        "{log}"
    );
    assert!(lines.len() <= 8, "a start in a few lines, not {}:\n{log}", lines.len());
}

/// Busy logging is written in batches (a thread of its own holds lines
/// back for a few milliseconds): no line is lost or cut, whatever the load.
#[tokio::test(flavor = "multi_thread")]
async fn busy_logging_is_batched_and_loses_no_line() {
    let gw = Gateway::spawn(&format!("{ANONYMOUS}{}", chaos_server("red", ""))).await;
    let client = gw.client().await;
    wait_for_tool(&client, "red:echo").await;
    let calls = 400;
    let answers = futures::future::join_all((0..calls).map(|x| execute(&client, "red:echo", json!({ "x": x })))).await;
    assert!(answers.iter().all(|a| a.is_error != Some(true)));
    let writer = std::fs::read_dir(format!("/proc/{}/task", gw.pid()))
        .unwrap()
        .flatten()
        .any(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == "log-writer"));
    assert!(writer, "{calls} calls at once never made logging busy");
    let access = |log: &str| {
        log.lines()
            .filter(|l| l.contains("mcp_gateway::calls") && l.contains("tool_key=\"red:echo\""))
            .filter(|l| l.contains(" latency_us="))
            .count()
    };
    eventually(Duration::from_secs(5), "every call's access line, whole", || async {
        (access(&gw.log()) == calls).then_some(())
    })
    .await;
}
