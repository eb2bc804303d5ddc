//! What the per-call checks cost: resolving a caller (token lookup, constant-time
//! compare, project, grants) and queueing its audit row. Together they are the
//! overhead projects and tokens add to every `tool_execute`. Also what an
//! OAuth access token costs instead: an RS256 JWT from a real authorization
//! server (`tests/oauth/provider.mjs`, so `scripts/setup` first), verified
//! against its JWKS (cached) and mapped to a project. And what per-project
//! credentials add to each call: the read of the project's rows for the
//! server (none, or a header whose opened value is cached). Callers and
//! credentials are cached while the store's access generation stays the
//! same: a request then pays one one-row read, measured here too, and the
//! reads behind it only after a change.
//! Run: `cargo bench --bench checks`.

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_gateway::access::Search;
use mcp_gateway::auth::{Authenticator, Doors};
use mcp_gateway::config::Config;
use mcp_gateway::oauth::Verifier;
use mcp_gateway::store::{self, Store};
use mcp_gateway::vault::Vault;

#[path = "../tests/suite/common/oauth.rs"]
mod oauth;

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
    let audience = "http://127.0.0.1:8931/mcp";
    let provider = oauth::jwt_provider();
    let toml = format!(
        "[auth.oauth]\naudience = \"{audience}\"\nscopes = [\"mcp:tools\"]\n\
         [[auth.oauth.issuers]]\nissuer = \"{}\"\n[[auth.oauth.projects]]\nproject = \"p\"\nsubjects = [\"alice\"]\n",
        provider.issuer
    );
    let config = Config::parse(&toml, "bench", dir.path()).unwrap();
    let verifier = Arc::new(Verifier::new(config.oauth.unwrap()));
    let jwt = rt.block_on(provider.token("alice", audience, "mcp:tools"));
    let auth = Authenticator::new(
        store.clone(),
        Doors {
            anonymous_project: None,
            oauth: Some(verifier.clone()),
        },
    );
    // The first token fetches the issuer's metadata and keys; later ones use the cache.
    rt.block_on(auth.authenticate(Some(&jwt), None)).unwrap();

    let remote = Config::parse(
        "[[servers]]\nname = \"remote\"\nurl = \"http://127.0.0.1:9/mcp\"\n",
        "bench",
        dir.path(),
    )
    .unwrap()
    .servers
    .remove(0);
    let vault = Vault::new(store.clone());
    let without = store.project("p").unwrap().unwrap();
    let with = store.create_project("q", Some(Search::Bm25)).unwrap();
    vault
        .set(
            &with,
            "remote",
            mcp_gateway::credentials::CredentialKind::Header,
            "X-Account",
            "q-account",
        )
        .unwrap();
    let generation = store.access_generation().unwrap();
    assert!(
        rt.block_on(vault.for_server(&with, &remote, generation))
            .unwrap()
            .is_some()
    );
    // A generation no read has seen yet makes the vault read the rows again.
    let changed = std::cell::Cell::new(generation);
    let after_a_change = || {
        changed.set(changed.get() + 1);
        changed.get()
    };

    let mut g = c.benchmark_group("checks");
    g.bench_function("access generation (the one read every request makes)", |b| {
        b.iter(|| store.access_generation().unwrap());
    });
    g.bench_function("credentials: unchanged generation (cached)", |b| {
        b.to_async(&rt)
            .iter(|| async { vault.for_server(&with, &remote, generation).await.unwrap() });
    });
    g.bench_function(
        "credentials: after a change, project without its own (one indexed read)",
        |b| {
            b.to_async(&rt)
                .iter(|| async { vault.for_server(&without, &remote, after_a_change()).await.unwrap() });
        },
    );
    g.bench_function(
        "credentials: after a change, project with a header (read, fingerprint, cached open)",
        |b| {
            b.to_async(&rt)
                .iter(|| async { vault.for_server(&with, &remote, after_a_change()).await.unwrap() });
        },
    );
    g.bench_function("authenticate (sqlite lookup + hash compare)", |b| {
        b.iter(|| store.authenticate(&token).unwrap().unwrap());
    });
    g.bench_function("caller (token, project hint, grants; unchanged generation)", |b| {
        b.iter(|| auth.caller(Some(&token), Some("p")).unwrap());
    });
    g.bench_function("oauth: verify an RS256 JWT (cached JWKS)", |b| {
        b.to_async(&rt).iter(|| async { verifier.verify(&jwt).await.unwrap() });
    });
    g.bench_function("oauth: caller from a JWT (verify, map, project, grants)", |b| {
        b.to_async(&rt)
            .iter(|| async { auth.authenticate(Some(&jwt), Some("p")).await.unwrap() });
    });
    g.bench_function("audit row queued", |b| {
        b.to_async(&rt)
            .iter(|| async { store.audit(store::audit_row("r", "tool_execute")).await });
    });
    g.finish();
    store.close();
}

criterion_group!(benches, bench);
criterion_main!(benches);
