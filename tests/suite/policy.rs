//! Issue #75: one answer to "what may this caller see and run". For each
//! reason a tool is shown or not (a grant, a tool's revoke, a rule, an
//! override's hiding and renaming, a tool for its App alone, a server that
//! runs only with a project's own secret, exposure) every face shows alike,
//! and nothing hidden is reachable by any name: `tools/list`, a call by its
//! listed name, `tool_discovery`, `tool_execute`, a script's `tools.call` and
//! `tools.search`, the console's playground and server view, and the
//! command line's `search` and `call`.

use crate::common;

use common::*;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// A tool as the caller would name it, why it is there or not, and whether
/// the model may see and run it (`model`) and whether the client lists it
/// by name (`listed`: an App's tool is listed for its App alone).
struct Probe {
    why: &'static str,
    key: &'static str,
    args: Value,
    model: bool,
    listed: bool,
}

fn probes() -> Vec<Probe> {
    let probe = |why, key, args, model, listed| Probe {
        why,
        key,
        args,
        model,
        listed,
    };
    vec![
        probe("granted", "alpha:echo", json!({}), true, true),
        probe(
            "renamed for p",
            "alpha:count_words",
            json!({ "text": "a b" }),
            true,
            true,
        ),
        probe(
            "its name before the rename",
            "alpha:word_count",
            json!({ "text": "a b" }),
            false,
            false,
        ),
        probe("a rule disables it", "alpha:fail", json!({}), false, false),
        probe("p's override hides it", "alpha:sleep", json!({ "ms": 1 }), false, false),
        probe(
            "revoked for p alone",
            "alpha:base64_encode",
            json!({ "text": "x" }),
            false,
            false,
        ),
        probe("its server is not granted", "beta:echo", json!({}), false, false),
        probe("for its App alone", "alpha:confirm", json!({}), false, true),
        probe("p has no secret for it, q has", "gamma:echo", json!({}), false, false),
    ]
}

/// `server:name` as `tools/list` names it: `server__name`.
fn listed_name(key: &str) -> String {
    key.replacen(':', "__", 1)
}

fn name_of(key: &str) -> &str {
    key.split_once(':').unwrap().1
}

async fn script(client: &Client, code: String) -> Value {
    let r = call(client, "tool_execute", json!({ "script": code })).await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    r.structured_content.unwrap()["result"].clone()
}

/// What each face does with `probe`: (face, whether it shows or runs it,
/// whether it should).
async fn faces(gw: &Gateway, client: &Client, admin: &str, probe: &Probe) -> Vec<(&'static str, bool, bool)> {
    let (key, name) = (probe.key, name_of(probe.key));
    let listed = client.list_all_tools().await.unwrap();
    let in_list = listed.iter().any(|t| t.name == listed_name(key));
    let by_name = CallToolRequestParams::new(listed_name(key)).with_arguments(probe.args.as_object().unwrap().clone());
    let ran_by_name = matches!(client.call_tool(by_name).await, Ok(r) if r.is_error != Some(true));

    let found = discover(client, json!(name)).await;
    let discovered = found.iter().any(|r| r["toolKey"] == key);
    let executed = execute(client, key, probe.args.clone()).await.is_error != Some(true);
    let script_ran = script(
        client,
        format!(
            "try {{ await tools.call({key:?}, {}); return 'ran'; }} catch (e) {{ return e.code; }}",
            probe.args
        ),
    )
    .await
        == "ran";
    let script_found = script(
        client,
        format!("return (await tools.search({name:?})).map(r => r.toolKey)"),
    )
    .await
    .as_array()
    .unwrap()
    .iter()
    .any(|k| k == key);
    let playground = gw.explained("p", json!(name)).await.iter().any(|r| r["toolKey"] == key);

    let searched = gw.cli(&["search", name, "--project", "p", "--json", "-n", "20"]);
    let searched: Value = serde_json::from_slice(&searched.stdout).unwrap();
    let cli_found = searched["results"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["toolKey"] == key);
    let cli_ran = gw
        .cli_output(&["call", key, &probe.args.to_string(), "--project", "p"])
        .status
        .success();

    let (server, _) = key.split_once(':').unwrap();
    let view: Value = reqwest::Client::new()
        .get(gw.url.replace("/mcp", &format!("/console/api/servers/{server}")))
        .bearer_auth(admin)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let console = view["tools"].as_array().into_iter().flatten().any(|t| {
        let seen_as = t["seenAs"]["p"]["key"].as_str().or(t["key"].as_str());
        seen_as == Some(key) && t["projects"].as_array().unwrap().iter().any(|p| p == "p")
    });

    let (listed, model) = (probe.listed, probe.model);
    vec![
        ("tools/list", in_list, listed),
        ("a call by its listed name", ran_by_name, listed),
        ("the console's server view", console, listed),
        ("tool_discovery", discovered, model),
        ("tool_execute", executed, model),
        ("a script's tools.call", script_ran, model),
        ("a script's tools.search", script_found, model),
        ("the console's playground", playground, model),
        ("mcp-gateway search", cli_found, model),
        ("mcp-gateway call", cli_ran, model),
    ]
}

