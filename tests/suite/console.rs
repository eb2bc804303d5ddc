//! The operator console end to end: the real gateway with a healthy and a
//! failing server and two projects, driven in headless Chromium
//! (widgets/test/console.test.mjs), then checked against what MCP clients
//! get; and its access rules (admin tokens, OAuth admin scope, CSRF, origin).

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::{Value, json};

const FAILING: &str = "[[servers]]\nname = \"broken\"\ncommand = \"sh\"\n\
                       args = [\"-c\", \"echo 'fatal: no API key in BROKEN_KEY' >&2; exit 3\"]\n";
const PLAY_QUERY: &str = "count the words in a text";
const EXECUTED_TOOL: &str = "demo:word_count";

fn admin_token(gw: &Gateway) -> String {
    let out = gw.cli(&["token", "issue", "--admin", "--label", "test", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["token"].as_str().unwrap().to_string()
}

fn base(gw: &Gateway) -> String {
    gw.url.trim_end_matches("/mcp").to_string()
}

/// `GET /console/api/overview` as an admin.
async fn overview(gw: &Gateway, admin: &str) -> Value {
    reqwest::Client::new()
        .get(format!("{}/console/api/overview", base(gw)))
        .bearer_auth(admin)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

async fn results(client: &rmcp::service::RunningService<rmcp::RoleClient, ()>, query: &str) -> Vec<Value> {
    discover(client, json!(query)).await
}

#[tokio::test]
#[ignore = "full tier: needs Node.js and Chromium (scripts/setup)"]
async fn an_operator_sees_and_changes_the_gateway_from_the_console() {
    // `other` is granted to no project: its tools are what the playground marks hidden.
    let other = format!(
        "[[servers]]\nname = \"other\"\ncommand = \"{}\"\nargs = [\"demo-server\"]\n",
        bin()
    );
    let gw = Gateway::start(&format!("{}{FAILING}{other}", chaos_server("demo", ""))).await;
    for p in ["alpha", "beta"] {
        gw.cli(&["project", "create", p, "--search", "bm25"]);
    }
    gw.cli(&["grant", "--project", "alpha", "--server", "demo"]);
    let (alpha, beta) = (gw.issue_token("alpha"), gw.issue_token("beta"));
    let admin = admin_token(&gw);

    // Calls the usage view must show: successes and a failure of one tool.
    let client = gw.client_with_token(&alpha).await.unwrap();
    wait_for_tool(&client, EXECUTED_TOOL).await;
    let executed = 5;
    for i in 0..executed {
        let r = execute(&client, EXECUTED_TOOL, json!({ "text": format!("one two {i}") })).await;
        assert_ne!(r.is_error, Some(true), "{}", text(&r));
    }
    let bad = execute(&client, "demo:sha256", json!({ "nope": 1 })).await;
    assert_eq!(bad.is_error, Some(true));
    let beta_client = gw.client_with_token(&beta).await.unwrap();
    assert!(
        results(&beta_client, PLAY_QUERY).await.is_empty(),
        "beta sees nothing yet"
    );
    // A script of two calls: the page shows it as one request.
    let ran = call(
        &client,
        "tool_execute",
        json!({ "script": "const a = await tools.call('demo:calculate', { expression: '6*7' }); \
                           const b = await tools.call('demo:calculate', { expression: '1+1' }); \
                           return a.structuredContent.result + b.structuredContent.result;" }),
    )
    .await;
    assert_eq!(ran.structured_content.as_ref().unwrap()["result"], 44.0, "{ran:?}");
    // The audit writer commits behind the request path; wait for the script's row.
    let script_request = eventually(Duration::from_secs(5), "the script's audit row", || async {
        let rows: Value = serde_json::from_slice(
            &gw.cli(&["audit", "tail", "--project", "alpha", "-n", "5", "--json"])
                .stdout,
        )
        .unwrap();
        rows.as_array()?
            .iter()
            .find(|r| r["metaTool"] == "tool_execute" && r["toolKey"].is_null())
            .map(|r| r["requestId"].as_str().unwrap().to_string())
    })
    .await;

    let report_path = gw.dir.path().join("console-report.json");
    let artifacts = repo_path("target/console-screenshots");
    let out = std::process::Command::new("node")
        .args(["--test", "--test-concurrency=1", "test/console.test.mjs"])
        .current_dir(repo_path("widgets"))
        .env("CONSOLE_URL", base(&gw))
        .env("ADMIN_TOKEN", &admin)
        .env("PROJECT_TOKEN", &alpha)
        .env("HEALTHY", "demo")
        .env("FAILING", "broken")
        .env("GRANT_TO", "beta")
        .env("PLAY_PROJECT", "alpha")
        .env("PLAY_QUERY", PLAY_QUERY)
        .env("EXECUTED", executed.to_string())
        .env("EXECUTED_TOOL", EXECUTED_TOOL)
        .env("SCRIPT_REQUEST", &script_request)
        .env("CONSOLE_REPORT", &report_path)
        .env("CONSOLE_ARTIFACTS", &artifacts)
        .output()
        .expect("node runs (scripts/setup installs the widget test tools)");
    assert!(
        out.status.success(),
        "browser test failed:\n{}{}\ngateway log:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        gw.log()
    );
    let report: Value = serde_json::from_slice(&std::fs::read(&report_path).unwrap()).unwrap();

    // The failing server's row showed its error, and its stderr.
    assert!(
        report["failingStderr"]
            .as_str()
            .unwrap()
            .contains("no API key in BROKEN_KEY")
    );
    // The script was one request, its two calls under it in the order it made them.
    let shown: Vec<(String, String, String)> = report["request"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap().to_string();
            (s("requestId"), s("tool"), s("outcome"))
        })
        .collect();
    let p = &script_request;
    assert_eq!(
        shown,
        [
            (p.clone(), "script".into(), "ok".into()),
            (format!("{p}.1"), "demo:calculate".into(), "ok".into()),
            (format!("{p}.2"), "demo:calculate".into(), "ok".into())
        ]
    );
    let summary = report["request"]["summary"].as_str().unwrap();
    assert!(summary.contains("A script (code mode): ok, 2 call(s)"), "{summary}");

    // Its tools' rows said which projects see them.
    let tools = report["healthyTools"].as_array().unwrap();
    let word_count = tools.iter().find(|t| t["key"] == EXECUTED_TOOL).unwrap();
    assert_eq!(word_count["projects"], "alpha");

    // The grant made on the page applies to beta's next tool_discovery.
    let found = results(&beta_client, PLAY_QUERY).await;
    assert!(
        found.iter().any(|r| r["toolKey"] == EXECUTED_TOOL),
        "beta finds the granted tools: {found:?}"
    );

    // The playground showed what tool_discovery answers alpha, and why
    // each ranked (which the model's answer leaves out).
    let mcp: Vec<Value> = results(&client, PLAY_QUERY)
        .await
        .iter()
        .map(|r| json!({ "key": r["toolKey"], "relevance": r["relevance"] }))
        .collect();
    assert!(!mcp.is_empty());
    let played = report["playground"].as_array().unwrap();
    let shown: Vec<Value> = played
        .iter()
        .map(|r| json!({ "key": r["key"], "relevance": r["relevance"] }))
        .collect();
    assert_eq!(shown, mcp);
    assert!(played.iter().any(|r| r["explanation"].is_string()), "{played:?}");
    assert_eq!(report["provider"], "bm25");
    // ...and apart, marked hidden, the matches alpha cannot see.
    let hidden: Vec<&str> = report["hidden"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        hidden.contains(&"other:word_count"),
        "{hidden:?} {report}\n{}",
        gw.log()
    );
    assert!(hidden.iter().all(|k| k.starts_with("other:")), "{hidden:?}");
    // Each says why.
    let why = report["hiddenWhy"].as_array().unwrap();
    assert_eq!(why.len(), hidden.len(), "{report}");
    assert!(
        why.iter()
            .all(|w| w == "Hidden: project 'alpha' is not granted server 'other'"),
        "{why:?}"
    );

    // The charts counted this test's calls: every execute and discovery so far.
    assert!(report["chartTotal"].as_u64().unwrap() >= executed + 2);
    assert_eq!(report["toolBar"].as_u64().unwrap(), executed);
    assert_eq!(report["failingBars"], json!(["demo:sha256"]));
    assert_eq!(report["toolAlone"], json!([EXECUTED_TOOL]));

    // The token issued on the page was revoked there, and the store says so.
    let id = report["token"]["id"].as_i64().unwrap();
    assert!(
        gw.client_with_token(report["token"]["secret"].as_str().unwrap())
            .await
            .is_err()
    );
    let listed = gw.cli(&["token", "list", "--project", "beta", "--json"]);
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let token = listed.as_array().unwrap().iter().find(|t| t["id"] == id).unwrap();
    assert_eq!(token["label"], "from-console");
    assert!(token["revokedAt"].is_string());

    // Every change is in the admin log, by the admin token that made it.
    let actions: Vec<(String, String)> = overview(&gw, &admin).await["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["actor"] == "admin-token:1")
        .map(|a| {
            (
                a["action"].as_str().unwrap().into(),
                a["target"].as_str().unwrap().into(),
            )
        })
        .collect();
    let printed = gw.cli(&["audit", "actions", "--json"]);
    let printed: Value = serde_json::from_slice(&printed.stdout).unwrap();
    assert_eq!(
        printed.as_array().unwrap().len(),
        overview(&gw, &admin).await["actions"].as_array().unwrap().len()
    );
    for (action, target) in [
        ("grant", "project beta, server demo".to_string()),
        ("token.issue", format!("project beta, token #{id}")),
        ("token.revoke", format!("token #{id}")),
    ] {
        assert!(
            actions.contains(&(action.to_string(), target.clone())),
            "{action} {target} in {actions:?}"
        );
    }
}

#[tokio::test]
#[ignore = "full tier: needs oidc-provider (scripts/setup)"]
async fn only_operators_get_in_and_changes_need_the_consoles_own_page() {
    let provider = common::oauth::jwt_provider();
    let gw = Gateway::start_knowing_url(|url| {
        format!(
            "[auth.oauth]\naudience = \"{url}\"\nscopes = [\"mcp:tools\"]\nadmin_scope = \"mcp:admin\"\n\
             [[auth.oauth.issuers]]\nissuer = \"{}\"\n[[auth.oauth.projects]]\nproject = \"alpha\"\nsubjects = [\"alice\", \"root\"]\n\n{}",
            provider.issuer,
            chaos_server("demo", "")
        )
    })
    .await;
    gw.cli(&["project", "create", "alpha"]);
    let project_token = gw.issue_token("alpha");
    let admin = admin_token(&gw);
    let api = |path: &str| format!("{}/console/api{path}", base(&gw));
    let http = reqwest::Client::new();
    let status = |r: reqwest::Response| r.status().as_u16();

    assert_eq!(status(http.get(api("/overview")).send().await.unwrap()), 401);
    let refused = http
        .get(api("/overview"))
        .bearer_auth(&project_token)
        .send()
        .await
        .unwrap();
    assert_eq!(status(refused), 403);
    assert_eq!(
        status(http.get(api("/overview")).bearer_auth(&admin).send().await.unwrap()),
        200
    );
    // A request's rows are for operators too; an unknown id is a clear 404.
    let rows = |token: &str| http.get(api("/requests/nope")).bearer_auth(token.to_string()).send();
    assert_eq!(status(rows(&project_token).await.unwrap()), 403);
    let unknown = rows(&admin).await.unwrap();
    assert_eq!(status(unknown), 404);
    // An admin token is no key to any project's tools.
    assert!(gw.client_with_token(&admin).await.is_err());

    // A restart asked for by an admin starts the server again, counted.
    let restart = http
        .post(api("/servers/demo/restart"))
        .bearer_auth(&admin)
        .send()
        .await
        .unwrap();
    assert_eq!(status(restart), 202);
    eventually(Duration::from_secs(20), "demo restarted and running", || async {
        let servers = overview(&gw, &admin).await["servers"].clone();
        let demo = servers.as_array()?.iter().find(|s| s["name"] == "demo")?.clone();
        (demo["restarts"] == 1 && demo["status"] == "running").then_some(())
    })
    .await;
    let relist = http
        .post(api("/servers/demo/relist"))
        .bearer_auth(&admin)
        .send()
        .await
        .unwrap();
    assert_eq!(status(relist), 202);
    let unknown = http
        .post(api("/servers/nope/restart"))
        .bearer_auth(&admin)
        .send()
        .await
        .unwrap();
    assert_eq!(status(unknown), 404);

    // OAuth: the admin scope opens the console; an ordinary token does not.
    let operator = provider.token("root", &gw.url, "mcp:tools mcp:admin").await;
    let user = provider.token("alice", &gw.url, "mcp:tools").await;
    assert_eq!(
        status(http.get(api("/overview")).bearer_auth(&operator).send().await.unwrap()),
        200
    );
    assert_eq!(
        status(http.get(api("/overview")).bearer_auth(&user).send().await.unwrap()),
        403
    );

    // A session: cookie plus CSRF token; a change without the token, or from
    // another origin, is refused; with both it goes through.
    let signed_in = http
        .post(api("/session"))
        .json(&json!({ "token": admin }))
        .send()
        .await
        .unwrap();
    assert_eq!(signed_in.status(), 200);
    let cookie = signed_in.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let cookie = cookie.split(';').next().unwrap().to_string();
    let csrf = signed_in.json::<Value>().await.unwrap()["csrf"]
        .as_str()
        .unwrap()
        .to_string();
    let grant = json!({ "server": "demo", "allow": true });
    let post = || {
        http.post(api("/projects/alpha/grants"))
            .header("cookie", &cookie)
            .json(&grant)
    };
    assert_eq!(status(post().send().await.unwrap()), 403, "no CSRF token");
    let forged = post()
        .header("x-csrf-token", &csrf)
        .header("origin", "http://evil.test")
        .send()
        .await
        .unwrap();
    assert_eq!(status(forged), 403, "another origin");
    let done = post().header("x-csrf-token", &csrf).send().await.unwrap();
    assert_eq!(status(done), 200);
    let session = || async {
        status(
            http.get(api("/session"))
                .header("cookie", &cookie)
                .send()
                .await
                .unwrap(),
        )
    };
    assert_eq!(session().await, 200);

    // Revoking the admin token ends its sessions at their next request.
    let out = gw.cli(&["token", "revoke", "--admin", "1"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(session().await, 401);
}
