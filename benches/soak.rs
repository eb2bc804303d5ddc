//! Soak: many calls over rotating sessions, and whether the gateway's memory
//! stays flat. SOAK_SESSIONS (16) workers each open a session, make
//! SOAK_PER_SESSION (200) `tool_execute` calls of the demo's `calculate`
//! (a child over stdio, strict audit on SQLite), end the session, and open
//! the next, until SOAK_CALLS (100,000) calls are made. The gateway's RSS is
//! read after the first tenth of the calls (the baseline: caches, pools and
//! the allocator warmed up) and then every tenth; the run passes when the
//! last reading is within 10% of the baseline.
//! Run: `cargo bench --bench soak`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use serde_json::json;

mod common;

use common::measure::{args, connect, machine, rss_kib, setting};

#[tokio::main]
async fn main() {
    let sessions = setting("SOAK_SESSIONS", 16);
    let per_session = setting("SOAK_PER_SESSION", 200);
    let total = setting("SOAK_CALLS", 100_000);
    let (url, gateway, _dir) = common::serve(&format!(
        "[auth]\nallow_anonymous = true\nanonymous_project = \"soak\"\n[index]\nenabled = false\n[archives]\nenabled = false\n\n[[servers]]\nname = \"demo\"\ncommand = \"{}\"\nargs = [\"demo-server\"]\n",
        common::bin()
    ))
    .await;
    let pid = gateway.id().unwrap();
    println!("machine: {}", machine());
    println!("{total} calls, {sessions} workers, a new session every {per_session} calls");

    let made = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let workers: Vec<_> = (0..sessions)
        .map(|n| {
            let (url, made, errors) = (url.clone(), made.clone(), errors.clone());
            tokio::spawn(async move {
                let mut i = 0u64;
                'sessions: while made.load(Ordering::Relaxed) < total {
                    let client = connect(&url).await;
                    for _ in 0..per_session {
                        // Claimed before it is made: the workers stop at `total` together.
                        if made.fetch_add(1, Ordering::Relaxed) >= total {
                            let _ = client.cancel().await;
                            break 'sessions;
                        }
                        i += 1;
                        let call = CallToolRequestParams::new("tool_execute").with_arguments(args(
                            json!({ "toolKey": "demo:calculate", "arguments": { "expression": format!("{n} + {i}") } }),
                        ));
                        let ok = client.call_tool(call).await.is_ok_and(|r| r.is_error != Some(true));
                        errors.fetch_add(u64::from(!ok), Ordering::Relaxed);
                    }
                    // Ends the session (HTTP DELETE), as a well-behaved client does.
                    let _ = client.cancel().await;
                }
            })
        })
        .collect();

    let mut readings = Vec::new();
    let mut next = total / 10;
    while next <= total {
        while made.load(Ordering::Relaxed) < next {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        readings.push((next, rss_kib(pid)));
        next += total / 10;
    }
    for w in workers {
        w.await.unwrap();
    }
    let seconds = started.elapsed().as_secs_f64();
    let calls = made.load(Ordering::Relaxed).min(total);
    println!(
        "{calls} calls in {seconds:.0} s ({:.0}/s), {} errors",
        calls as f64 / seconds,
        errors.load(Ordering::Relaxed)
    );
    let shown: Vec<String> = readings
        .iter()
        .map(|(at, kib)| format!("{}k: {} MiB", at / 1000, kib / 1024))
        .collect();
    println!("RSS: {}", shown.join(", "));
    // Sessions the gateway still holds: a leak of them shows here first.
    let metrics = reqwest::get(url.replace("/mcp", "/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for line in metrics.lines().filter(|l| l.starts_with("mcp_gateway_sessions_")) {
        println!("{line}");
    }
    let (base, last) = (readings[0].1 as f64, readings[readings.len() - 1].1 as f64);
    println!(
        "RSS at the end against after the first tenth: {:+.1}% ({})",
        (last / base - 1.0) * 100.0,
        if last <= base * 1.1 {
            "within 10%"
        } else {
            "MORE than 10%"
        }
    );
}
