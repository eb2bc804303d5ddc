//! Wall time of a 50-result `discover_filter` with VibeCheck, through the
//! real gateway binary, against the fake Index Network answering every
//! Protocol API call in about 100 ms, at VibeCheck concurrency 2 and 5.
//! Run: `cargo bench --bench index`.

mod common;
#[path = "../tests/suite/fake_index/mod.rs"]
mod fake_index;
#[path = "../tests/suite/common/oauth.rs"]
mod oauth;

use std::process::Command;
use std::time::{Duration, Instant};

use fake_index::{FakeIndex, Fault, INTENT_A, INTENT_B};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;

const RUNS: usize = 3;

fn cli(config: &str, args: &[&str]) -> String {
    let out = Command::new(common::bin())
        .args(args)
        .args(["--config", config])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[tokio::main]
async fn main() {
    let fake = FakeIndex::start(50).await;
    let slow = |ms| Fault {
        delay: Duration::from_millis(ms),
        ..Fault::default()
    };
    fake.fault("filter", slow(100));
    // The fake's VibeCheck adds 20 ms of its own.
    fake.fault("vibecheck", slow(80));

    // Signed in as Index's authorization server says (a real oidc-provider).
    let index_as = oauth::jwt_provider();
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let resource = format!("http://{addr}/mcp");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.toml");
    std::fs::write(
        &config,
        fake.signed_in_config(&resource, &index_as.issuer, &[], "me", ""),
    )
    .unwrap();
    let config = config.to_str().unwrap();
    cli(config, &["project", "create", "p"]);
    cli(config, &["grant", "--project", "p", "--server", "index"]);
    let token = index_as.token("me", &resource, "mcp:tools privy:token:exchange").await;

    let (url, _gateway) = common::spawn(&["serve", "--http", &addr.to_string(), "--config", config]).await;
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url).auth_header(token),
    );
    let client = ().serve(transport).await.unwrap();
    // The index server's tools reach the catalog just after it starts.
    let discovery = json!({ "query": "discover filter" });
    loop {
        let r = client
            .call_tool(
                CallToolRequestParams::new("tool_discovery").with_arguments(discovery.as_object().unwrap().clone()),
            )
            .await
            .unwrap();
        if r.structured_content
            .is_some_and(|s| s.to_string().contains("index:discover_filter"))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    for concurrency in [2, 5] {
        let mut times = Vec::new();
        for _ in 0..RUNS {
            let args = json!({
                "toolKey": "index:discover_filter",
                "arguments": { "intentIds": [INTENT_A, INTENT_B], "limit": 50, "vibecheck": { "concurrency": concurrency } }
            });
            let started = Instant::now();
            let r = client
                .call_tool(CallToolRequestParams::new("tool_execute").with_arguments(args.as_object().unwrap().clone()))
                .await
                .unwrap();
            times.push(started.elapsed());
            let s = r.structured_content.expect("a discovery result");
            assert_eq!(s["vibechecks"].as_array().unwrap().len(), 50);
        }
        times.sort();
        println!(
            "discover_filter, 50 results, VibeCheck concurrency {concurrency}: median {:.2} s (runs: {})",
            times[RUNS / 2].as_secs_f64(),
            times
                .iter()
                .map(|t| format!("{:.2}", t.as_secs_f64()))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    println!("peak VibeChecks in flight: {}", fake.peak_vibechecks());
}
