//! End to end: the real binary on 127.0.0.1, real downstream MCP servers
//! (the demo server with its test tools), the rmcp client upstream.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use rmcp::ClientServiceExt;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, GetPromptRequestParams, ReadResourceRequestParams};
use rmcp::service::ClientLifecycleMode;
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
use serde_json::{Value, json};

/// The two meta-tools, and beside them each tool that carries an MCP App
/// (the chaos servers' `echo`): hosts render an App only for a tool they listed.
#[tokio::test]
async fn tools_list_is_the_two_meta_tools_and_the_apps() {
    let gw = Gateway::start(&two_servers()).await;
    let client = gw.client().await;
    wait_for_tool(&client, "beta:calculate").await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, ["tool_discovery", "tool_execute", "alpha__echo", "beta__echo"]);
    let size = serde_json::to_string(&tools[..2]).unwrap().len();
    assert!(
        size < 2400,
        "the meta-tools should stay under ~600 tokens, are {size} bytes"
    );
    let app = tools[2].meta.as_ref().unwrap();
    assert_eq!(app["ui"]["resourceUri"], "ui://mcp-gateway/alpha/widget/card.html");
}

#[tokio::test]
async fn discovery_finds_the_right_tool_in_plain_language() {
    let gw = Gateway::start(&two_servers()).await;
    let client = gw.client().await;
    wait_for_tool(&client, "alpha:convert_temperature").await;
    wait_for_tool(&client, "beta:convert_temperature").await;

    let cases = [
        ("how warm is 30 degrees celsius in fahrenheit", "convert_temperature"),
        ("multiply 17 by 23", "calculate"),
        ("fingerprint this text with a secure hash", "sha256"),
        ("what time is it right now", "current_time"),
        ("how many words are in this paragraph", "word_count"),
    ];
    for (query, tool) in cases {
        let results = discover(&client, json!(query)).await;
        let top = &results[0];
        assert!(
            top["toolKey"].as_str().unwrap().ends_with(&format!(":{tool}")),
            "{query}: {results:#?}"
        );
        assert!(top["inputSchema"].is_object());
        let relevance = top["relevance"].as_f64().unwrap();
        assert!(relevance > 0.0 && relevance <= 1.0);
    }
    let results = discover(&client, json!("calculate")).await;
    assert_eq!(results.len(), 2, "both servers' calculate tools: {results:#?}");

    // maxResults is honoured and validated.
    let r = call(&client, "tool_discovery", json!({"query": "text", "maxResults": 1})).await;
    assert_eq!(r.structured_content.unwrap()["results"].as_array().unwrap().len(), 1);
    let r = call(&client, "tool_discovery", json!({"query": "text", "maxResults": 99})).await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENTS");
    assert!(text(&r).contains("maxResults"), "{}", text(&r));
}

#[tokio::test]
async fn execute_returns_the_downstream_result_verbatim() {
    let gw = Gateway::start(&two_servers()).await;
    let client = gw.client().await;
    wait_for_tool(&client, "alpha:calculate").await;

    // The same call, straight to a demo server with no gateway in between.
    let direct = ()
        .serve(
            TokioChildProcess::new(tokio::process::Command::new(bin()).configure(|c| {
                c.args(["demo-server", "--chaos"]);
            }))
            .unwrap(),
        )
        .await
        .unwrap();
    for (tool, args) in [
        ("calculate", json!({"expression": "(2 + 3) * 4"})),
        ("word_count", json!({"text": "one two\nthree"})),
        ("fail", json!({"message": "broken on purpose"})),
    ] {
        let params = CallToolRequestParams::new(tool).with_arguments(args.as_object().unwrap().clone());
        let expected = direct.call_tool(params).await.unwrap();
        let through = execute(&client, &format!("alpha:{tool}"), args).await;
        assert_eq!(
            serde_json::to_value(&through).unwrap(),
            serde_json::to_value(&expected).unwrap(),
            "{tool} must come back unchanged"
        );
    }
    let failed = execute(&client, "alpha:fail", json!({})).await;
    assert_eq!(
        failed.is_error,
        Some(true),
        "a downstream tool error stays a tool result"
    );
    direct.cancel().await.unwrap();
}

