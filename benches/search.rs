//! Search speed and size at scale: index build and query latency over 1k,
//! 10k and 50k tools, and the memory a 10k-tool catalog holds. The tools are
//! the real ones of `benches/data`, repeated under new server names.
//! Run: `cargo bench --bench search`. With `--features semantic` (and the
//! model installed) it also prints hybrid query latency p50/p99 at 1k and
//! 10k tools (also with a project's memory of meanings full: 10,000
//! remembered queries) and the model's tool-embedding throughput. The
//! memory's scan alone, and its size at the caps, need no model.

use std::path::Path;
use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use mcp_gateway::access::Grants;
use mcp_gateway::catalog::{Snapshot, View};
use mcp_gateway::eval::Bench;
use mcp_gateway::learning::meanings::{Blend, Meanings};
use mcp_gateway::learning::retention::{PER_TOOL, TOTAL};
use mcp_gateway::search::Request;
use mcp_gateway::search::semantic::QueryVector;
use rmcp::model::Tool;
use rules::Rules;

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

/// A remembered query's text, as long as a typical request.
const QUERY_TEXT: &str = "what's the weather going to be like in Berlin tomorrow";

/// When the memory is read (2026-11-01).
const NOW: i64 = 1_793_491_200;

/// A project's memory of meanings at its caps: 10,000 queries, 32 for each of
/// 313 tools, each keyed by its text, its vector from `vector(i)`.
fn full_memory(vector: impl Fn(usize) -> Vec<f32>) -> Meanings {
    let mut m = Meanings::default();
    for i in 0..TOTAL {
        let tool = format!("server-{}:tool_{}", i / PER_TOOL, i % 7);
        m.record(&tool, format!("{QUERY_TEXT} {i}"), &QueryVector::new(&vector(i)), NOW);
    }
    m
}

/// A pseudo-random unit vector (SplitMix64): the scan costs the same whatever the values.
fn pseudo_unit(dim: usize, seed: u64) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let v: Vec<f32> = (0..dim)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) as f64 / u64::MAX as f64 - 0.5) as f32
        })
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / norm).collect()
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
    // The memory of meanings at its caps: 10,000 remembered queries of 384
    // dimensions, scanned for one new query.
    let full = full_memory(|i| pseudo_unit(384, i as u64));
    eprintln!(
        "meanings: a project's memory at the caps ({} queries, texts of {} chars) holds {} KiB",
        full.len(),
        QUERY_TEXT.len(),
        full.heap_bytes() / 1024
    );
    let query = QueryVector::new(&pseudo_unit(384, 999_999));
    let blend = Blend::default();
    g.bench_function("meanings pulls, 10k remembered", |b| {
        b.iter(|| full.pulls(&query, NOW, &blend));
    });
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
                    prior: None,
                };
                mcp_gateway::rank::local::bm25(v, &request)
            });
        });
    }
    g.finish();
}

