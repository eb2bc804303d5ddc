//! A busy stateless server over the machine's cores. Sessions call
//! `tool_execute` of the chaos demo's `work` (rounds of SHA-256, one call at
//! a time per process, as a Node or Python server computes) through a
//! gateway whose server is marked `stateless_instances = N`, a fresh
//! gateway for each N. Reports calls/s, p50/p99, how many copies of the
//! server ran, and the CPU the gateway and its children spent per call.
//! Run: `cargo bench --bench instances` (INSTANCES=1,2,4, INSTANCES_SESSIONS=16,
//! INSTANCES_SECONDS=8 measured after 2 s of warm-up, INSTANCES_ROUNDS=100000: about 10 ms a call).

use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use serde_json::json;

mod common;

use common::measure::{Client, args, children, connect, cpu_with_children, machine, pct, setting, settings};
use common::serve;

/// Calls start this long before the window is measured: the copies start
/// while the first child is busy.
const WARM_UP: Duration = Duration::from_secs(2);

#[tokio::main]
async fn main() {
    let counts: Vec<u64> = settings("INSTANCES", "1,2,4");
    let sessions = setting("INSTANCES_SESSIONS", 16) as usize;
    let seconds = setting("INSTANCES_SECONDS", 8);
    let rounds = setting("INSTANCES_ROUNDS", 100_000);
    println!("{}", machine());
    println!(
        "{sessions} sessions, {seconds} s each; a call is {rounds} rounds of SHA-256, {:.2} ms on one core of this machine",
        one_call_on_one_core(rounds).as_secs_f64() * 1e3
    );
    println!(
        "| stateless_instances | copies that ran | calls/s | p50 | p99 | CPU per call (gateway + copies) | errors |"
    );
    println!("|---|---|---|---|---|---|---|");
    for n in counts {
        run(n, sessions, Duration::from_secs(seconds), rounds).await;
    }
}

/// The same work as one call, here on one thread.
fn one_call_on_one_core(rounds: u64) -> Duration {
    let t = Instant::now();
    std::hint::black_box(demo::work(rounds));
    t.elapsed()
}

async fn run(instances: u64, sessions: usize, window: Duration, rounds: u64) {
    let (url, gateway, _dir) = serve(&format!(
        "[auth]\nallow_anonymous = true\nanonymous_project = \"bench\"\n[http]\nmax_sessions_per_caller = 4096\n[index]\nenabled = false\n[archives]\nenabled = false\n\n[[servers]]\nname = \"pool\"\ncommand = \"{}\"\nargs = [\"demo-server\", \"--chaos\"]\nstateless_instances = {instances}\n",
        common::bin()
    ))
    .await;
    let pid = gateway.id().unwrap();
    let probe = connect(&url).await;
    while !call(&probe, 1).await {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let start = Instant::now() + WARM_UP;
    let end = start + window;
    let workers: Vec<_> = (0..sessions)
        .map(|_| {
            let url = url.clone();
            tokio::spawn(async move {
                let client = connect(&url).await;
                let (mut latencies, mut errors) = (Vec::new(), 0u64);
                while Instant::now() < end {
                    let t = Instant::now();
                    let ok = call(&client, rounds).await;
                    if t >= start && Instant::now() <= end {
                        latencies.push(t.elapsed());
                        errors += u64::from(!ok);
                    }
                }
                (latencies, errors)
            })
        })
        .collect();
    tokio::time::sleep_until(start.into()).await;
    let cpu_before = cpu_with_children(pid);
    tokio::time::sleep_until(end.into()).await;
    let cpu = cpu_with_children(pid).saturating_sub(cpu_before);
    let copies = children(pid).len();
    let (mut latencies, mut errors) = (Vec::new(), 0);
    for w in workers {
        let (l, e) = w.await.unwrap();
        latencies.extend(l);
        errors += e;
    }
    latencies.sort();
    let calls = latencies.len();
    println!(
        "| {instances} | {copies} | {:.0} | {:.2} ms | {:.2} ms | {:.2} ms | {errors} |",
        calls as f64 / window.as_secs_f64(),
        pct(&latencies, 0.5),
        pct(&latencies, 0.99),
        cpu.as_secs_f64() * 1e3 / calls.max(1) as f64,
    );
}

/// One `tool_execute` of `pool:work`; whether it succeeded.
async fn call(client: &Client, rounds: u64) -> bool {
    client
        .call_tool(CallToolRequestParams::new("tool_execute").with_arguments(args(
            json!({ "toolKey": "pool:work", "arguments": { "rounds": rounds } }),
        )))
        .await
        .is_ok_and(|r| r.is_error != Some(true))
}