#[tokio::test]
async fn caller_meta_is_forwarded_but_identity_and_lifecycle_are_not() {
    let gw = Gateway::start(&two_servers()).await;
    let client = gw.client().await;
    wait_for_tool(&client, "alpha:echo").await;
    let token = gw.issue_token("local");
    let mut params = CallToolRequestParams::new("tool_execute").with_arguments(
        json!({"toolKey": "alpha:echo", "arguments": {"x": 1}})
            .as_object()
            .unwrap()
            .clone(),
    );
    params.meta = Some(
        json!({"traceparent": "00-abc-def-01", "token": token, "projectId": "local"})
            .as_object()
            .unwrap()
            .clone()
            .into(),
    );
    let r = client.call_tool(params).await.unwrap();
    let seen = r.structured_content.unwrap();
    assert_eq!(seen["arguments"], json!({"x": 1}));
    assert_eq!(seen["meta"]["traceparent"], "00-abc-def-01");
    assert!(
        seen["meta"].get("token").is_none(),
        "the caller's token must not leak downstream: {seen}"
    );
    assert!(seen["meta"].get("projectId").is_none(), "{seen}");
    let secret = token.rsplit('_').next().unwrap();
    assert!(!gw.log().contains(secret), "tokens never reach the log");
}

#[tokio::test]
async fn schema_violations_are_refused_before_the_downstream_sees_them() {
    let gw = Gateway::start(&two_servers()).await;
    let client = gw.client().await;
    wait_for_tool(&client, "alpha:stats").await;

    let r = execute(
        &client,
        "alpha:convert_temperature",
        json!({"value": "hot", "from": "X"}),
    )
    .await;
    assert_eq!(error_code(&r), "TOOL_VALIDATION_ERROR");
    let violations = r.structured_content.as_ref().unwrap()["error"]["violations"]
        .as_array()
        .unwrap()
        .clone();
    assert!(violations.len() >= 3, "every violation at once: {violations:#?}");
    let all = serde_json::to_string(&violations).unwrap();
    assert!(
        all.contains("/value") && all.contains("/from") && all.contains("\\\"to\\\""),
        "{all}"
    );

    let r = execute(&client, "alpha:sleep", json!({"ms": -5})).await;
    assert_eq!(error_code(&r), "TOOL_VALIDATION_ERROR");

    let stats = execute(&client, "alpha:stats", json!({})).await;
    assert_eq!(
        stats.structured_content.unwrap()["calls"],
        0,
        "no refused call reached the server"
    );
}

#[tokio::test]
async fn unknown_keys_and_meta_tools_get_clear_errors() {
    let gw = Gateway::start(&two_servers()).await;
    let client = gw.client().await;
    wait_for_tool(&client, "alpha:calculate").await;
    for key in ["alpha:nope", "nobody:calculate", "calculate", ""] {
        let r = execute(&client, key, json!({})).await;
        assert_eq!(error_code(&r), "TOOL_NOT_FOUND", "{key}");
        assert!(
            text(&r).contains("tool_discovery"),
            "the error says what to do: {}",
            text(&r)
        );
    }
    let r = call(&client, "tool_execute", json!({"arguments": {}})).await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENTS");
    assert!(text(&r).contains("toolKey"), "{}", text(&r));

    let err = client
        .call_tool(CallToolRequestParams::new("calculate"))
        .await
        .expect_err("only the meta-tools exist upstream");
    assert!(err.to_string().contains("tool_discovery"), "{err}");
}