/// Hybrid search: the real model embeds each query; tool vectors are those of
/// the benchmark's tools (cached by `mcp-gateway eval`), each copy reusing
/// its original's, so 10k tools cost one embedding pass of 1,764.
#[cfg(feature = "semantic")]
fn hybrid(_: &mut Criterion) {
    use std::time::Instant;

    use std::sync::RwLock;

    use mcp_gateway::learning::{Prior, terms::TermKeys};
    use mcp_gateway::rank::SearchProvider;
    use mcp_gateway::search::semantic::{DEFAULT_CACHE_PATH, DEFAULT_MODEL_DIR, Semantic, SemanticConfig, Vectors};

    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bench = Bench::load(&root.join("benches/data")).unwrap();
    let model = Arc::new(
        Semantic::load(&SemanticConfig {
            model_dir: root.join(DEFAULT_MODEL_DIR),
            cache_path: root.join(DEFAULT_CACHE_PATH),
            auto_install: false,
        })
        .expect("the model is installed (scripts/setup)"),
    );
    let originals = build(&catalog(&bench, bench.tool_count()));
    let (vectors, _) = model.vectors(&originals.semantic_texts(), || true).unwrap().unwrap();

    let texts: Vec<String> = originals.semantic_texts().into_iter().take(256).collect();
    let started = Instant::now();
    for batch in texts.chunks(32) {
        model
            .embed(&batch.iter().map(String::as_str).collect::<Vec<_>>())
            .unwrap();
    }
    eprintln!(
        "hybrid: tool embedding {:.1} tools/s (256 real tool texts, batches of 32)",
        texts.len() as f64 / started.elapsed().as_secs_f64()
    );

    // Distinct queries as people ask them (every task and step of the
    // benchmark): each is new to the query cache on its first pass.
    let queries: Vec<String> = bench
        .tasks
        .iter()
        .flat_map(|t| std::iter::once(t.query.clone()).chain(t.steps.iter().cloned()))
        .take(400)
        .collect();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let took = |run: &mut dyn FnMut(&str)| -> (f64, f64) {
        let mut ms: Vec<f64> = queries
            .iter()
            .map(|q| {
                let started = Instant::now();
                run(q);
                started.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        ms.sort_by(f64::total_cmp);
        (ms[ms.len() / 2], ms[ms.len() * 99 / 100])
    };
    let (p50, p99) = took(&mut |q| {
        model.embed(&[q]).unwrap();
    });
    eprintln!(
        "hybrid: query embedding alone p50 {p50:.2} ms, p99 {p99:.2} ms ({} distinct queries)",
        queries.len()
    );
    for n in [1_000, 10_000] {
        let servers = catalog(&bench, n);
        let before = rss_kib();
        let snapshot = build(&servers);
        let rows: Vec<Vec<f32>> = (0..snapshot.len() as u32)
            .map(|i| vectors.row(i % vectors.len() as u32))
            .collect();
        snapshot.set_vectors(Vectors::from_rows(&rows));
        let held = rss_kib().saturating_sub(before) / 1024;
        let grants = Arc::new(Grants::all_of(servers.iter().map(|(s, _, _)| s.as_str())));
        let view = View::new(Arc::new(snapshot), grants);
        // p50 and p99 with every query new, then asked again; a fresh model
        // handle each time, so its query cache starts empty.
        let new_then_again = |prior: Option<Prior>| {
            let provider = fresh_provider(root);
            let mut search = |q: &str| {
                let request = Request {
                    queries: vec![q.to_string()],
                    context: None,
                    limit: 10,
                    prior: prior.clone(),
                };
                runtime.block_on(provider.search(&view, &request)).unwrap();
            };
            (took(&mut search), took(&mut search))
        };
        let ((cold50, cold99), (warm50, warm99)) = new_then_again(None);
        eprintln!(
            "hybrid: {n} tools: tool_discovery p50 {cold50:.2} ms, p99 {cold99:.2} ms with every query new; \
             p50 {warm50:.2} ms, p99 {warm99:.2} ms asked again; catalog + index + vectors {held} MiB"
        );
        // The same with the project's memory of meanings full: 10,000
        // remembered queries (real query vectors, each tool of the catalog's first 313).
        let remembered: Vec<Vec<f32>> = model
            .embed(&queries.iter().map(String::as_str).collect::<Vec<_>>())
            .unwrap();
        let prior = Prior {
            learned: Default::default(),
            meanings: Some(Arc::new(RwLock::new(full_memory(|i| {
                remembered[i % remembered.len()].clone()
            })))),
            blend: Blend::default(),
            keys: TermKeys::Text,
            now: NOW,
        };
        let ((cold50, cold99), (warm50, warm99)) = new_then_again(Some(prior));
        eprintln!(
            "hybrid: {n} tools, 10k remembered queries: tool_discovery p50 {cold50:.2} ms, p99 {cold99:.2} ms \
             with every query new; p50 {warm50:.2} ms, p99 {warm99:.2} ms asked again"
        );
    }
}

#[cfg(feature = "semantic")]
criterion_group!(benches, bench, hybrid);
#[cfg(not(feature = "semantic"))]
criterion_group!(benches, bench);
criterion_main!(benches);

/// Hybrid search with a model handle of its own (its query cache empty).
fn fresh_provider(root: &Path) -> mcp_gateway::rank::Hybrid {
    use mcp_gateway::search::semantic::{DEFAULT_CACHE_PATH, DEFAULT_MODEL_DIR, Semantic, SemanticConfig};
    mcp_gateway::rank::Hybrid::new(Arc::new(
        Semantic::load(&SemanticConfig {
            model_dir: root.join(DEFAULT_MODEL_DIR),
            cache_path: root.join(DEFAULT_CACHE_PATH),
            auto_install: false,
        })
        .unwrap(),
    ))
}
