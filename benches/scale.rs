//! Many sessions over every core: the demo server alone over streamable
//! HTTP, and the same server behind the gateway (its child over stdio) with
//! strict audit and with best effort, N sessions calling its `calculate` in
//! a loop (through `tool_execute` for the gateway), the three interleaved
//! rep by rep, a fresh process each rep. Reports calls/s, p50/p99 and CPU
//! per call: the process's own and, for the gateway, with its server.
//!
//! Run `scripts/scale` (this, then the other parts of the scale run), or
//! `cargo bench --bench scale`: SCALE_SESSIONS (default `1,16,64,256`),
//! SCALE_SECONDS (8 per rep, after a warm-up second) and SCALE_REPS (2).

use std::time::Duration;

use rmcp::model::CallToolRequestParams;
use serde_json::json;

mod common;

use common::measure::{Client, args, connect, machine, setting, settings, stolen};
use common::reps::{Rep, Summary, measure, sessions_on};

/// What one column measures.
#[derive(Clone, Copy)]
enum Subject {
    /// `mcp-gateway demo-server --http`: the server alone.
    Alone,
    /// The gateway, the demo server its child, every call's row durable first.
    Strict,
    /// The same, its rows written behind the answers.
    BestEffort,
}

impl Subject {
    const ALL: [Subject; 3] = [Subject::Alone, Subject::Strict, Subject::BestEffort];

    fn name(self) -> &'static str {
        match self {
            Subject::Alone => "demo server alone",
            Subject::Strict => "gateway, strict audit",
            Subject::BestEffort => "gateway, best effort",
        }
    }

    /// Starts it: its URL, its process, and the folder its config lives in.
    async fn start(self) -> (String, tokio::process::Child, Option<tempfile::TempDir>) {
        let audit = match self {
            Subject::Alone => {
                let (url, child) = common::spawn(&["demo-server", "--http", "127.0.0.1:0"]).await;
                return (url, child, None);
            }
            Subject::Strict => "strict",
            Subject::BestEffort => "best_effort",
        };
        let (url, child, dir) = common::serve(&format!(
            "[auth]\nallow_anonymous = true\nanonymous_project = \"scale\"\n[http]\nmax_sessions_per_caller = 4096\n[store]\naudit = \"{audit}\"\n[index]\nenabled = false\n[archives]\nenabled = false\n\n[[servers]]\nname = \"demo\"\ncommand = \"{}\"\nargs = [\"demo-server\"]\n",
            common::bin()
        ))
        .await;
        (url, child, Some(dir))
    }

    /// Session `n`'s `i`th call.
    fn call(self, n: usize, i: u64) -> CallToolRequestParams {
        let expression = json!({ "expression": format!("{n} + {i} * 2") });
        match self {
            Subject::Alone => CallToolRequestParams::new("calculate").with_arguments(args(expression)),
            Subject::Strict | Subject::BestEffort => CallToolRequestParams::new("tool_execute")
                .with_arguments(args(json!({ "toolKey": "demo:calculate", "arguments": expression }))),
        }
    }
}

/// One rep of `subject`: a fresh process, then `sessions` sessions calling for `seconds`.
async fn rep(subject: Subject, sessions: usize, seconds: u64) -> Rep {
    let (url, child, _dir) = subject.start().await;
    let pid = child.id().unwrap();
    let probe = ready(subject, &url).await;
    let clients = sessions_on(&url, sessions).await;
    let rep = measure(&clients, seconds, pid, |n, i| subject.call(n, i)).await;
    drop(probe);
    rep
}

/// A session once the subject answers its call (the gateway's catalog holds the demo's tools).
async fn ready(subject: Subject, url: &str) -> Client {
    let client = connect(url).await;
    for _ in 0..600 {
        let answered = client
            .call_tool(subject.call(0, 0))
            .await
            .is_ok_and(|r| r.is_error != Some(true));
        if answered {
            return client;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{} never answered calculate at {url}", subject.name());
}

#[tokio::main]
async fn main() {
    let sessions: Vec<usize> = settings("SCALE_SESSIONS", "1,16,64,256");
    let seconds = setting("SCALE_SECONDS", 8);
    let reps = setting("SCALE_REPS", 2);
    println!("machine: {}", machine());
    println!(
        "the demo's calculate, alone over HTTP and behind the gateway over stdio; {seconds} s a rep, {reps} reps interleaved"
    );
    for &n in &sessions {
        let mut results: Vec<Vec<Rep>> = Subject::ALL.iter().map(|_| Vec::new()).collect();
        let stolen_before = stolen();
        for _ in 0..reps {
            for (i, &subject) in Subject::ALL.iter().enumerate() {
                results[i].push(rep(subject, n, seconds).await);
            }
        }
        println!("\n{n} sessions | calls/s | p50 ms | p99 ms | CPU per call, with its server | own | errors");
        for (subject, reps) in Subject::ALL.iter().zip(&results) {
            let row = Summary::of(reps);
            println!(
                "{:<22} | {:>7.0} | {:>6.2} | {:>6.2} | {:>6.0} µs | {:>6.0} µs | {}",
                subject.name(),
                row.calls_per_second,
                row.p50,
                row.p99,
                row.with_children_per_call_us,
                row.own_per_call_us,
                row.errors
            );
        }
        println!(
            "CPU time other guests took from this machine over these reps: {:.1} s",
            stolen().saturating_sub(stolen_before).as_secs_f64()
        );
    }
}
