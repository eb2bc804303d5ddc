//! What the per-call checks cost: resolving a caller (token lookup, constant-time
//! compare, project, grants) and queueing its audit row. Together they are the
//! overhead projects and tokens add to every `tool_execute`.
//! Run: `cargo bench --bench checks`.

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_gateway::auth::Authenticator;
use mcp_gateway::store::{self, Search, Store};

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(&dir.path().join("bench.db")).unwrap());
    store.create_project("p", Some(Search::Bm25)).unwrap();
    for server in ["fs", "gh", "db", "web"] {
        store.set_permission("p", server, None, true).unwrap();
        store.set_permission("p", server, Some("delete"), false).unwrap();
    }
    let (_, token) = store.issue_token("p", "bench").unwrap();
    let auth = Authenticator::new(store.clone(), None);

    let mut g = c.benchmark_group("checks");
    g.bench_function("authenticate (sqlite lookup + hash compare)", |b| {
        b.iter(|| store.authenticate(&token).unwrap().unwrap())
    });
    g.bench_function("caller (token, project hint, grants)", |b| {
        b.iter(|| auth.caller(Some(&token), Some("p")).unwrap())
    });
    g.bench_function("audit row queued", |b| {
        b.to_async(&rt)
            .iter(|| async { store.audit(store::audit_row("r", "tool_execute")).await })
    });
    g.finish();
    store.close();
}

criterion_group!(benches, bench);
criterion_main!(benches);
