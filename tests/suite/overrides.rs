//! `[[overrides]]` through the binary: a tool renamed, described, tagged or
//! hidden for every caller, in discovery, execute, direct exposure, code
//! mode and the audit log, across a reload, a restart and a rug pull.

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::{Value, json};

const SHA256_OF_ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

const OVERRIDES: &str = r#"
[[overrides]]
tool = "alpha:sha256"
name = "checksum"
description = "Fingerprint a text: its SHA-256 checksum, in hex."
tags = ["crypto"]

[[overrides]]
tool = "alpha:word_count"
hidden = true
"#;

/// The keys a discovery of `query` answers.
async fn keys(client: &rmcp::service::RunningService<rmcp::RoleClient, ()>, query: &str) -> Vec<String> {
    discover(client, json!(query))
        .await
        .iter()
        .map(|f| f["toolKey"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn an_override_renames_describes_tags_and_hides_for_every_caller() {
    let dir = tempfile::tempdir().unwrap();
    let hostile = dir.path().join("hostile");
    let config = format!(
        "{ANONYMOUS}[store]\npath = \"{}\"\n\n{}{OVERRIDES}",
        dir.path().join("gw.db").display(),
        chaos_server(
            "alpha",
            &format!("env = {{ DEMO_HOSTILE_FILE = \"{}\" }}", hostile.display())
        )
    );
    let mut gw = Gateway::start(&config).await;
    let client = gw.client().await;
    wait_for_tool(&client, "alpha:checksum").await;

    // Discovery shows the overridden form, and finds it by its new words.
    let found = discover(&client, json!("fingerprint a text")).await;
    assert_eq!(found[0]["toolKey"], "alpha:checksum", "{found:?}");
    assert_eq!(
        found[0]["description"],
        "Fingerprint a text: its SHA-256 checksum, in hex."
    );
    let found = gw.explained("local", json!("fingerprint a text")).await;
    assert_eq!(found[0]["toolName"], "checksum");
    assert!(
        found[0]["tags"].as_array().unwrap().contains(&json!("crypto")),
        "{found:?}"
    );
    let all = keys(&client, "count the words of a text, or hash it with sha256").await;
    assert!(
        !all.iter().any(|k| k == "alpha:sha256" || k == "alpha:word_count"),
        "the real name and the hidden tool stay out: {all:?}"
    );

    // Execute runs it under its new key only; the hidden tool is refused as unknown.
    let r = execute(&client, "alpha:checksum", json!({ "text": "abc" })).await;
    assert_eq!(text(&r), SHA256_OF_ABC, "{r:?}");
    for gone in ["alpha:sha256", "alpha:word_count"] {
        let r = execute(&client, gone, json!({ "text": "abc" })).await;
        assert_eq!(error_code(&r), "TOOL_NOT_FOUND", "{gone}: {r:?}");
    }
    // Code mode calls it by the same key.
    let r = call(
        &client,
        "tool_execute",
        json!({ "script": "return (await tools.call('alpha:checksum', { text: 'abc' })).text" }),
    )
    .await;
    assert_eq!(r.structured_content.unwrap()["result"], SHA256_OF_ABC);

    // The audit log keeps the key the server knows.
    let audit = String::from_utf8(gw.cli(&["audit", "tail", "-n", "20"]).stdout).unwrap();
    assert!(
        audit.contains("alpha:sha256") && !audit.contains("alpha:checksum"),
        "{audit}"
    );

    // A reload changes it at once, with no restart of the server.
    let pid = stats_pid(&client).await;
    std::fs::write(
        gw.config_path(),
        config.replace("its SHA-256 checksum", "the SHA-256 of it"),
    )
    .unwrap();
    eventually(Duration::from_secs(20), "the reloaded description", || async {
        let found = discover(&client, json!("fingerprint a text")).await;
        (found[0]["description"] == "Fingerprint a text: the SHA-256 of it, in hex.").then_some(())
    })
    .await;
    assert_eq!(stats_pid(&client).await, pid, "the server was not restarted");

    // The server changes its own description: the override still shows, and the tool is held.
    let notes_override = "\n[[overrides]]\ntool = \"alpha:notes\"\nname = \"read_notes\"\n";
    std::fs::write(gw.config_path(), format!("{config}{notes_override}")).unwrap();
    wait_for_tool(&client, "alpha:read_notes").await;
    assert_eq!(text(&execute(&client, "alpha:read_notes", json!({})).await), "buy milk");
    execute(&client, "alpha:turn_hostile", json!({})).await;
    let held = eventually(Duration::from_secs(20), "the renamed tool held", || async {
        let r = execute(&client, "alpha:read_notes", json!({})).await;
        (r.is_error == Some(true) && error_code(&r) == "TOOL_HELD_FOR_REVIEW").then_some(r)
    })
    .await;
    assert!(
        text(&held).contains("mcp-gateway tools approve alpha:notes"),
        "{}",
        text(&held)
    );

    // A restart keeps the overrides: they live in gateway.toml.
    drop(client);
    gw.stop().await;
    std::fs::remove_file(&hostile).ok();
    let gw = Gateway::start(&config).await;
    let client = gw.client().await;
    wait_for_tool(&client, "alpha:checksum").await;
    assert!(
        !keys(&client, "count the words of a text")
            .await
            .contains(&"alpha:word_count".to_string())
    );
}

/// The pid of the chaos server's process, from its `stats` tool.
async fn stats_pid(client: &rmcp::service::RunningService<rmcp::RoleClient, ()>) -> Value {
    execute(client, "alpha:stats", json!({}))
        .await
        .structured_content
        .unwrap()["pid"]
        .clone()
}

/// Direct exposure lists the tool under its new name, and `check` refuses
/// an override that names no configured server.
#[tokio::test]
async fn direct_exposure_uses_the_new_name_and_check_refuses_a_bad_override() {
    let gw = Gateway::start(&format!("{ANONYMOUS}{}{OVERRIDES}", chaos_server("alpha", ""))).await;
    gw.cli(&["project", "set-exposure", "local", "direct"]);
    let client = gw.client().await;
    let names = eventually(Duration::from_secs(20), "the direct tools", || async {
        let names: Vec<String> = client
            .list_all_tools()
            .await
            .unwrap()
            .iter()
            .map(|t| t.name.to_string())
            .collect();
        names.contains(&"alpha__checksum".to_string()).then_some(names)
    })
    .await;
    assert!(
        !names.iter().any(|n| n == "alpha__sha256" || n == "alpha__word_count"),
        "{names:?}"
    );
    let r = call(&client, "alpha__checksum", json!({ "text": "abc" })).await;
    assert_eq!(text(&r), SHA256_OF_ABC);
    // Issue #71: renamed, it no longer answers to its server's own name.
    let by_old_name = client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("sha256")
                .with_arguments(json!({ "text": "abc" }).as_object().unwrap().clone()),
        )
        .await;
    assert!(format!("{by_old_name:?}").contains("unknown tool"), "{by_old_name:?}");

    std::fs::write(
        gw.config_path(),
        format!(
            "{}[[overrides]]\ntool = \"gamma:x\"\nhidden = true\n",
            chaos_server("alpha", "")
        ),
    )
    .unwrap();
    let out = gw.cli_output(&["check"]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("overrides[0].tool: no server named 'gamma'"), "{err}");
}

/// A project's own overrides: it sees and searches its form, others see
/// the tool as everyone does, and a tool hidden for it alone is refused to
/// it alone.
#[tokio::test]
async fn a_projects_own_overrides_are_its_alone() {
    let own = r#"
[[overrides]]
tool = "alpha:sha256"
project = "ops"
name = "digest"
description = "Seal a release note with its digest."

[[overrides]]
tool = "alpha:calculate"
project = "ops"
hidden = true
"#;
    let gw = Gateway::start(&format!("{}{own}", chaos_server("alpha", ""))).await;
    for p in ["ops", "dev"] {
        gw.cli(&["project", "create", p, "--search", "bm25"]);
        gw.cli(&["grant", "--project", p, "--server", "alpha"]);
    }
    let ops = gw.client_with_token(&gw.issue_token("ops")).await.unwrap();
    let dev = gw.client_with_token(&gw.issue_token("dev")).await.unwrap();
    wait_for_tool(&ops, "alpha:digest").await;
    wait_for_tool(&dev, "alpha:sha256").await;

    // Each project searches its own words.
    let found = discover(&ops, json!("seal a release note")).await;
    assert_eq!(found[0]["toolKey"], "alpha:digest", "{found:?}");
    assert_eq!(found[0]["description"], "Seal a release note with its digest.");
    let theirs = discover(&dev, json!("seal a release note")).await;
    assert!(theirs.iter().all(|f| f["toolKey"] != "alpha:digest"), "{theirs:?}");

    let r = execute(&ops, "alpha:digest", json!({ "text": "abc" })).await;
    assert_eq!(text(&r), SHA256_OF_ABC);
    let r = execute(&dev, "alpha:sha256", json!({ "text": "abc" })).await;
    assert_eq!(text(&r), SHA256_OF_ABC);
    for (client, key) in [
        (&ops, "alpha:sha256"),
        (&dev, "alpha:digest"),
        (&ops, "alpha:calculate"),
    ] {
        let r = execute(client, key, json!({ "expression": "1 + 1", "text": "abc" })).await;
        assert_eq!(error_code(&r), "TOOL_NOT_FOUND", "{key}: {r:?}");
    }
    let r = execute(&dev, "alpha:calculate", json!({ "expression": "1 + 1" })).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");

    // Both calls of the server's sha256 are audited under its own key (the
    // last row may still be in the journal, which the store folds in behind).
    eventually(Duration::from_secs(10), "the three calls that ran, audited", || async {
        let audit = String::from_utf8(gw.cli(&["audit", "tail", "-n", "20"]).stdout).unwrap();
        let ran: Vec<String> = audit
            .lines()
            .filter(|l| l.contains("tool_execute   ok"))
            .filter_map(|l| l.split_whitespace().last().map(str::to_string))
            .collect();
        (ran == ["alpha:sha256", "alpha:sha256", "alpha:calculate"]).then_some(())
    })
    .await;

    // The operator's search says why ops does not see calculate.
    let out = gw.cli(&[
        "search",
        "calculate an arithmetic expression",
        "--project",
        "ops",
        "--hidden",
        "--json",
    ]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let calculate = report["hidden"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["toolKey"] == "alpha:calculate")
        .unwrap_or_else(|| panic!("{report}"));
    assert_eq!(calculate["hidden"], "an [[overrides]] entry in gateway.toml hides it");
}
