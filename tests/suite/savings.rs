//! What the gateway kept out of models' context, through the binary: a
//! session's discoveries counted in o200k tokens against listing every tool
//! it may see, and a script's tool results kept out, in `mcp-gateway
//! usage`, the console's usage API and Prometheus.

use crate::common;

use std::time::Duration;

use common::*;
use rmcp::model::Tool;
use serde_json::{Value, json};

/// o200k tokens of `v` as JSON, as the gateway counts them.
fn tokens<T: serde::Serialize + ?Sized>(v: &T) -> i64 {
    tiktoken_rs::o200k_base_singleton()
        .encode_ordinary(&serde_json::to_string(v).unwrap())
        .len() as i64
}

#[tokio::test]
async fn a_sessions_discoveries_and_a_scripts_results_are_counted_as_saved() {
    let servers: String = ["alpha", "beta", "gamma"].map(|s| chaos_server(s, "")).concat();
    let gw = Gateway::start(&format!("{ANONYMOUS}{servers}")).await;

    // What a client would list without the gateway: every tool, directly.
    // And the project measured here, on the default exposure.
    for project in ["direct", "measured"] {
        gw.cli(&["project", "create", project, "--search", "bm25"]);
        for server in ["alpha", "beta", "gamma"] {
            gw.cli(&["grant", "--project", project, "--server", server]);
        }
    }
    gw.cli(&["project", "set-exposure", "direct", "direct"]);
    let lister = gw.client_with_token(&gw.issue_token("direct")).await.unwrap();
    let warm = gw.client().await;
    for server in ["alpha", "beta", "gamma"] {
        wait_for_tool(&warm, &format!("{server}:sha256")).await;
    }
    let every: Vec<Tool> = lister.list_all_tools().await.unwrap();
    // The catalog counts its tokens off the request path, just after it is
    // built: a discovery before that saves nothing (its row says NULL).
    let db = gw.dir.path().join("mcp-gateway.db");
    eventually(Duration::from_secs(20), "the catalog's tokens counted", || async {
        discover(&gw.client().await, json!("anything")).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        let conn = rusqlite::Connection::open(&db).unwrap();
        let counted: Option<i64> = conn
            .query_row(
                "SELECT saved_tokens FROM audit_log WHERE meta_tool = 'tool_discovery' ORDER BY id DESC LIMIT 1",
                [],
                |r| r.get(0),
            )
            .ok()
            .flatten();
        counted.map(|_| ())
    })
    .await;
    let all: i64 = every.iter().map(tokens).sum();
    let by_key = |key: &str| {
        let direct = key.replacen(':', "__", 1);
        tokens(every.iter().find(|t| t.name == direct).unwrap())
    };

    // A session of its own: the meta-tools, then two discoveries.
    let client = gw.client_with_token(&gw.issue_token("measured")).await.unwrap();
    let meta = tokens(&client.list_all_tools().await.unwrap()[..2]);
    let discovered = || async {
        let r = call(
            &client,
            "tool_discovery",
            json!({ "query": "hash a text", "maxResults": 3 }),
        )
        .await;
        let keys: Vec<String> = r.structured_content.unwrap()["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["toolKey"].as_str().unwrap().to_string())
            .collect();
        keys.iter().map(|k| by_key(k)).sum::<i64>()
    };
    let first = discovered().await;
    let second = discovered().await;
    let expected = all - meta - first - second;

    // A script reads 64 KiB and returns its length.
    let r = call(
        &client,
        "tool_execute",
        json!({ "script": "const r = await tools.call('alpha:big', { kib: 64 }); return r.text.length" }),
    )
    .await;
    assert_eq!(r.structured_content.as_ref().unwrap()["result"], 65_536, "{r:?}");

    // The script's row lands behind its answer.
    let usage: Value = eventually(Duration::from_secs(10), "the script's row", || async {
        let usage: Value = serde_json::from_slice(&gw.cli(&["usage", "--range", "hour", "--json"]).stdout).unwrap();
        (usage["keptBytes"].as_i64() > Some(0)).then_some(usage)
    })
    .await;
    let measured = usage["projects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "measured")
        .unwrap_or_else(|| panic!("{usage}"))
        .clone();
    let saved = measured["savedTokens"].as_i64().unwrap();
    assert!(
        expected > 0,
        "the listing outweighs what was read: {all} {meta} {first} {second}"
    );
    assert_eq!(saved, expected, "{usage}");
    let kept = measured["keptBytes"].as_i64().unwrap();
    assert!(
        (65_536..70_000).contains(&kept),
        "the 64 KiB stayed in the script: {kept}"
    );

    // The text says the same, and Prometheus counts it.
    let text = String::from_utf8(gw.cli(&["usage", "--range", "hour", "--project", "measured"]).stdout).unwrap();
    assert!(
        text.contains(&format!("discovery saved {saved} tokens (o200k)")),
        "{text}"
    );
    let metrics = gw.metrics().await;
    assert!(
        metrics.contains(&format!("mcp_gateway_tokens_saved{{project=\"measured\"}} {saved}")),
        "{metrics}"
    );
    assert!(
        metrics.contains(&format!(
            "mcp_gateway_code_mode_bytes_kept_total{{project=\"measured\"}} {kept}"
        )),
        "{metrics}"
    );
}
