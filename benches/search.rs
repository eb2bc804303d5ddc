//! Search speed and size at scale: index build and query latency over 1k,
//! 10k and 50k tools, and the memory a 10k-tool catalog holds. The tools are
//! the real ones of `benches/data`, repeated under new server names.
//! Run: `cargo bench --bench search`.

use std::path::Path;
use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use mcp_gateway::catalog::rules::Rules;
use mcp_gateway::catalog::{Snapshot, View};
use mcp_gateway::eval::Bench;
use mcp_gateway::search::Request;
use mcp_gateway::store::Grants;
use rmcp::model::Tool;

/// `n` tools: the benchmark catalog, cycled, each copy on its own server.
fn catalog(bench: &Bench, n: usize) -> Vec<(String, Option<String>, Vec<Tool>)> {
    let mut out = Vec::new();
    let mut left = n;
    for copy in 0.. {
        for s in &bench.servers {
            if left == 0 {
                return out;
            }
            let tools: Vec<Tool> = s.tools.iter().take(left).cloned().collect();
            left -= tools.len();
            out.push((format!("{}-{copy}", s.server), s.description.clone(), tools));
        }
    }
    out
}

fn build(servers: &[(String, Option<String>, Vec<Tool>)]) -> Snapshot {
    Snapshot::build(
        servers.iter().map(|(s, d, t)| (s.as_str(), d.as_deref(), &t[..])),
        &Rules::default(),
    )
    .unwrap()
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").parse().ok())
        .unwrap_or(0)
}

fn bench(c: &mut Criterion) {
    let bench = Bench::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/data")).unwrap();
    let queries = [
        "create a pull request on github",
        "read a file",
        "send a message to the team channel",
        "query the postgres database",
    ];

    let before = rss_kib();
    let ten_k = catalog(&bench, 10_000);
    let snapshot = build(&ten_k);
    let after = rss_kib();
    eprintln!(
        "memory: 10k tools (definitions + index) hold {} MiB of RSS",
        (after.saturating_sub(before)) / 1024
    );
    drop(snapshot);

    let mut g = c.benchmark_group("search");
    g.sample_size(10);
    for n in [1_000, 10_000, 50_000] {
        let servers = catalog(&bench, n);
        g.bench_with_input(BenchmarkId::new("index build", n), &servers, |b, s| b.iter(|| build(s)));
        let snapshot = Arc::new(build(&servers));
        let grants = Arc::new(Grants::all_of(servers.iter().map(|(s, _, _)| s.as_str())));
        let view = View::new(snapshot, grants);
        let mut i = 0;
        g.bench_with_input(BenchmarkId::new("query", n), &view, |b, v| {
            b.iter(|| {
                i += 1;
                let request = Request {
                    queries: vec![queries[i % queries.len()].to_string()],
                    context: None,
                    limit: 10,
                };
                v.search(&request)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