#[tokio::test]
async fn resources_and_prompts_pass_through_namespaced() {
    let gw = Gateway::start(&two_servers()).await;
    let client = gw.client().await;
    wait_for_tool(&client, "alpha:calculate").await;
    wait_for_tool(&client, "beta:calculate").await;

    let resources = client.list_all_resources().await.unwrap();
    let uris: Vec<_> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert!(uris.contains(&"mcp-gateway://alpha/demo://readme"), "{uris:?}");
    assert!(uris.contains(&"mcp-gateway://beta/demo://readme"), "{uris:?}");
    let read = client
        .read_resource(ReadResourceRequestParams::new("mcp-gateway://beta/demo://readme"))
        .await
        .unwrap();
    let body = serde_json::to_string(&read).unwrap();
    assert!(body.contains("demo server") && body.contains("demo://readme"), "{body}");
    // The demo calls its readme public; through the gateway the answer depends on the caller.
    assert_eq!(read.cache_scope, Some(rmcp::model::CacheScope::Private), "{body}");

    let prompts = client.list_all_prompts().await.unwrap();
    let names: Vec<_> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert!(
        names.contains(&"alpha:explain_calculation") && names.contains(&"beta:explain_calculation"),
        "{names:?}"
    );
    let mut get = GetPromptRequestParams::new("beta:explain_calculation");
    get.arguments = Some(json!({"expression": "7*6"}).as_object().unwrap().clone());
    let prompt = client.get_prompt(get).await.unwrap();
    assert!(serde_json::to_string(&prompt).unwrap().contains("7*6"));
    assert!(
        client
            .get_prompt(GetPromptRequestParams::new("nobody:x"))
            .await
            .is_err()
    );
}

#[tokio::test]
async fn newest_protocol_clients_are_served_too() {
    let gw = Gateway::start(&two_servers()).await;
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![rmcp::model::ProtocolVersion::LATEST],
    };
    let client =
        ().serve_with_lifecycle(StreamableHttpClientTransport::from_uri(gw.url.as_str()), lifecycle)
            .await
            .expect("server/discover works");
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools[0].name, "tool_discovery");
    assert_eq!(tools[1].name, "tool_execute");
    let r = eventually(Duration::from_secs(20), "calculate via 2026-07-28", || async {
        let params = CallToolRequestParams::new("tool_execute").with_arguments(
            json!({"toolKey": "alpha:calculate", "arguments": {"expression": "40+2"}})
                .as_object()
                .unwrap()
                .clone(),
        );
        let r = client.call_tool(params).await.unwrap();
        (r.is_error == Some(false)).then_some(r)
    })
    .await;
    assert_eq!(r.structured_content.unwrap()["result"], 42.0);
}

/// A tool whose argument is also a header (`x-mcp-header`, 2026-07-28),
/// listed directly: the client's `Mcp-Param-Region` is checked against the
/// body at the gateway, and the gateway sets it on its own call downstream.
#[tokio::test]
async fn header_arguments_are_checked_and_set_on_each_hop() {
    let (_demo, gw, _) = gateway_before_http_demo(&[], "").await;
    gw.cli(&["project", "set-exposure", "local", "direct"]);
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![rmcp::model::ProtocolVersion::LATEST],
    };
    let client =
        ().serve_with_lifecycle(StreamableHttpClientTransport::from_uri(gw.url.as_str()), lifecycle)
            .await
            .unwrap();
    // rmcp's client sets the header from the schema it listed.
    let echo = eventually(Duration::from_secs(20), "remote__echo listed", || async {
        let tools = client.list_all_tools().await.ok()?;
        tools.into_iter().find(|t| t.name == "remote__echo")
    })
    .await;
    assert_eq!(echo.input_schema["properties"]["region"]["x-mcp-header"], "Region");
    let r = call(&client, "remote__echo", json!({"region": "eu-west"})).await;
    let seen = r.structured_content.unwrap();
    assert_eq!(seen["arguments"]["region"], "eu-west");
    assert_eq!(
        seen["regionHeader"], "eu-west",
        "the gateway's own call carried the header"
    );

    // A header that does not match the body: 400, -32020, and no call.
    let body = json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {
            "name": "remote__echo", "arguments": {"region": "eu-west"},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {}
            }
        }
    });
    let raw = |region: &str| {
        reqwest::Client::new()
            .post(&gw.url)
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "tools/call")
            .header("Mcp-Name", "remote__echo")
            .header("Mcp-Param-Region", region)
            .header("Accept", "application/json, text/event-stream")
            .json(&body)
            .send()
    };
    let answer = raw("us-east").await.unwrap();
    assert_eq!(answer.status(), 400);
    let text = answer.text().await.unwrap();
    assert!(text.contains("-32020"), "{text}");

    // A matching one is served, and a one-message answer comes as JSON: over
    // SSE, rmcp's client (3.9) sometimes loses the schemas of a `tools/list`
    // whose stream ends at once, and then omits these headers.
    let answer = raw("eu-west").await.unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.headers()["content-type"], "application/json");
    let answer: Value = answer.json().await.unwrap();
    assert_eq!(
        answer["result"]["structuredContent"]["regionHeader"], "eu-west",
        "{answer}"
    );
}

