//! What the store costs a call on each engine: the reads every request makes
//! (the access generation; the caller behind a token when it changed), the
//! shared rate budget a replica takes per request on PostgreSQL, and an
//! audit row queued. SQLite is a file beside the gateway; PostgreSQL a
//! throwaway cluster on loopback (Debian's, as the tests start it).
//! Run: `cargo bench --bench store`.

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_gateway::access::Search;
use mcp_gateway::auth::Authenticator;
use mcp_gateway::config::StoreLocation;
use mcp_gateway::store::{self, Store};

#[path = "../tests/suite/common/postgres.rs"]
mod postgres;

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cluster = postgres::Cluster::shared();
    let engines = [
        ("sqlite", StoreLocation::File(dir.path().join("bench.db"))),
        (
            "postgres",
            StoreLocation::Postgres {
                url: cluster.database(),
                key_home: dir.path().join("pg"),
            },
        ),
    ];
    let mut g = c.benchmark_group("store");
    for (engine, at) in engines {
        let store = Arc::new(Store::open_at(&at).unwrap());
        store.create_project("p", Some(Search::Bm25)).unwrap();
        for server in ["fs", "gh", "db", "web"] {
            store.set_permission("p", server, None, true).unwrap();
        }
        let (_, token) = store.issue_token("p", "bench").unwrap();
        let auth = Authenticator::new(store.clone(), Default::default());
        g.bench_function(format!("{engine}: access generation (every request)"), |b| {
            b.iter(|| store.access_generation().unwrap());
        });
        g.bench_function(format!("{engine}: caller, generation unchanged (every request)"), |b| {
            b.iter(|| auth.caller(Some(&token), Some("p")).unwrap());
        });
        g.bench_function(format!("{engine}: authenticate a token (after a change)"), |b| {
            b.iter(|| store.authenticate(&token).unwrap().unwrap());
        });
        // Each request a second after the last: always within the budget.
        let now = std::cell::Cell::new(0i64);
        g.bench_function(format!("{engine}: shared rate budget taken"), |b| {
            b.iter(|| {
                now.set(now.get() + 1000);
                store.take_rate("bench", now.get(), 100, 0).unwrap().unwrap();
            });
        });
        g.bench_function(format!("{engine}: audit row queued"), |b| {
            b.to_async(&rt)
                .iter(|| async { store.audit(store::audit_row("r", "tool_execute")).await });
        });
        store.close();
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