#[tokio::test]
async fn every_face_shows_and_runs_what_the_policy_allows_and_nothing_else() {
    let confirm = json!([{
        "name": "confirm",
        "description": "Confirm a click in its App (test tool).",
        "inputSchema": { "type": "object" },
        "_meta": { "ui": { "resourceUri": "ui://widget/card.html", "visibility": ["app"] } }
    }]);
    let config = format!(
        "{}{}{}{}",
        chaos_server("alpha", &format!("env = {{ DEMO_EXTRA_TOOLS = '{confirm}' }}")),
        chaos_server("beta", ""),
        chaos_server("gamma", "shared = false"),
        r#"
[[rules]]
pattern = ["fail"]
server = "alpha"
enabled = false

[[overrides]]
tool = "alpha:sleep"
project = "p"
hidden = true

[[overrides]]
tool = "alpha:word_count"
project = "p"
name = "count_words"
"#
    );
    let gw = Gateway::start(&config).await;
    gw.cli(&["project", "create", "p", "--search", "bm25"]);
    for server in ["alpha", "gamma"] {
        gw.cli(&["grant", "--project", "p", "--server", server]);
    }
    gw.cli(&[
        "revoke",
        "--project",
        "p",
        "--server",
        "alpha",
        "--tool",
        "base64_encode",
    ]);
    gw.cli(&["project", "set-exposure", "p", "both"]);
    let client = gw.client_with_token(&gw.issue_token("p")).await.unwrap();
    // Every server up: what is hidden is hidden by the policy, not by a start.
    gw.gateway().ready().await;
    // Another project has its own secret for gamma, and so its own listing.
    gw.cli(&["project", "create", "q", "--search", "bm25"]);
    gw.cli(&["grant", "--project", "q", "--server", "gamma"]);
    gw.cli(&[
        "secret",
        "set",
        "--project",
        "q",
        "--server",
        "gamma",
        "--env",
        "DEMO_ACCOUNT=q",
    ]);
    let q = gw.client_with_token(&gw.issue_token("q")).await.unwrap();
    wait_for_tool(&q, "gamma:echo").await;
    let admin = gw.cli(&["token", "issue", "--admin", "--label", "policy", "--json"]);
    let admin: Value = serde_json::from_slice(&admin.stdout).unwrap();
    let admin = admin["token"].as_str().unwrap();

    let mut wrong = Vec::new();
    for probe in probes() {
        for (face, does, should) in faces(&gw, &client, admin, &probe).await {
            if does != should {
                let what = if should { "show or run" } else { "hide" };
                wrong.push(format!("{face} does not {what} {} ({})", probe.key, probe.why));
            }
        }
    }
    assert!(wrong.is_empty(), "faces disagree:\n{}", wrong.join("\n"));

    // Exposure: on `meta`, tools/list holds the meta-tools and the tools
    // that carry an App (the chaos `echo` does) or are for one, and a tool
    // no longer listed is not run by its listed name; the model's path runs
    // it as before.
    gw.cli(&["project", "set-exposure", "p", "meta"]);
    let client = gw.client_with_token(&gw.issue_token("p")).await.unwrap();
    let mut names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["alpha__confirm", "alpha__echo", "tool_discovery", "tool_execute"]
    );
    let words = json!({ "text": "a b" });
    let by_name = CallToolRequestParams::new("alpha__count_words").with_arguments(words.as_object().unwrap().clone());
    assert!(
        !matches!(client.call_tool(by_name).await, Ok(r) if r.is_error != Some(true)),
        "a name no longer listed runs nothing"
    );
    assert_ne!(execute(&client, "alpha:count_words", words).await.is_error, Some(true));
}
