//! Load: N concurrent MCP sessions over streamable HTTP, each alternating
//! `tool_execute` (the demo's `calculate`) and `tool_discovery` through the
//! gateway, side by side with the same `calculate` called on the demo server
//! directly, in the same run. Reports throughput, p50/p99 and the gateway's
//! added latency, errors, and the gateway's memory before and after.
//! Run: `cargo bench --bench load` (LOAD_SESSIONS=16, LOAD_SECONDS=10 by
//! default; LOAD_SECONDS=600 is the 10-minute soak). The gateway reaches the
//! demo over HTTP, or with LOAD_DOWNSTREAM=stdio as its child process (the
//! direct calls always go to the demo over HTTP). LOAD_MIX=execute leaves
//! out `tool_discovery`, so the gateway's own CPU per call (user + system
//! time of its process, from /proc) is the CPU of one `tool_execute`.
//! LOAD_STORE=postgres puts the store in a throwaway PostgreSQL cluster (as
//! the tests start it) instead of a SQLite file; LOAD_REPLICAS=2 runs two
//! gateways on that store behind HAProxy (`deploy/haproxy.cfg`), and the
//! sessions go through HAProxy (CPU is then both gateways' together).
//! LOAD_AUDIT=best_effort writes audit rows behind the answers instead of
//! the default strict audit (an answer waits for its row), to measure what
//! the guarantee costs.

use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use serde_json::json;

mod common;
#[path = "../tests/suite/common/postgres.rs"]
mod postgres;

use common::measure::{args, connect, cpu_time, pct, rss_kib, setting};
use common::{spawn, spawn_with};

#[derive(Default)]
struct Samples {
    direct: Vec<Duration>,
    execute: Vec<Duration>,
    discovery: Vec<Duration>,
    errors: u64,
}

