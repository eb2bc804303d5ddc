//! What the defences against hostile servers cost. Per call: screening
//! `tool_execute` arguments and a result for credentials. Per catalog
//! rebuild (off the request path): reviewing every listing against its pins
//! and scanning every tool's texts, on the 1,764 real tools of
//! `benches/data/catalog`.
//! Run: `cargo bench --bench security`.

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_gateway::config::SecurityConfig;
use mcp_gateway::leaks;
use mcp_gateway::security::Security;
use mcp_gateway::store::Store;
use mcp_gateway::vetting::scan;
use rmcp::model::Tool;
use serde_json::{Value, json};

fn catalog() -> Vec<(String, Vec<Tool>)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/data/catalog");
    std::fs::read_dir(dir)
        .unwrap()
        .map(|f| {
            let v: Value = serde_json::from_str(&std::fs::read_to_string(f.unwrap().path()).unwrap()).unwrap();
            (
                v["server"].as_str().unwrap().to_string(),
                serde_json::from_value(v["tools"].clone()).unwrap(),
            )
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("security");
    let arguments = json!({
        "owner": "modelcontextprotocol", "repo": "rust-sdk", "title": "Tasks: poll with backoff",
        "body": "When a task is still working, the client should wait for pollInterval before asking again.",
        "labels": ["enhancement", "tasks"], "draft": false
    });
    g.bench_function("scan tool_execute arguments (6 fields)", |b| {
        b.iter(|| leaks::scan(&arguments));
    });
    let page = "Results for 'raft leader election': 12 documents, newest first. ".repeat(64);
    g.bench_function("screen a 4 KiB text result", |b| b.iter(|| leaks::redact_text(&page)));
    let big = "Line of an ordinary log file with ids 3f9a2c and counts 1200.\n".repeat(16 * 1024);
    g.bench_function("screen a 1 MiB text result", |b| b.iter(|| leaks::redact_text(&big)));

    let servers = catalog();
    let listings: Vec<(&str, &[Tool])> = servers.iter().map(|(s, t)| (s.as_str(), &t[..])).collect();
    g.bench_function("scan 1,764 tools' texts", |b| {
        b.iter(|| {
            let neighbours = scan::Neighbours::new(&listings);
            listings
                .iter()
                .map(|(s, tools)| tools.iter().map(|t| scan::scan(s, t, &neighbours).len()).sum::<usize>())
                .sum::<usize>()
        });
    });
    let dir = tempfile::tempdir().unwrap();
    let security = Security::new(
        Arc::new(Store::open(&dir.path().join("bench.db")).unwrap()),
        SecurityConfig::default(),
    );
    security.review(&listings).unwrap(); // first sight: everything pinned
    g.bench_function("review 1,764 pinned tools (a catalog rebuild)", |b| {
        b.iter(|| security.review(&listings).unwrap());
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
