//! What the gateway hop costs: the same `calculate` call made straight to the
//! demo server and through `mcp-gateway` (tool_execute), with the same client
//! and transport on the client side. Run: `cargo bench --bench execute`.

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::json;

mod common;

type Client = RunningService<RoleClient, ()>;

async fn stdio(args: &[&str]) -> Client {
    let cmd = tokio::process::Command::new(common::bin()).configure(|c| {
        c.args(args)
            .env("RUST_LOG", "warn")
            .env("MCP_GATEWAY_MODEL_URL", common::OFFLINE_MODEL_URL);
    });
    let (t, _) = TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    ().serve(t).await.unwrap()
}

/// Starts `args` over HTTP and connects to it.
async fn http(args: &[&str]) -> (Client, tokio::process::Child) {
    let (url, child) = common::spawn(args).await;
    (
        ().serve(StreamableHttpClientTransport::from_uri(url)).await.unwrap(),
        child,
    )
}

fn direct(expression: &str) -> CallToolRequestParams {
    CallToolRequestParams::new("calculate")
        .with_arguments(json!({"expression": expression}).as_object().unwrap().clone())
}

fn via_gateway(expression: &str) -> CallToolRequestParams {
    CallToolRequestParams::new("tool_execute").with_arguments(
        json!({"toolKey": "demo:calculate", "arguments": {"expression": expression}})
            .as_object()
            .unwrap()
            .clone(),
    )
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let config = tempfile::NamedTempFile::with_suffix(".toml").unwrap();
    let store = tempfile::tempdir().unwrap();
    std::fs::write(
        config.path(),
        format!(
            "[auth]\nallow_anonymous = true\nanonymous_project = \"bench\"\n[store]\npath = \"{}\"\n\n[[servers]]\nname = \"demo\"\ncommand = \"{}\"\nargs = [\"demo-server\"]\n",
            store.path().join("bench.db").display(),
            common::bin()
        ),
    )
    .unwrap();
    let config = config.path().to_str().unwrap().to_string();

    let (demo_stdio, gw_stdio, (demo_http, _d), (gw_http, _g)) = rt.block_on(async {
        let gw = stdio(&["serve", "--config", &config]).await;
        // Wait until the gateway has listed the demo server's tools.
        for _ in 0..200 {
            let r = gw.call_tool(via_gateway("1")).await.unwrap();
            if r.is_error != Some(true) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        let gw_http = http(&["serve", "--config", &config, "--http", "127.0.0.1:0"]).await;
        for _ in 0..200 {
            if gw_http.0.call_tool(via_gateway("1")).await.unwrap().is_error != Some(true) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        (
            stdio(&["demo-server"]).await,
            gw,
            http(&["demo-server", "--http", "127.0.0.1:0"]).await,
            gw_http,
        )
    });

    let mut g = c.benchmark_group("calculate");
    g.measurement_time(Duration::from_secs(5));
    g.bench_function("direct/stdio", |b| {
        b.to_async(&rt)
            .iter(|| async { demo_stdio.call_tool(direct("6*7")).await.unwrap() });
    });
    g.bench_function("gateway/stdio", |b| {
        b.to_async(&rt)
            .iter(|| async { gw_stdio.call_tool(via_gateway("6*7")).await.unwrap() });
    });
    g.bench_function("direct/http", |b| {
        b.to_async(&rt)
            .iter(|| async { demo_http.call_tool(direct("6*7")).await.unwrap() });
    });
    g.bench_function("gateway/http", |b| {
        b.to_async(&rt)
            .iter(|| async { gw_http.call_tool(via_gateway("6*7")).await.unwrap() });
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