#[tokio::test]
async fn stdio_upstream_works_and_stdin_close_stops_everything() {
    let (client, pid, _dir) = stdio_gateway(&format!("{ANONYMOUS}{}", chaos_server("alpha", ""))).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["tool_discovery", "tool_execute", "alpha__echo"]);
    let r = eventually(Duration::from_secs(20), "calculate over stdio", || async {
        let params = CallToolRequestParams::new("tool_execute").with_arguments(
            json!({"toolKey": "alpha:calculate", "arguments": {"expression": "5*5"}})
                .as_object()
                .unwrap()
                .clone(),
        );
        let r = client.call_tool(params).await.unwrap();
        (r.is_error == Some(false)).then_some(r)
    })
    .await;
    assert_eq!(r.structured_content.unwrap()["result"], 25.0);
    let children = children_of(pid);
    assert!(!children.is_empty(), "the demo server runs as a child");
    client.cancel().await.unwrap(); // closes the gateway's stdin
    eventually(Duration::from_secs(20), "gateway and children exit", || async {
        (!alive(pid) && children.iter().all(|c| !alive(*c))).then_some(())
    })
    .await;
}

#[tokio::test]
async fn stdio_and_http_can_be_served_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gateway.toml");
    std::fs::write(&path, format!("{ANONYMOUS}{}", chaos_server("alpha", ""))).unwrap();
    let mut child = tokio::process::Command::new(bin())
        .args(["serve", "--stdio", "--http", "127.0.0.1:0", "--config"])
        .arg(&path)
        .env("RUST_LOG", "info")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut errors = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(child.stderr.take().unwrap()));
    let url = loop {
        let line = errors.next_line().await.unwrap().expect("the gateway logs its address");
        if let Some(i) = line.find("http://") {
            break line[i..].split_whitespace().next().unwrap().to_string();
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = errors.next_line().await {} });

    let http = ().serve(StreamableHttpClientTransport::from_uri(url.as_str())).await.unwrap();
    assert_eq!(
        http.list_all_tools().await.unwrap().len(),
        3,
        "the meta-tools and alpha's App"
    );

    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(child.stdout.take().unwrap()));
    tokio::io::AsyncWriteExt::write_all(&mut stdin, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")
        .await
        .unwrap();
    let pong: Value = serde_json::from_str(&stdout.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(pong["id"], 1);
    http.cancel().await.unwrap();
    drop(stdin); // closing stdin stops the whole gateway
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success());
}

