//! Hot reload: editing `gateway.toml` (or SIGHUP) changes the running
//! gateway without a restart and without dropping calls to servers the edit
//! leaves alone.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::*;
use rmcp::service::NotificationContext;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::json;

/// A client that counts `notifications/tools/list_changed`.
#[derive(Clone, Default)]
struct Counter(Arc<AtomicUsize>);

impl ClientHandler for Counter {
    async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl Counter {
    fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// A stdio client's cold start: the servers come up after its session
/// opened, but what it lists, the two meta-tools, never changes, so it is
/// told nothing (each cold start sent two `tools/list_changed`). A server
/// that brings an App changes the list: that is told.
#[tokio::test]
async fn a_cold_start_tells_a_meta_client_nothing_and_an_apps_arrival_it_is_told() {
    let demo = format!(
        "{ANONYMOUS}[[servers]]\nname = \"demo\"\ncommand = \"{}\"\nargs = [\"demo-server\"]\n\n",
        bin()
    );
    let changes = Counter::default();
    let (client, _, dir) = stdio_gateway_with(&demo, changes.clone()).await;
    wait_for_tool(&client, "demo:calculate").await;
    // Access changes are looked at each second: two of them pass.
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    assert_eq!(changes.get(), 0, "the meta-tools did not change");

    std::fs::write(
        dir.path().join("gateway.toml"),
        format!("{demo}{}", chaos_server("apps", "")),
    )
    .unwrap();
    wait_for_tool(&client, "apps:echo").await;
    eventually(Duration::from_secs(10), "tools/list_changed for apps__echo", || async {
        (changes.get() > 0).then_some(())
    })
    .await;
    let listed = client.list_all_tools().await.unwrap();
    assert!(listed.iter().any(|t| t.name == "apps__echo"), "{listed:?}");
}

#[tokio::test]
async fn an_edited_config_is_applied_under_load_and_a_broken_one_is_refused() {
    let before = format!(
        "{ANONYMOUS}{}{}",
        chaos_server("steady", ""),
        chaos_server("leaving", "")
    );
    let gw = Gateway::spawn(&before).await;
    gw.cli(&["project", "create", "narrow"]);
    gw.cli(&["grant", "--project", "narrow", "--server", "steady"]);
    let narrow_token = gw.issue_token("narrow");

    let everything = Counter::default();
    let client = everything
        .clone()
        .serve(StreamableHttpClientTransport::from_uri(gw.url.as_str()))
        .await
        .unwrap();
    wait_for_tool(&client, "steady:sleep").await;
    wait_for_tool(&client, "leaving:calculate").await;
    let steady_only = Counter::default();
    let narrow = steady_only
        .clone()
        .serve(StreamableHttpClientTransport::from_config(
            StreamableHttpClientTransportConfig::with_uri(gw.url.as_str()).auth_header(narrow_token),
        ))
        .await
        .unwrap();
    wait_for_tool(&narrow, "steady:sleep").await;

    // Load on the server the edit leaves alone: calls are in flight during the reload.
    let stop = tokio_util::sync::CancellationToken::new();
    let load: Vec<_> = (0..3)
        .map(|_| {
            let url = gw.url.clone();
            let stop = stop.clone();
            tokio::spawn(async move {
                let client = ().serve(StreamableHttpClientTransport::from_uri(url.as_str())).await.unwrap();
                let (mut ok, mut failed) = (0, Vec::new());
                loop {
                    let call = execute(&client, "steady:sleep", json!({ "ms": 100 }));
                    tokio::select! {
                        r = call => if r.is_error == Some(true) { failed.push(text(&r)) } else { ok += 1 },
                        _ = stop.cancelled() => break,
                    }
                }
                (ok, failed)
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (everything_before, narrow_before) = (everything.get(), steady_only.get());

    let after = format!(
        "{ANONYMOUS}{}{}[[rules]]\nserver = \"arriving\"\npattern = [\"fail\"]\nenabled = false\n",
        chaos_server("steady", ""),
        chaos_server("arriving", "")
    );
    std::fs::write(gw.config_path(), &after).unwrap();
    let line = gw
        .wait_log("configuration reloaded", Duration::from_secs(10))
        .await
        .unwrap_or_else(|| panic!("no reload:\n{}", gw.log()));
    assert!(
        line.contains(r#"added=["arriving"]"#)
            && line.contains(r#"removed=["leaving"]"#)
            && line.contains("restarted=[]"),
        "{line}"
    );

    wait_for_tool(&client, "arriving:calculate").await;
    let r = execute(&client, "arriving:calculate", json!({ "expression": "2+3" })).await;
    assert_eq!(text(&r), "2+3 = 5", "{r:?}");
    assert_eq!(
        error_code(&execute(&client, "leaving:calculate", json!({ "expression": "1" })).await),
        "TOOL_NOT_FOUND"
    );
    assert_eq!(
        error_code(&execute(&client, "arriving:fail", json!({})).await),
        "TOOL_NOT_FOUND",
        "the new rule applies"
    );
    assert!(
        !discover(&client, json!(["fail"]))
            .await
            .iter()
            .any(|r| r["toolKey"] == "arriving:fail"),
        "what execute refuses, discovery hides"
    );
    eventually(
        Duration::from_secs(5),
        "tools/list_changed for the session that saw the change",
        || async { (everything.get() > everything_before).then_some(()) },
    )
    .await;

    // A file that does not validate: refused with file, line and key; the gateway goes on.
    std::fs::write(gw.config_path(), after.replace("args =", "argz =")).unwrap();
    gw.wait_log("new configuration refused", Duration::from_secs(10))
        .await
        .unwrap_or_else(|| panic!("no refusal:\n{}", gw.log()));
    let log = gw.log();
    let refusal = &log[log.find("new configuration refused").unwrap()..];
    assert!(
        refusal.contains("gateway.toml: TOML parse error at line") && refusal.contains("unknown field `argz`"),
        "{refusal}"
    );
    let r = execute(&client, "arriving:calculate", json!({ "expression": "6*7" })).await;
    assert_eq!(text(&r), "6*7 = 42", "the previous configuration stays in force: {r:?}");

    // SIGHUP re-reads the file (still broken: refused again, nothing changes).
    signal(gw.pid(), nix::sys::signal::Signal::SIGHUP);
    eventually(Duration::from_secs(5), "a second refusal after SIGHUP", || async {
        (gw.log().matches("new configuration refused").count() >= 2).then_some(())
    })
    .await;

    stop.cancel();
    let mut calls = 0;
    for task in load {
        let (ok, failed) = task.await.unwrap();
        assert!(failed.is_empty(), "calls to the untouched server failed: {failed:?}");
        calls += ok;
    }
    assert!(calls >= 10, "only {calls} calls went through during the test");
    assert_eq!(
        steady_only.get(),
        narrow_before,
        "a session whose tools did not change is not told they did"
    );

    // A rule that hides one of steady's tools, its App's among them, changes
    // what the narrow session lists: now it is told.
    // Saved as editors do: a new file renamed over the old one (a watch on
    // the old file itself would miss it).
    let steady_rule = "[[rules]]\nserver = \"steady\"\npattern = [\"fail\", \"echo\"]\nenabled = false\n";
    let swap = gw.dir.path().join(".gateway.toml.swp");
    std::fs::write(&swap, format!("{after}{steady_rule}")).unwrap();
    std::fs::rename(&swap, gw.config_path()).unwrap();
    eventually(
        Duration::from_secs(10),
        "tools/list_changed for the narrow session",
        || async { (steady_only.get() > narrow_before).then_some(()) },
    )
    .await;
    assert_eq!(
        error_code(&execute(&narrow, "steady:fail", json!({})).await),
        "TOOL_NOT_FOUND"
    );

    // Saved in place by a writer held up between truncating the file and
    // writing it: the empty file in between drops no server.
    std::fs::write(gw.config_path(), "").unwrap();
    gw.wait_log("the config file is empty", Duration::from_secs(10))
        .await
        .unwrap_or_else(|| panic!("the empty file was not noticed:\n{}", gw.log()));
    let r = execute(&client, "arriving:calculate", json!({ "expression": "6*7" })).await;
    assert_eq!(text(&r), "6*7 = 42", "the configuration in force stays: {r:?}");

    let metrics = gw.metrics().await;
    for line in [
        r#"mcp_gateway_config_reloads_total{outcome="applied"} 2"#,
        r#"mcp_gateway_config_reloads_total{outcome="refused"} 2"#,
        r#"mcp_gateway_downstream_up{server="leaving"} 0"#,
        r#"mcp_gateway_downstream_up{server="arriving"} 1"#,
    ] {
        assert!(metrics.contains(line), "{line} missing from /metrics:\n{metrics}");
    }
}

/// Issue 33: a server a reload adds is in its first connection; a call that
/// comes right after the reload waits for it instead of calling its tool unknown.
#[tokio::test]
async fn a_call_right_after_a_reload_waits_for_the_server_it_added() {
    let before = format!("{ANONYMOUS}{}", chaos_server("steady", ""));
    let gw = Gateway::start(&before).await;
    let client = gw.client().await;
    wait_for_tool(&client, "steady:calculate").await;
    std::fs::write(gw.config_path(), format!("{before}{}", slow_server("arriving", 3, ""))).unwrap();
    // Reloaded: the registry has the new server, still starting.
    eventually(Duration::from_secs(10), "the reload", || async {
        let ready = gw.readyz().await;
        ready["servers"]
            .as_array()?
            .iter()
            .any(|s| s["name"] == "arriving")
            .then_some(())
    })
    .await;
    let r = execute(&client, "arriving:calculate", json!({ "expression": "2+3" })).await;
    assert_eq!(text(&r), "2+3 = 5", "{r:?}");
}

/// The status of an anonymous `initialize` at `url`.
async fn anonymous_initialize(url: &str) -> u16 {
    let init = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }
    });
    reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// Issue #75: who gets in follows the file at once. Removing `[auth]`
/// locks a running gateway, for new callers and for the session an
/// anonymous caller opened alike; putting it back opens it again.
#[tokio::test]
async fn removing_auth_locks_the_running_gateway_at_once() {
    let servers = chaos_server("team", "");
    let gw = Gateway::start(&format!("{ANONYMOUS}{servers}")).await;
    let open = gw.client().await;
    assert!(!discover(&open, json!("echo")).await.is_empty());

    std::fs::write(gw.config_path(), &servers).unwrap();
    eventually(Duration::from_secs(10), "anonymous callers refused", || async {
        (anonymous_initialize(&gw.url).await == 401).then_some(())
    })
    .await;
    let params = rmcp::model::CallToolRequestParams::new("tool_discovery")
        .with_arguments(json!({ "query": "echo" }).as_object().unwrap().clone());
    assert!(
        open.call_tool(params).await.is_err(),
        "the anonymous session is refused too"
    );

    std::fs::write(gw.config_path(), format!("{ANONYMOUS}{servers}")).unwrap();
    eventually(Duration::from_secs(10), "anonymous callers let in again", || async {
        (anonymous_initialize(&gw.url).await == 200).then_some(())
    })
    .await;
    assert!(!discover(&gw.client().await, json!("echo")).await.is_empty());
}
