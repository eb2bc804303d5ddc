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
    let gw = Gateway::spawn(&format!("{ANONYMOUS}{servers}")).await;

    // What a client would list without the gateway: every tool, directly.
    let grant = |project: &str| {
        gw.cli(&["project", "create", project, "--search", "bm25"]);
        for server in ["alpha", "beta", "gamma"] {
            gw.cli(&["grant", "--project", project, "--server", server]);
        }
    };
    grant("direct");
    gw.cli(&["project", "set-exposure", "direct", "direct"]);
    let lister = gw.client_with_token(&gw.issue_token("direct")).await.unwrap();
    let warm = gw.client().await;
    for server in ["alpha", "beta", "gamma"] {
        wait_for_tool(&warm, &format!("{server}:sha256")).await;
    }
    let every: Vec<Tool> = lister.list_all_tools().await.unwrap();
    let all: i64 = every.iter().map(tokens).sum();
    let by_key = |key: &str| {
        let direct = key.replacen(':', "__", 1);
        tokens(every.iter().find(|t| t.name == direct).unwrap())
    };
    let discovered = async |client: &rmcp::service::RunningService<rmcp::RoleClient, ()>| {
        let r = call(
            client,
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

    // A session of its own, on the default exposure: the meta-tools, then
    // two discoveries. The catalog counts its tokens off the request path
    // each time it is built, so a discovery meanwhile saves nothing (its row
    // says NULL); a session that met one runs again, as a new project.
    let db = gw.dir.path().join("mcp-gateway.db");
    let mut attempt = 0;
    let (measured, client, expected, first, second, meta) = loop {
        attempt += 1;
        let measured = format!("measured{attempt}");
        grant(&measured);
        let client = gw.client_with_token(&gw.issue_token(&measured)).await.unwrap();
        let meta = tokens(&client.list_all_tools().await.unwrap()[..2]);
        let first = discovered(&client).await;
        let second = discovered(&client).await;
        let (counted, rows) = eventually(Duration::from_secs(10), "the discoveries' rows", || async {
            let conn = rusqlite::Connection::open(&db).unwrap();
            let counts: (i64, i64) = conn
                .query_row(
                    "SELECT count(a.saved_tokens), count(*) FROM audit_log a JOIN projects p ON p.id = a.project_id
                     WHERE p.name = ?1 AND a.meta_tool = 'tool_discovery'",
                    [&measured],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .unwrap();
            (counts.1 == 2).then_some(counts)
        })
        .await;
        if counted == rows {
            break (measured, client, all - meta - first - second, first, second, meta);
        }
        assert!(attempt < 5, "no session of five met a counted catalog throughout");
    };

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
    let row = usage["projects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == measured.as_str())
        .unwrap_or_else(|| panic!("{usage}"))
        .clone();
    let saved = row["savedTokens"].as_i64().unwrap();
    assert!(
        expected > 0,
        "the listing outweighs what was read: {all} {meta} {first} {second}"
    );
    assert_eq!(saved, expected, "{usage}");
    let kept = row["keptBytes"].as_i64().unwrap();
    assert!(
        (65_536..70_000).contains(&kept),
        "the 64 KiB stayed in the script: {kept}"
    );

    // The text says the same, and Prometheus counts it.
    let text = String::from_utf8(gw.cli(&["usage", "--range", "hour", "--project", &measured]).stdout).unwrap();
    assert!(
        text.contains(&format!("discovery saved {saved} tokens (o200k)")),
        "{text}"
    );
    let metrics = gw.metrics().await;
    assert!(
        metrics.contains(&format!("mcp_gateway_tokens_saved{{project=\"{measured}\"}} {saved}")),
        "{metrics}"
    );
    assert!(
        metrics.contains(&format!(
            "mcp_gateway_code_mode_bytes_kept_total{{project=\"{measured}\"}} {kept}"
        )),
        "{metrics}"
    );
}
