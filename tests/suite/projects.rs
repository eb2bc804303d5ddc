//! Projects, tokens, grants and rules, end to end over HTTP with the real
//! binary, on a real SQLite file and (the tests marked `on_both_engines!`)
//! on a real PostgreSQL database too. The audit log's guarantees are in
//! `tests/suite/audit.rs`.

use crate::common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::projects::*;
use common::*;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, GetSkillRequestParams, ReadResourceRequestParams, SkillResources};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

on_both_engines!(
    projects_see_and_run_only_their_own_tools,
    projects_see_and_run_only_their_own_tools_on
);

async fn projects_see_and_run_only_their_own_tools_on(engine: Engine) {
    let (gw, t1, t2) = two_projects_on(engine).await;
    let one = gw.client_with_token(&t1).await.unwrap();
    let two = gw.client_with_token(&t2).await.unwrap();
    wait_ready(&one, "red:calculate").await;
    wait_ready(&two, "blue:calculate").await;

    let seen_one = keys(&one, EVERYTHING).await;
    let seen_two = keys(&two, EVERYTHING).await;
    assert!(seen_one.iter().all(|k| k.starts_with("red:")), "{seen_one:?}");
    assert!(seen_one.contains("red:sha256"));
    assert!(!seen_one.contains("red:crash"), "rule-disabled tools exist for nobody");
    assert!(
        seen_two.contains("blue:sha256") && seen_two.contains("red:calculate"),
        "{seen_two:?}"
    );
    assert!(
        !seen_two.contains("red:sha256"),
        "only the granted tool of red: {seen_two:?}"
    );

    // What discovery hides, execute refuses, exactly like a key that does not exist.
    let hidden = execute(&one, "blue:calculate", json!({"expression": "1"})).await;
    let missing = execute(&one, "nowhere:calculate", json!({"expression": "1"})).await;
    assert_eq!(error_code(&hidden), "TOOL_NOT_FOUND");
    assert_eq!(
        text(&hidden).replace("blue:calculate", "K"),
        text(&missing).replace("nowhere:calculate", "K")
    );
    assert_eq!(
        error_code(&execute(&one, "red:crash", json!({})).await),
        "TOOL_NOT_FOUND"
    );
    assert_eq!(
        error_code(&execute(&two, "red:sha256", json!({"text": "x"})).await),
        "TOOL_NOT_FOUND"
    );
    let ok = execute(&two, "red:calculate", json!({"expression": "6*7"})).await;
    assert_eq!(ok.structured_content.unwrap()["result"], 42.0);

    // Tags from the rules are shown and searchable.
    let r = call(&one, "tool_discovery", json!({"query": "math"})).await;
    let results = r.structured_content.unwrap()["results"].as_array().unwrap().clone();
    assert!(
        results
            .iter()
            .any(|t| t["toolKey"] == "red:calculate" && t["tags"] == json!(["math"])),
        "{results:#?}"
    );

    // Resources and prompts follow the same server grants.
    assert_eq!(
        resource_uris(&one).await,
        ["demo://readme"],
        "only red's resource, unshared so unprefixed"
    );
    assert_eq!(prompt_names(&one).await, ["red:explain_calculation"]);
    let denied = one
        .get_prompt(rmcp::model::GetPromptRequestParams::new("blue:explain_calculation"))
        .await;
    assert!(denied.is_err());
}

on_both_engines!(
    no_token_bad_tokens_and_revoked_tokens_are_refused,
    no_token_bad_tokens_and_revoked_tokens_are_refused_on
);