/// HAProxy on `deploy/haproxy.cfg` in front of the two gateways at `a` and `b`; its URL.
async fn haproxy(a: &str, b: &str) -> (String, tokio::process::Child) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let host = |url: &str| url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    let child = tokio::process::Command::new("haproxy")
        .args(["-db", "-f", concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/haproxy.cfg")])
        .env("GATEWAY_LISTEN", format!("127.0.0.1:{port}"))
        .env("REPLICA_A", host(a))
        .env("REPLICA_B", host(b))
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("haproxy runs");
    // Both replicas pass their first health checks.
    tokio::time::sleep(Duration::from_secs(3)).await;
    (format!("http://127.0.0.1:{port}/mcp"), child)
}

#[tokio::main]
async fn main() {
    let sessions = setting("LOAD_SESSIONS", 16) as usize;
    let seconds = setting("LOAD_SECONDS", 10);
    let (demo_url, _demo) = spawn(&["demo-server", "--http", "127.0.0.1:0"]).await;
    let stdio = std::env::var("LOAD_DOWNSTREAM").is_ok_and(|d| d == "stdio");
    let execute_only = std::env::var("LOAD_MIX").is_ok_and(|m| m == "execute");
    let downstream = if stdio {
        format!("command = \"{}\"\nargs = [\"demo-server\"]", common::bin())
    } else {
        format!("url = \"{demo_url}\"")
    };
    let audit = std::env::var("LOAD_AUDIT").unwrap_or_else(|_| "strict".into());
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("gateway.toml");
    std::fs::write(
        &config,
        format!(
            "[auth]\nallow_anonymous = true\nanonymous_project = \"load\"\n[http]\nmax_sessions_per_caller = 4096\n[store]\naudit = \"{audit}\"\n[index]\nenabled = false\n[archives]\nenabled = false\n\n[[servers]]\nname = \"demo\"\n{downstream}\n"
        ),
    )
    .unwrap();
    let postgres = std::env::var("LOAD_STORE").is_ok_and(|s| s == "postgres");
    let store_url = postgres.then(|| postgres::Cluster::shared().database());
    let env: Vec<(&str, &str)> = store_url.iter().map(|url| ("MCP_GATEWAY_DB", url.as_str())).collect();
    let replicas = setting("LOAD_REPLICAS", 1);
    assert!(
        (1..=2).contains(&replicas),
        "LOAD_REPLICAS is 1 or 2 (deploy/haproxy.cfg has two)"
    );
    let mut gateways = Vec::new();
    for _ in 0..replicas {
        gateways.push(
            spawn_with(
                &["serve", "--http", "127.0.0.1:0", "--config", config.to_str().unwrap()],
                &env,
            )
            .await,
        );
    }
    let pids: Vec<u32> = gateways.iter().map(|(_, child)| child.id().unwrap()).collect();
    let gw_pid = pids[0];
    let (gw_url, _balancer) = if replicas == 1 {
        (gateways[0].0.clone(), None)
    } else {
        let balancer = haproxy(&gateways[0].0, &gateways[1].0).await;
        (balancer.0.clone(), Some(balancer.1))
    };

    // Wait for the demo's tools to be in the catalog.
    let probe = connect(&gw_url).await;
    loop {
        let r = probe
            .call_tool(
                CallToolRequestParams::new("tool_discovery").with_arguments(args(json!({ "query": "calculate" }))),
            )
            .await
            .unwrap();
        if r.structured_content
            .is_some_and(|s| s.to_string().contains("demo:calculate"))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let rss_before = rss_kib(gw_pid);
    // Ten samples over the run show whether memory stays flat.
    let sampler = tokio::spawn(async move {
        let every = Duration::from_secs(seconds.div_ceil(10).max(1));
        let mut samples = Vec::new();
        for _ in 0..10 {
            tokio::time::sleep(every).await;
            samples.push(rss_kib(gw_pid) / 1024);
        }
        samples
    });

    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let cpu_before: Duration = pids.iter().map(|&p| cpu_time(p)).sum();
    let workers: Vec<_> = (0..sessions)
        .map(|n| {
            let (gw_url, demo_url) = (gw_url.clone(), demo_url.clone());
            tokio::spawn(async move {
                let via = connect(&gw_url).await;
                let direct = connect(&demo_url).await;
                let mut s = Samples::default();
                let mut i = 0u64;
                while Instant::now() < deadline {
                    i += 1;
                    let expression = format!("{n} + {i} * 2");
                    let t = Instant::now();
                    let ok = direct
                        .call_tool(
                            CallToolRequestParams::new("calculate")
                                .with_arguments(args(json!({ "expression": expression }))),
                        )
                        .await
                        .is_ok_and(|r| r.is_error != Some(true));
                    s.direct.push(t.elapsed());
                    s.errors += u64::from(!ok);

                    let t = Instant::now();
                    let ok = via
                        .call_tool(CallToolRequestParams::new("tool_execute").with_arguments(args(
                            json!({ "toolKey": "demo:calculate", "arguments": { "expression": expression } }),
                        )))
                        .await
                        .is_ok_and(|r| r.is_error != Some(true));
                    s.execute.push(t.elapsed());
                    s.errors += u64::from(!ok);
                    if execute_only {
                        continue;
                    }

                    let t = Instant::now();
                    let ok = via
                        .call_tool(
                            CallToolRequestParams::new("tool_discovery")
                                .with_arguments(args(json!({ "query": ["convert a temperature", "hash some text"] }))),
                        )
                        .await
                        .is_ok_and(|r| r.is_error != Some(true));
                    s.discovery.push(t.elapsed());
                    s.errors += u64::from(!ok);
                }
                s
            })
        })
        .collect();
    let mut all = Samples::default();
    for w in workers {
        let s = w.await.unwrap();
        all.direct.extend(s.direct);
        all.execute.extend(s.execute);
        all.discovery.extend(s.discovery);
        all.errors += s.errors;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let cpu = pids
        .iter()
        .map(|&p| cpu_time(p))
        .sum::<Duration>()
        .saturating_sub(cpu_before);
    let rss_after = rss_kib(gw_pid);
    for v in [&mut all.direct, &mut all.execute, &mut all.discovery] {
        v.sort();
    }
    let gateway_calls = all.execute.len() + all.discovery.len();
    let hop = if stdio { "stdio" } else { "HTTP" };
    let store = if postgres { "PostgreSQL" } else { "SQLite" };
    let front = if replicas == 2 {
        "2 gateways behind HAProxy"
    } else {
        "1 gateway"
    };
    println!(
        "{sessions} sessions for {seconds} s over streamable HTTP ({front}, store in {store}; gateway -> demo over {hop})"
    );
    println!(
        "throughput through the gateway: {:.0} calls/s ({} calls); errors: {}",
        gateway_calls as f64 / elapsed,
        gateway_calls,
        all.errors
    );
    for (label, v) in [
        ("calculate, direct          ", &all.direct),
        ("calculate via tool_execute ", &all.execute),
        ("tool_discovery             ", &all.discovery),
    ] {
        println!(
            "{label} p50 {:.3} ms  p99 {:.3} ms  ({} calls)",
            pct(v, 0.5),
            pct(v, 0.99),
            v.len()
        );
    }
    println!(
        "added by the gateway (tool_execute - direct): p50 {:.3} ms, p99 {:.3} ms",
        pct(&all.execute, 0.5) - pct(&all.direct, 0.5),
        pct(&all.execute, 0.99) - pct(&all.direct, 0.99)
    );
    println!(
        "gateway CPU: {:.2} s user+system, {:.0} µs per call{}",
        cpu.as_secs_f64(),
        cpu.as_secs_f64() * 1e6 / gateway_calls.max(1) as f64,
        if execute_only {
            " (tool_execute only)"
        } else {
            " (tool_execute and tool_discovery alternating)"
        }
    );
    println!("gateway RSS: {rss_before} KiB before, {rss_after} KiB after");
    let samples = sampler.await.unwrap();
    println!("gateway RSS (MiB) every {} s: {samples:?}", seconds.div_ceil(10).max(1));
}