#[tokio::test]
async fn sigterm_stops_the_gateway_and_its_children() {
    let mut gw = Gateway::spawn(&two_servers()).await;
    let client = gw.client().await;
    wait_for_tool(&client, "alpha:calculate").await;
    wait_for_tool(&client, "beta:calculate").await;
    let children = children_of(gw.pid());
    assert_eq!(children.len(), 2, "one child per stdio server");
    let status = gw.terminate().await;
    assert!(status.success(), "{status:?}");
    for child in children {
        assert!(!alive(child), "child {child} outlived the gateway");
    }
    // Each exits on its closed stdin, not on a SIGTERM after its grace: the
    // subscription a 2026-07-28 server holds open is cancelled first.
    gw.wait_log("mcp_gateway::cli: stopped", Duration::from_secs(10))
        .await
        .expect("the gateway logs its stop");
    let log = gw.log();
    assert!(log.contains(r#"protocol="2026-07-28""#), "{log}");
    assert_eq!(log.matches("downstream server stopped").count(), 2, "{log}");
    assert!(!log.contains("did not exit when its stdin closed"), "{log}");
}

#[tokio::test]
async fn malformed_requests_get_jsonrpc_errors() {
    let gw = Gateway::start(&two_servers()).await;
    let http = reqwest::Client::new();
    let post = |body: &'static str, session: Option<String>| {
        let mut req = http
            .post(&gw.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body);
        if let Some(s) = session {
            req = req.header("mcp-session-id", s);
        }
        req.send()
    };
    // Well-formed enough for the guard's envelope, not for an MCP message
    // (rmcp answered each with a bare 415).
    let nested = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"ping","params":{{"x":{}{}}}}}"#,
        "[".repeat(300),
        "]".repeat(300)
    );
    for (body, code) in [
        (
            br#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}"#.to_vec(),
            "-32600",
        ),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\",\"params\":{\"x\":\"\xff\xfe\"}}".to_vec(),
            "-32700",
        ),
        (nested.into_bytes(), "-32700"),
    ] {
        let r = http
            .post(&gw.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400, "{}", String::from_utf8_lossy(&body));
        let answer: Value = r.json().await.expect("a JSON-RPC error body");
        assert_eq!(answer["error"]["code"].to_string(), code, "{answer}");
        assert!(
            !answer.to_string().contains("1234567890"),
            "the input is not echoed: {answer}"
        );
    }
    for (body, code) in [
        ("{not json", "-32700"),
        (r#"{"hello": "world"}"#, "-32600"),
        ("[1, 2]", "-32600"),
        // A well-formed batch: batching left MCP in 2025-06-18 (rmcp answered 415).
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#,
            "batches are not supported",
        ),
    ] {
        let r = post(body, None).await.unwrap();
        assert_eq!(r.status(), 400, "{body}");
        let text = r.text().await.unwrap();
        assert!(text.contains(code), "{body}: {text}");
    }

    // Within a session, an unknown method gets a JSON-RPC error at once.
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let r = post(init, None).await.unwrap();
    let session = r.headers()["mcp-session-id"].to_str().unwrap().to_string();
    let _ = r.text().await;
    let _ = post(
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        Some(session.clone()),
    )
    .await
    .unwrap();
    let started = Instant::now();
    let r = post(
        r#"{"jsonrpc":"2.0","id":2,"method":"no/such/method","params":{}}"#,
        Some(session),
    )
    .await
    .unwrap();
    let text = r.text().await.unwrap();
    assert!(text.contains("-32601"), "method not found: {text}");
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn foreign_hosts_and_origins_are_refused() {
    let gw = Gateway::start(&two_servers()).await;
    let http = reqwest::Client::new();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let send = |host: Option<&str>, origin: Option<&str>| {
        let mut req = http
            .post(&gw.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(init);
        if let Some(h) = host {
            req = req.header("host", h);
        }
        if let Some(o) = origin {
            req = req.header("origin", o);
        }
        req.send()
    };
    assert_eq!(send(Some("evil.example"), None).await.unwrap().status(), 403);
    assert_eq!(send(None, Some("http://evil.example")).await.unwrap().status(), 403);
    assert_eq!(send(None, Some("http://localhost:3000")).await.unwrap().status(), 200);
    assert_eq!(send(None, None).await.unwrap().status(), 200);
    // Every route, not only /mcp (DNS rebinding reaches the console and the operations endpoints too).
    for path in ["/console", "/console/api/overview", "/readyz", "/healthz", "/metrics"] {
        let url = gw.url.replace("/mcp", path);
        let get = |host: Option<&str>, origin: Option<&str>| {
            let mut req = http.get(&url);
            if let Some(h) = host {
                req = req.header("host", h);
            }
            if let Some(o) = origin {
                req = req.header("origin", o);
            }
            req.send()
        };
        assert_eq!(get(Some("evil.example"), None).await.unwrap().status(), 403, "{path}");
        assert_eq!(
            get(None, Some("http://evil.example")).await.unwrap().status(),
            403,
            "{path}"
        );
        assert_ne!(get(None, None).await.unwrap().status(), 403, "{path}");
    }
}

#[tokio::test]
async fn discovery_results_carry_what_a_model_needs() {
    let gw = Gateway::start(&two_servers()).await;
    let client = gw.client().await;
    wait_for_tool(&client, "alpha:calculate").await;
    let r = call(
        &client,
        "tool_discovery",
        json!({"query": ["evaluate arithmetic", "math expression"], "context": "homework"}),
    )
    .await;
    let results = r.structured_content.as_ref().unwrap()["results"]
        .as_array()
        .unwrap()
        .clone();
    // What a call needs, no more: the key says the names, and the rest
    // (explanation, annotations) is the operators' (issue 77).
    let top = results[0].as_object().unwrap();
    let fields: Vec<&str> = top.keys().map(String::as_str).collect();
    assert_eq!(
        fields,
        ["description", "inputSchema", "relevance", "returns", "toolKey"],
        "{top:?}"
    );
    assert_eq!(top["toolKey"].as_str().unwrap().split_once(':').unwrap().1, "calculate");
    assert_eq!(top["returns"], "{result: number}", "code mode says what it returns");
    let structured = r.structured_content.as_ref().unwrap().to_string().len();
    assert!(
        structured <= 3 * text(&r).len(),
        "{structured} bytes against {}",
        text(&r).len()
    );
    assert!(
        text(&r).contains("calculate"),
        "a readable summary for text-only clients"
    );

    // Issue #43: clients that hand the model only the text must still show
    // it each argument's type, whether it is required, and its allowed values.
    let r = call(
        &client,
        "tool_discovery",
        json!({"query": "how warm is 30 degrees celsius in fahrenheit"}),
    )
    .await;
    let said = text(&r);
    assert!(
        said.contains(":convert_temperature (")
            && said.contains(r#"  arguments: {value: number; from: "C" | "F" | "K"; to: "C" | "F" | "K"}"#),
        "{said}"
    );
}

/// 10,000 queries in one discovery (110 KB) took 13 s of CPU; they are
/// refused before any search, and the gateway answers the next call.
#[tokio::test]
async fn a_flood_of_discovery_queries_is_refused_clearly() {
    let gw = Gateway::start(&two_servers()).await;
    let client = gw.client().await;
    wait_for_tool(&client, "alpha:calculate").await;
    let flood: Vec<String> = (0..10_000).map(|i| format!("query number {i}")).collect();
    let r = call(&client, "tool_discovery", json!({ "query": flood })).await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENTS", "{}", text(&r));
    assert!(
        text(&r).contains("tool_discovery takes at most 20 queries; got 10000"),
        "{}",
        text(&r)
    );
    let long = "evaluate arithmetic ".repeat(1_000);
    let r = call(&client, "tool_discovery", json!({ "query": long })).await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENTS", "{}", text(&r));
    assert!(text(&r).contains("at most 4096 characters"), "{}", text(&r));
    let results = discover(&client, json!(["evaluate arithmetic", "math expression"])).await;
    assert!(
        results[0]["toolKey"].as_str().unwrap().ends_with(":calculate"),
        "{results:#?}"
    );
}

/// A gateway admin token, built at run time so this file holds none.
fn admin_token() -> String {
    format!("mgwa_9_{}", "0123456789abcdef".repeat(4))
}

/// Issue 41, items 3 and 7: a 1 MB `toolKey` was stored whole in the audit
/// log, logged (a 2 MB line) and echoed back (a 2 MB answer, past the
/// official Python client's 1 MB event limit); an unknown tool's name went
/// into rmcp's WARN line and the access line whole, credential included.
#[tokio::test]
async fn a_megabyte_key_or_name_gets_a_short_answer_and_short_log_lines() {
    let gw = Gateway::start(&two_servers()).await;
    let client = gw.client().await;
    wait_for_tool(&client, "alpha:calculate").await;
    let huge = "k".repeat(1 << 20);

    let r = execute(&client, &huge, json!({})).await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENTS", "{}", text(&r));
    assert!(
        text(&r).contains("toolKey is 1048576 bytes long; the gateway takes at most 256"),
        "{}",
        text(&r)
    );
    let answer = serde_json::to_string(&r).unwrap();
    assert!(answer.len() < 4096, "the answer is {} bytes", answer.len());

    let err = client
        .call_tool(CallToolRequestParams::new(huge.clone()))
        .await
        .expect_err("no such tool");
    assert!(
        err.to_string().len() < 4096,
        "the error is {} bytes",
        err.to_string().len()
    );

    // A name or key carrying a credential is quoted with it redacted, in
    // the answer, rmcp's WARN line, the access line and the audit row.
    let token = admin_token();
    let err = client
        .call_tool(CallToolRequestParams::new(format!("x:{token}")))
        .await
        .expect_err("no such tool");
    assert!(err.to_string().contains("[REDACTED:gateway-admin-token]"), "{err}");
    let r = execute(&client, &format!("alpha:{token}"), json!({})).await;
    assert_eq!(error_code(&r), "TOOL_NOT_FOUND");
    assert!(
        text(&r).contains("'alpha:[REDACTED:gateway-admin-token]'"),
        "{}",
        text(&r)
    );
    gw.wait_log("alpha:[REDACTED:gateway-admin-token]", Duration::from_secs(10))
        .await
        .unwrap_or_else(|| panic!("the access line quotes the key redacted:\n{}", gw.log()));

    let log = gw.log();
    let longest = log.lines().map(str::len).max().unwrap_or(0);
    assert!(longest < 16 * 1024, "a log line of {longest} bytes");
    assert!(!log.contains("kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"));
    assert!(
        !log.contains("0123456789abcdef0123456789abcdef"),
        "the credential reached the log"
    );

    gw.audit_folded().await;
    let store = rusqlite::Connection::open(gw.dir.path().join("mcp-gateway.db")).unwrap();
    let keys: Vec<Option<String>> = store
        .prepare("SELECT tool_key FROM audit_log WHERE meta_tool = 'tool_execute'")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(keys.contains(&None), "the refused key is not stored: {keys:?}");
    for key in keys.iter().flatten() {
        assert!(key.len() <= 256 && !key.contains("0123456789abcdef"), "{key}");
    }
}

/// Issue 41, item 6: the gateway's own admin token passed the argument
/// check and came back in results, and a credential used as an object key
/// passed both.
#[tokio::test]
async fn admin_tokens_and_credentials_as_keys_are_screened() {
    let config = format!(
        "{ANONYMOUS}{}{}",
        chaos_server("alpha", ""),
        chaos_server("vault", "trusted_for_credentials = true")
    );
    let gw = Gateway::start(&config).await;
    let client = gw.client().await;
    for key in ["alpha:echo", "vault:echo"] {
        wait_for_tool(&client, key).await;
    }
    let admin = admin_token();
    let github = format!("ghp_{}", "q7x2m4n6p8r3t5v9k1w3y5z7b2d4f6h8j0l2");
    let leaked = |all: &str| all.contains("0123456789abcdef") || all.contains("q7x2m4n6p8r3");

    // Arguments: refused before they reach an untrusted server, the place
    // of a key named with the key redacted.
    for (args, said) in [
        (
            json!({ "note": format!("use {admin}") }),
            "a gateway-admin-token (at /note)",
        ),
        (
            json!({ "scopes": { github.clone(): "repo" } }),
            "a github-token (at /scopes/[REDACTED:github-token])",
        ),
    ] {
        let r = execute(&client, "alpha:echo", args.clone()).await;
        assert_eq!(error_code(&r), "SECRET_IN_ARGUMENTS", "{args}: {r:?}");
        assert!(text(&r).contains(said), "{}", text(&r));
        assert!(!leaked(&format!("{r:?}")), "the refusal repeats it: {r:?}");
    }

    // Results: a trusted server may take them; the answer comes back
    // redacted, object keys included.
    let r = execute(
        &client,
        "vault:echo",
        json!({ "note": admin.clone(), "scopes": { github.clone(): "repo" } }),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    assert!(!leaked(&format!("{r:?}")), "{r:?}");
    let echoed = &r.structured_content.as_ref().unwrap()["arguments"];
    assert_eq!(echoed["note"], "[REDACTED:gateway-admin-token]");
    assert_eq!(echoed["scopes"], json!({ "[REDACTED:github-token]": "repo" }));
    assert!(!leaked(&gw.log()), "a credential reached the log");
}

/// Issue 44, item 2: the seed's `ExecutionError {code, message, server,
/// tool}` came back without `server` and `tool`. An error about a tool names
/// both; an unknown key names neither (it is the caller's string, quoted in
/// the message, and may be a tool the caller may not see).
#[tokio::test]
async fn execution_errors_name_their_server_and_tool() {
    let gw = Gateway::start(&two_servers()).await;
    let client = gw.client().await;
    wait_for_tool(&client, "alpha:calculate").await;
    let named = |r: &rmcp::model::CallToolResult| {
        let error = &r.structured_content.as_ref().expect("structuredContent")["error"];
        (error.get("server").cloned(), error.get("tool").cloned())
    };
    let both = |server: &str, tool: &str| (Some(json!(server)), Some(json!(tool)));

    let r = execute(&client, "alpha:calculate", json!({ "expression": 5 })).await;
    assert_eq!(error_code(&r), "TOOL_VALIDATION_ERROR");
    assert_eq!(named(&r), both("alpha", "calculate"), "{r:?}");

    // A downstream failure: alpha's calls time out after 1.5 s.
    let r = execute(&client, "alpha:sleep", json!({ "ms": 30000 })).await;
    assert_eq!(error_code(&r), "TOOL_EXECUTION_TIMEOUT");
    assert_eq!(named(&r), both("alpha", "sleep"), "{r:?}");

    for key in ["alpha:nope", "nobody:calculate"] {
        let r = execute(&client, key, json!({})).await;
        assert_eq!(error_code(&r), "TOOL_NOT_FOUND", "{key}");
        assert_eq!(named(&r), (None, None), "{key}: {r:?}");
    }
}

/// Issue #77 (5): a tool's name sent as its `toolKey` (`calculate` for
/// `solo:calculate`, as some clients send it) is refused with the key, when
/// exactly one tool the caller may run has that name; with two, or none,
/// the plain unknown-key answer.
#[tokio::test]
async fn a_name_sent_as_a_tool_key_is_answered_with_its_key() {
    let config = format!(
        "{ANONYMOUS}{}{}[[rules]]\npattern = [\"sha256\"]\nserver = \"twin\"\nenabled = false\n",
        chaos_server("solo", ""),
        chaos_server(
            "twin",
            "env = { DEMO_EXTRA_TOOLS = '[{\"name\": \"only_here\", \"description\": \"A tool of twin alone (test tool).\", \"inputSchema\": {\"type\": \"object\"}}]' }"
        ),
    );
    let gw = Gateway::start(&config).await;
    let client = gw.client().await;
    wait_for_tool(&client, "twin:only_here").await;
    wait_for_tool(&client, "solo:sha256").await;

    let r = execute(&client, "only_here", json!({})).await;
    assert_eq!(error_code(&r), "TOOL_NOT_FOUND");
    assert!(
        text(&r).contains("'only_here' is a tool's name, not a toolKey: call it with toolKey 'twin:only_here'"),
        "{}",
        text(&r)
    );
    // `sha256`: twin's is disabled by a rule, so solo's is the one.
    let r = execute(&client, "sha256", json!({})).await;
    assert!(text(&r).contains("toolKey 'solo:sha256'"), "{}", text(&r));
    // Both servers have `calculate`: no one key to name.
    let r = execute(&client, "calculate", json!({})).await;
    assert!(text(&r).starts_with("unknown toolKey 'calculate'"), "{}", text(&r));
    let r = execute(&client, "no_such_tool", json!({})).await;
    assert!(text(&r).starts_with("unknown toolKey 'no_such_tool'"), "{}", text(&r));
}