async fn no_token_bad_tokens_and_revoked_tokens_are_refused_on(engine: Engine) {
    let (gw, t1, _) = two_projects_on(engine).await;
    let http = reqwest::Client::new();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let post = |auth: Option<String>| {
        let mut req = http
            .post(&gw.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(init);
        if let Some(a) = auth {
            req = req.header("authorization", a);
        }
        req.send()
    };
    let r = post(None).await.unwrap();
    assert_eq!(r.status(), 401);
    // What is missing, said so that a client can tell its user (RFC 6750's
    // error and error_description), and the same in the body.
    let challenge = r.headers()["www-authenticate"].to_str().unwrap().to_string();
    assert!(
        challenge.starts_with("Bearer realm=\"mcp-gateway\", error=\"invalid_token\""),
        "{challenge}"
    );
    assert!(
        challenge.contains("error_description=\"this gateway requires a token"),
        "{challenge}"
    );
    let body = r.text().await.unwrap();
    assert!(body.contains("mcp-gateway token issue"), "{body}");

    // Unknown, mistyped and revoked tokens all get the very same answer.
    // The last character changed (to one it is not), so the secret is wrong.
    let last = if t1.ends_with('0') { '1' } else { '0' };
    let mistyped = format!("{}{last}", &t1[..t1.len() - 1]);
    let mut answers = BTreeSet::new();
    for bad in ["mgw_1_nope".to_string(), mistyped, "not-even-a-token".into()] {
        let r = post(Some(format!("Bearer {bad}"))).await.unwrap();
        answers.insert((
            r.status().as_u16(),
            r.headers()["www-authenticate"].to_str().unwrap().to_string(),
            r.text().await.unwrap(),
        ));
    }
    let one = gw.client_with_token(&t1).await.expect("a valid token connects");
    wait_ready(&one, "red:calculate").await;
    let id = t1.split('_').nth(1).unwrap();
    gw.cli(&["token", "revoke", id]);
    let r = post(Some(format!("Bearer {t1}"))).await.unwrap();
    answers.insert((
        r.status().as_u16(),
        r.headers()["www-authenticate"].to_str().unwrap().to_string(),
        r.text().await.unwrap(),
    ));
    assert_eq!(answers.len(), 1, "{answers:#?}");
    assert_eq!(answers.iter().next().unwrap().0, 401);

    // The revoked token's open session is refused at once, too.
    let params =
        CallToolRequestParams::new("tool_discovery").with_arguments(json!({"query": "x"}).as_object().unwrap().clone());
    assert!(
        one.call_tool(params).await.is_err(),
        "revocation applies to the next request"
    );
}

on_both_engines!(
    project_id_may_narrow_but_not_switch,
    project_id_may_narrow_but_not_switch_on
);

async fn project_id_may_narrow_but_not_switch_on(engine: Engine) {
    let (gw, t1, _) = two_projects_on(engine).await;
    let one = gw.client_with_token(&t1).await.unwrap();
    wait_ready(&one, "red:calculate").await;
    let with_hint = |hint: &str| {
        let mut p = CallToolRequestParams::new("tool_discovery")
            .with_arguments(json!({"query": "calculate"}).as_object().unwrap().clone());
        p.meta = Some(json!({"projectId": hint}).as_object().unwrap().clone().into());
        p
    };
    for ok in ["one", "UNASSIGNED_PROJECT_ID", ""] {
        assert!(one.call_tool(with_hint(ok)).await.is_ok(), "{ok}");
    }
    let err = one.call_tool(with_hint("two")).await.unwrap_err().to_string();
    assert!(err.contains("-32001") || err.contains("not the project"), "{err}");
}

on_both_engines!(search_strategy_per_project, search_strategy_per_project_on);

async fn search_strategy_per_project_on(engine: Engine) {
    let (gw, t1, _) = two_projects_on(engine).await;
    let one = gw.client_with_token(&t1).await.unwrap();
    wait_ready(&one, "red:calculate").await;

    gw.cli(&["project", "set-search", "one", "off"]);
    let r = call(&one, "tool_discovery", json!({"query": "calculate"})).await;
    let s = r.structured_content.clone().unwrap();
    assert_eq!(s["results"], json!([]));
    assert!(s["notice"].as_str().unwrap().contains("catalog is off"), "{s}");
    assert!(text(&r).contains("catalog is off"));

    gw.cli(&["project", "set-search", "one", "cloud"]);
    let r = call(&one, "tool_discovery", json!({"query": "calculate"})).await;
    let s = r.structured_content.unwrap();
    assert_eq!(s["provider"], "bm25");
    assert!(s["notice"].as_str().unwrap().contains("BM25 answered"), "{s}");
    assert_eq!(s["results"][0]["toolKey"], "red:calculate");
}

#[tokio::test]
async fn stdio_callers_use_meta_token_or_the_session_token() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gateway.toml");
    std::fs::write(&path, chaos_server("red", "")).unwrap();
    let admin = |args: &[&str]| {
        let o = std::process::Command::new(bin())
            .args(args)
            .arg("--config")
            .arg(&path)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap().trim().to_string()
    };
    admin(&["project", "create", "p"]);
    admin(&["grant", "--project", "p", "--server", "red"]);
    let token = admin(&["token", "issue", "--project", "p"]);

    let spawn = |session_token: Option<&str>| {
        let cmd = tokio::process::Command::new(bin()).configure(|c| {
            c.args(["serve", "--config"]).arg(&path).env_remove("MCP_GATEWAY_TOKEN");
            if let Some(t) = session_token {
                c.env("MCP_GATEWAY_TOKEN", t);
            }
        });
        TokioChildProcess::builder(cmd)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
            .0
    };
    let discover_with = |meta: Option<Value>| {
        let mut p = CallToolRequestParams::new("tool_discovery")
            .with_arguments(json!({"query": "calculate"}).as_object().unwrap().clone());
        p.meta = meta.map(|m| m.as_object().unwrap().clone().into());
        p
    };

    let anonymous = ().serve(spawn(None)).await.unwrap();
    let err = anonymous.call_tool(discover_with(None)).await.unwrap_err().to_string();
    assert!(
        err.contains("unauthorized"),
        "no token on stdio is a JSON-RPC error: {err}"
    );
    let r = eventually(Duration::from_secs(20), "discovery with _meta.token", || async {
        let r = anonymous
            .call_tool(discover_with(Some(json!({"token": token}))))
            .await
            .unwrap();
        (!r.structured_content.as_ref().unwrap()["results"]
            .as_array()
            .unwrap()
            .is_empty())
        .then_some(r)
    })
    .await;
    assert_eq!(r.structured_content.unwrap()["results"][0]["toolKey"], "red:calculate");
    anonymous.cancel().await.unwrap();

    let session = ().serve(spawn(Some(&token))).await.unwrap();
    eventually(Duration::from_secs(20), "discovery with MCP_GATEWAY_TOKEN", || async {
        let r = session.call_tool(discover_with(None)).await.ok()?;
        (!r.structured_content.as_ref().unwrap()["results"]
            .as_array()
            .unwrap()
            .is_empty())
        .then_some(())
    })
    .await;
    session.cancel().await.unwrap();
}

#[tokio::test]
async fn two_gateways_share_one_store() {
    let (gw, t1, _) = two_projects().await;
    let second = Gateway::start(&format!(
        "[store]\npath = \"{}\"\n{}",
        gw.dir.path().join("mcp-gateway.db").display(),
        config()
    ))
    .await;
    let a = gw.client_with_token(&t1).await.unwrap();
    let b = second
        .client_with_token(&t1)
        .await
        .expect("the second gateway knows the same tokens");
    wait_ready(&a, "red:calculate").await;
    wait_ready(&b, "red:calculate").await;
    gw.cli(&["token", "revoke", t1.split('_').nth(1).unwrap()]);
    let params =
        CallToolRequestParams::new("tool_discovery").with_arguments(json!({"query": "x"}).as_object().unwrap().clone());
    assert!(
        b.call_tool(params).await.is_err(),
        "a revocation made through one is seen by the other"
    );
}

#[tokio::test]
async fn the_operator_cli_manages_projects_tokens_grants_and_audit() {
    let (gw, t1, _) = two_projects().await;
    let listed: Value = serde_json::from_slice(&gw.cli(&["project", "list", "--json"]).stdout).unwrap();
    let names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["one", "two"]);
    let shown: Value = serde_json::from_slice(&gw.cli(&["project", "show", "two", "--json"]).stdout).unwrap();
    let grants = &shown["permissions"];
    assert_eq!(grants.as_array().unwrap().len(), 2, "{shown}");
    assert!(
        serde_json::to_string(&shown).unwrap().find(&t1[10..]).is_none(),
        "no secrets in show"
    );
    let tokens: Value = serde_json::from_slice(&gw.cli(&["token", "list", "--json"]).stdout).unwrap();
    assert_eq!(tokens.as_array().unwrap().len(), 2);

    let one = gw.client_with_token(&t1).await.unwrap();
    wait_ready(&one, "red:calculate").await;
    gw.cli(&["revoke", "--project", "one", "--server", "red", "--tool", "calculate"]);
    assert_eq!(
        error_code(&execute(&one, "red:calculate", json!({"expression": "1"})).await),
        "TOOL_NOT_FOUND"
    );
    assert!(!keys(&one, EVERYTHING).await.contains("red:calculate"));
    let granted: Value = serde_json::from_slice(
        &gw.cli(&[
            "grant",
            "--project",
            "one",
            "--server",
            "red",
            "--tool",
            "calculate",
            "--json",
        ])
        .stdout,
    )
    .unwrap();
    assert_eq!(
        granted,
        json!({"project": "one", "server": "red", "tool": "calculate", "enabled": true})
    );
    assert_eq!(
        execute(&one, "red:calculate", json!({"expression": "1"}))
            .await
            .is_error,
        Some(false)
    );

    // The audit writer batches rows: they land a moment after the answers.
    let tail: Value = eventually(Duration::from_secs(5), "the last call's audit row", || async {
        let tail: Value = serde_json::from_slice(
            &gw.cli(&["audit", "tail", "--project", "one", "-n", "2", "--json"])
                .stdout,
        )
        .unwrap();
        let last = tail.as_array().unwrap().last().cloned().unwrap_or_default();
        (last["toolKey"] == "red:calculate" && last["outcome"] == "ok").then_some(tail)
    })
    .await;
    let rows = tail.as_array().unwrap();
    let outcomes: Vec<&str> = rows.iter().map(|r| r["outcome"].as_str().unwrap()).collect();
    assert_eq!(outcomes, ["ok", "ok"], "{tail}");
    assert_eq!(rows[1]["toolKey"], "red:calculate");
    let text = String::from_utf8(gw.cli(&["audit", "tail"]).stdout).unwrap();
    assert!(text.contains("denied") && text.contains("tool_execute"), "{text}");
}

/// A client that counts `notifications/tools/list_changed`.
#[derive(Clone, Default)]
struct ListChanges(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl rmcp::ClientHandler for ListChanges {
    async fn on_tool_list_changed(&self, _: rmcp::service::NotificationContext<rmcp::RoleClient>) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl ListChanges {
    async fn connect(gw: &Gateway, token: &str) -> (Self, rmcp::service::RunningService<rmcp::RoleClient, Self>) {
        let counter = Self::default();
        let config =
            rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(gw.url.as_str())
                .auth_header(token);
        let transport = rmcp::transport::StreamableHttpClientTransport::from_config(config);
        (counter.clone(), counter.serve(transport).await.unwrap())
    }

    fn seen(&self) -> usize {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

async fn tool_names<S: rmcp::Service<rmcp::RoleClient>>(
    client: &rmcp::service::RunningService<rmcp::RoleClient, S>,
) -> Vec<String> {
    client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect()
}

on_both_engines!(
    a_project_may_see_its_tools_directly,
    a_project_may_see_its_tools_directly_on
);

/// `project set-exposure`: a project in `direct` mode lists exactly its
/// permitted tools as `server__tool` and runs them by those names (rules,
/// grants and the audit log as for tool_execute); `both` lists the meta-tools
/// first; a grant or exposure change reaches that project's sessions only.
async fn a_project_may_see_its_tools_directly_on(engine: Engine) {
    let (gw, t1, t2) = two_projects_on(engine).await;
    let probe = gw.client_with_token(&t1).await.unwrap();
    wait_ready(&probe, "red:calculate").await;
    wait_ready(&probe, "red:sleep").await;
    let out = String::from_utf8(gw.cli(&["project", "set-exposure", "two", "direct"]).stdout).unwrap();
    assert!(out.contains("project 'two' exposure: direct"), "{out}");

    let (one_changes, one) = ListChanges::connect(&gw, &t1).await;
    let (two_changes, two) = ListChanges::connect(&gw, &t2).await;
    let two_tools = eventually(Duration::from_secs(20), "blue's tools listed", || async {
        let names = tool_names(&two).await;
        names.contains(&"blue__sleep".to_string()).then_some(names)
    })
    .await;
    assert!(two_tools.contains(&"red__calculate".to_string()), "{two_tools:?}");
    assert!(
        !two_tools
            .iter()
            .any(|n| n.starts_with("red__") && n != "red__calculate"),
        "{two_tools:?}"
    );
    assert!(
        !two_tools.iter().any(|n| n == "blue__crash" || n == "tool_execute"),
        "{two_tools:?}"
    );
    assert!(
        two_tools
            .iter()
            .all(|n| n.starts_with("red__") || n.starts_with("blue__")),
        "{two_tools:?}"
    );
    // Project one is on the meta exposure: the meta-tools, and red's App.
    assert_eq!(tool_names(&one).await, ["tool_discovery", "tool_execute", "red__echo"]);

    // Called by its direct name: the same checks and answer as tool_execute.
    let r = call(&two, "red__calculate", json!({"expression": "6*7"})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    assert_eq!(r.structured_content.unwrap()["result"], 42.0);
    let r = call(&two, "red__calculate", json!({"expression": 6})).await;
    assert_eq!(error_code(&r), "TOOL_VALIDATION_ERROR");
    for (client, name) in [(&two, "red__sleep"), (&two, "blue__crash"), (&one, "red__calculate")] {
        let params =
            CallToolRequestParams::new(name.to_string()).with_arguments(json!({}).as_object().unwrap().clone());
        let refused = client.call_tool(params).await;
        assert!(format!("{refused:?}").contains("unknown tool"), "{name}: {refused:?}");
    }
    eventually(Duration::from_secs(5), "the direct call's audit row", || async {
        let tail: Value =
            serde_json::from_slice(&gw.cli(&["audit", "tail", "--project", "two", "--json"]).stdout).unwrap();
        tail.as_array()
            .unwrap()
            .iter()
            .any(|r| r["toolKey"] == "red:calculate" && r["metaTool"] == "tool_execute" && r["outcome"] == "ok")
            .then_some(())
    })
    .await;

    // MCP Apps: each server's ui:// resources under a namespace of its own,
    // which the tools name and reading reaches.
    let blue_echo = two.list_all_tools().await.unwrap();
    let blue_echo = blue_echo.iter().find(|t| t.name == "blue__echo").unwrap();
    let app = &blue_echo.meta.as_ref().unwrap()["ui"]["resourceUri"];
    assert_eq!(app, "ui://mcp-gateway/blue/widget/card.html");
    for (client, server) in [(&one, "red"), (&two, "blue")] {
        let uri = format!("ui://mcp-gateway/{server}/widget/card.html");
        let read = client
            .read_resource(ReadResourceRequestParams::new(uri.clone()))
            .await
            .unwrap();
        let read = serde_json::to_value(read).unwrap();
        assert_eq!(read["contents"][0]["uri"], uri, "{read}");
        assert_eq!(read["contents"][0]["mimeType"], "text/html;profile=mcp-app", "{read}");
        let text = read["contents"][0]["text"].as_str().unwrap();
        assert!(text.contains(&format!("the card of {server}")), "{read}");
    }
    // A namespace the caller may not see is unknown, not asked of every
    // server; so is the App of a tool the caller was not granted (project
    // two has red's calculate, not its echo).
    for (client, uri) in [
        (&one, "ui://mcp-gateway/blue/widget/card.html"),
        (&two, "ui://mcp-gateway/red/widget/card.html"),
    ] {
        let hidden = client.read_resource(ReadResourceRequestParams::new(uri)).await;
        assert!(format!("{hidden:?}").contains("unknown resource"), "{hidden:?}");
    }
    // An App calls its server's tools by their own names (project two may
    // run only blue's echo), and the result names the App in the namespace.
    let r = call(&two, "echo", json!({"x": 1})).await;
    assert_eq!(r.structured_content.unwrap()["arguments"]["x"], 1);
    assert_eq!(
        r.meta.unwrap()["ui"]["resourceUri"],
        "ui://mcp-gateway/blue/widget/card.html"
    );

    // On the meta exposure the App is called by its listed name, and its
    // result tells the App the name to call back by; through tool_execute,
    // tool_execute and its key.
    let r = call(&one, "red__echo", json!({"x": 2})).await;
    let meta = r.meta.unwrap();
    assert_eq!(meta["mcp-gateway/callTool"], json!({ "name": "red__echo" }));
    assert_eq!(meta["ui"]["resourceUri"], "ui://mcp-gateway/red/widget/card.html");
    let r = call(
        &one,
        "tool_execute",
        json!({"toolKey": "red:echo", "arguments": {"x": 3}}),
    )
    .await;
    assert_eq!(
        r.meta.unwrap()["mcp-gateway/callTool"],
        json!({ "name": "tool_execute", "toolKey": "red:echo" })
    );
    let r = call(&two, "echo", json!({"x": 4})).await;
    assert_eq!(r.meta.unwrap()["mcp-gateway/callTool"], json!({ "name": "blue__echo" }));
    // `set-apps unlisted`: the meta-tools alone, the session is told, and the
    // App's URIs are its server's own again.
    let seen = one_changes.seen();
    let out = String::from_utf8(gw.cli(&["project", "set-apps", "one", "unlisted"]).stdout).unwrap();
    assert!(out.contains("project 'one' apps: unlisted"), "{out}");
    eventually(Duration::from_secs(10), "list_changed for project one", || async {
        (one_changes.seen() > seen).then_some(())
    })
    .await;
    assert_eq!(tool_names(&one).await, ["tool_discovery", "tool_execute"]);
    let refused = one
        .call_tool(CallToolRequestParams::new("red__echo").with_arguments(json!({}).as_object().unwrap().clone()))
        .await;
    assert!(format!("{refused:?}").contains("unknown tool"), "{refused:?}");
    let r = call(
        &one,
        "tool_execute",
        json!({"toolKey": "red:echo", "arguments": {"x": 5}}),
    )
    .await;
    assert_eq!(r.meta.unwrap()["ui"]["resourceUri"], "ui://widget/card.html");

    // A grant reaches the project's sessions, and only them.
    let before = (one_changes.seen(), two_changes.seen());
    gw.cli(&["grant", "--project", "two", "--server", "red", "--tool", "sleep"]);
    eventually(Duration::from_secs(10), "list_changed for project two", || async {
        (two_changes.seen() > before.1).then_some(())
    })
    .await;
    assert!(tool_names(&two).await.contains(&"red__sleep".to_string()));
    assert_eq!(one_changes.seen(), before.0, "project one's tools did not change");

    // `both`: the meta-tools first, then the project's tools.
    gw.cli(&["project", "set-exposure", "one", "both"]);
    eventually(Duration::from_secs(10), "list_changed for project one", || async {
        (one_changes.seen() > before.0).then_some(())
    })
    .await;
    let names = tool_names(&one).await;
    assert_eq!(names[..2], ["tool_discovery", "tool_execute"], "{names:?}");
    assert!(
        names.contains(&"red__sleep".to_string()) && !names.contains(&"blue__sleep".to_string()),
        "{names:?}"
    );
}

on_both_engines!(
    each_project_sees_the_skills_of_its_servers_only,
    each_project_sees_the_skills_of_its_servers_only_on
);

/// Skills (SEP-2640): a project sees those of the servers it was granted
/// whole, each in its server's namespace, and reads them there; no other
/// project can, nor one granted some of the server's tools.
async fn each_project_sees_the_skills_of_its_servers_only_on(engine: Engine) {
    let (gw, t1, t2) = two_projects_on(engine).await;
    let one = gw.client_with_token(&t1).await.unwrap();
    let two = gw.client_with_token(&t2).await.unwrap();
    let red = "skill://mcp-gateway/red/demo/arithmetic/SKILL.md";
    let blue = "skill://mcp-gateway/blue/demo/arithmetic/SKILL.md";
    eventually(Duration::from_secs(20), "both servers' skills", || async {
        let one = skill_uris(&one).await.filter(|u| !u.is_empty())?;
        skill_uris(&two).await.filter(|u| !u.is_empty()).map(|two| (one, two))
    })
    .await;
    assert_eq!(skill_uris(&two).await.unwrap(), BTreeSet::from([blue.to_string()]));
    assert_eq!(skill_uris(&one).await.unwrap(), BTreeSet::from([red.to_string()]));

    let got = two.get_skill(GetSkillRequestParams::new(blue)).await.unwrap();
    assert_eq!((got.skill.uri.as_str(), got.skill.name()), (blue, "arithmetic"));
    let SkillResources::Files(files) = &got.skill.resources else {
        panic!("{got:?}")
    };
    let read = two.read_resource(ReadResourceRequestParams::new(blue)).await.unwrap();
    let read = serde_json::to_value(read).unwrap();
    assert_eq!(read["contents"][0]["uri"], blue, "{read}");
    let text = read["contents"][0]["text"].as_str().unwrap();
    files[0]
        .verify(text.as_bytes())
        .expect("the bytes match the listed digest");

    // Project one may not see blue, nor two (with red's calculate alone)
    // red's skills: each is unknown there, and so is its file.
    for (client, skill) in [(&one, blue), (&two, red)] {
        let refused = client.get_skill(GetSkillRequestParams::new(skill)).await;
        assert!(format!("{refused:?}").contains("unknown skill"), "{refused:?}");
        let hidden = client.read_resource(ReadResourceRequestParams::new(skill)).await;
        assert!(format!("{hidden:?}").contains("unknown resource"), "{hidden:?}");
    }
}

/// Issue 71: `grant --tool` of one tool opened the server's resources,
/// templates and prompts. Project two has blue whole and red's `calculate`:
/// it sees blue's alone, and red's are unknown to it.
#[tokio::test]
async fn a_grant_of_one_tool_opens_that_tool_and_not_its_servers_resources_or_prompts() {
    let (gw, t1, t2) = two_projects().await;
    let one = gw.client_with_token(&t1).await.unwrap();
    let two = gw.client_with_token(&t2).await.unwrap();
    wait_ready(&one, "red:calculate").await;
    wait_ready(&two, "blue:calculate").await;

    assert_eq!(
        resource_uris(&two).await,
        ["demo://readme"],
        "blue's alone, so not shared with red"
    );
    let templates: Vec<String> = (two.list_all_resource_templates().await.unwrap())
        .into_iter()
        .map(|t| t.uri_template)
        .collect();
    assert_eq!(templates, ["file:///blue/{name}"]);
    assert_eq!(prompt_names(&two).await, ["blue:explain_calculation"]);

    let prompt = two
        .get_prompt(rmcp::model::GetPromptRequestParams::new("red:explain_calculation"))
        .await;
    assert!(format!("{prompt:?}").contains("unknown prompt"), "{prompt:?}");
    for uri in ["mcp-gateway://red/demo://readme", "file:///red/notes.txt"] {
        let read = two.read_resource(ReadResourceRequestParams::new(uri)).await;
        assert!(format!("{read:?}").contains("unknown resource"), "{uri}: {read:?}");
    }
    // The tool itself is open.
    let ok = execute(&two, "red:calculate", json!({"expression": "6*7"})).await;
    assert_eq!(ok.structured_content.unwrap()["result"], 42.0);
}

/// Issue 71: a 2026-07-28 call of a tool of a server the caller was not
/// granted got rmcp's "missing Mcp-Param-Region header for `region`": the
/// tool's existence and its argument, told to anyone. It is an unknown
/// tool, as it is to a call that carries the header.
#[tokio::test]
async fn a_stateless_call_of_a_tool_the_caller_may_not_use_is_an_unknown_tool() {
    let (gw, t1, t2) = two_projects().await;
    gw.cli(&["project", "set-exposure", "two", "direct"]);
    let one = gw.client_with_token(&t1).await.unwrap();
    let two = gw.client_with_token(&t2).await.unwrap();
    wait_ready(&one, "red:echo").await;
    wait_ready(&two, "blue:echo").await;
    let raw = |name: &str| {
        let body = json!({
            "jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {
                "name": name, "arguments": {"region": "eu-west"},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
                    "io.modelcontextprotocol/clientCapabilities": {}
                }
            }
        });
        reqwest::Client::new()
            .post(&gw.url)
            .bearer_auth(&t2)
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "tools/call")
            .header("Mcp-Name", name)
            .header("Accept", "application/json, text/event-stream")
            .json(&body)
            .send()
    };
    let hidden = raw("red__echo").await.unwrap().text().await.unwrap();
    assert!(hidden.contains("unknown tool"), "{hidden}");
    assert!(!hidden.contains("Mcp-Param") && !hidden.contains("region"), "{hidden}");
    // A tool the caller may call still has its headers checked.
    let own = raw("blue__echo").await.unwrap().text().await.unwrap();
    assert!(own.contains("-32020") && own.contains("Mcp-Param-Region"), "{own}");
}

/// The URIs of the resources `client` lists.
async fn resource_uris(client: &Client) -> Vec<String> {
    let listed = client.list_all_resources().await.unwrap();
    listed.into_iter().map(|r| r.uri).collect()
}

/// The names of the prompts `client` lists.
async fn prompt_names(client: &Client) -> Vec<String> {
    let listed = client.list_all_prompts().await.unwrap();
    listed.into_iter().map(|p| p.name).collect()
}

/// The URIs of the skills `client` sees.
async fn skill_uris(client: &Client) -> Option<BTreeSet<String>> {
    let skills = client.list_all_skills().await.ok()?;
    Some(skills.into_iter().map(|s| s.uri).collect())
}
