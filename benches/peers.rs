//! The gateway beside its peers, in one run: the same stdio server
//! (server-everything) behind the gateway (its defaults: strict audit on
//! SQLite), supergateway and mcp-proxy, the same rmcp client calling its
//! `get-sum` over streamable HTTP from N sessions, the three interleaved
//! rep by rep. Reports calls/s, p50/p99 and each proxy's own CPU per call
//! (its process, not the server it runs).
//!
//! Run `scripts/peers` (it installs the peers from their registries into
//! `target/peers`, then runs this). PEERS_SESSIONS (default `1,16`),
//! PEERS_SECONDS (8 per rep) and PEERS_REPS (3) set the run;
//! PEERS_ONLY=gateway measures the gateway alone (for a profile).

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::json;

mod common;

use common::measure::{Client, args, machine, setting, settings, stolen};
use common::reps::{Rep, Summary, measure, sessions_on};

/// A proxy under test: how to start it, and how its tool is called.
#[derive(Clone, Copy, PartialEq)]
enum Peer {
    Gateway,
    Supergateway,
    McpProxy,
}

impl Peer {
    fn name(self) -> &'static str {
        match self {
            Peer::Gateway => "mcp-gateway",
            Peer::Supergateway => "supergateway 4.0.0",
            Peer::McpProxy => "mcp-proxy 0.13.0",
        }
    }
}

fn peers_dir() -> PathBuf {
    std::env::var_os("PEERS_DIR").map_or_else(
        || PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/target/peers")),
        PathBuf::from,
    )
}

/// `node …/server-everything stdio`, as each proxy runs it.
fn everything() -> (String, Vec<String>) {
    let script = peers_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(script.exists(), "{} is missing: run scripts/peers", script.display());
    ("node".into(), vec![script.display().to_string(), "stdio".into()])
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `peer`; its MCP URL, its process (whose CPU is counted), and what
/// must live as long as it.
async fn start(peer: Peer) -> (String, tokio::process::Child, Option<tempfile::TempDir>) {
    let (node, server) = everything();
    match peer {
        Peer::Gateway => {
            let dir = tempfile::tempdir().unwrap();
            let config = dir.path().join("gateway.toml");
            let quoted: Vec<String> = server.iter().map(|a| format!("{a:?}")).collect();
            std::fs::write(
                &config,
                format!(
                    "[auth]\nallow_anonymous = true\nanonymous_project = \"peers\"\n[http]\nmax_sessions_per_caller = 4096\n[index]\nenabled = false\n[archives]\nenabled = false\n\n[[servers]]\nname = \"everything\"\ncommand = \"{node}\"\nargs = [{}]\n",
                    quoted.join(", ")
                ),
            )
            .unwrap();
            let (url, child) =
                common::spawn(&["serve", "--http", "127.0.0.1:0", "--config", config.to_str().unwrap()]).await;
            (url, child, Some(dir))
        }
        Peer::Supergateway => {
            let port = free_port();
            let command = format!("{node} {}", server.join(" "));
            let child = tokio::process::Command::new("node")
                .arg(peers_dir().join("node_modules/supergateway/dist/index.js"))
                .args(["--stdio", &command, "--outputTransport", "streamableHttp", "--stateful"])
                .args(["--port", &port.to_string(), "--logLevel", "none"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .kill_on_drop(true)
                .spawn()
                .expect("node runs supergateway");
            (format!("http://127.0.0.1:{port}/mcp"), child, None)
        }
        Peer::McpProxy => {
            let port = free_port();
            let child = tokio::process::Command::new(peers_dir().join("venv/bin/mcp-proxy"))
                .args([
                    "--port",
                    &port.to_string(),
                    "--host",
                    "127.0.0.1",
                    "--log-level",
                    "WARNING",
                    &node,
                    "--",
                ])
                .args(&server)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .kill_on_drop(true)
                .spawn()
                .expect("mcp-proxy runs");
            (format!("http://127.0.0.1:{port}/mcp"), child, None)
        }
    }
}

/// The call each session repeats: `get-sum` directly, or through `tool_execute`.
fn get_sum(peer: Peer, a: u64, b: u64) -> CallToolRequestParams {
    let sum = json!({ "a": a, "b": b });
    match peer {
        Peer::Gateway => CallToolRequestParams::new("tool_execute")
            .with_arguments(args(json!({ "toolKey": "everything:get-sum", "arguments": sum }))),
        _ => CallToolRequestParams::new("get-sum").with_arguments(args(sum)),
    }
}

/// Connects once the peer answers, and its tool is there.
async fn ready(peer: Peer, url: &str) -> Client {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let attempt = async {
            let client = ().serve(StreamableHttpClientTransport::from_uri(url)).await.ok()?;
            let r = client.call_tool(get_sum(peer, 1, 2)).await.ok()?;
            (r.is_error != Some(true)).then_some(client)
        };
        if let Ok(Some(client)) = tokio::time::timeout(Duration::from_secs(5), attempt).await {
            return client;
        }
        assert!(
            Instant::now() < deadline,
            "{} never answered get-sum at {url}",
            peer.name()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn rep(peer: Peer, sessions: usize, seconds: u64) -> Rep {
    let (url, child, _dir) = start(peer).await;
    let pid = child.id().unwrap();
    let probe = ready(peer, &url).await;
    let clients = sessions_on(&url, sessions).await;
    let rep = measure(&clients, seconds, pid, |n, i| get_sum(peer, n as u64, i)).await;
    drop(probe);
    rep
}

/// The gateway's own CPU per call against the best peer's, round by round
/// of reps: a round's reps run within half a minute, so other guests' load
/// moves them together more than it moves a whole run (docs/src/measured.md).
fn paired(results: &[Vec<Rep>]) -> Vec<f64> {
    (0..results[0].len())
        .map(|i| {
            let best = results[1][i].own_per_call_us().min(results[2][i].own_per_call_us());
            results[0][i].own_per_call_us() / best
        })
        .collect()
}

#[tokio::main]
async fn main() {
    let sessions: Vec<usize> = settings("PEERS_SESSIONS", "1,16");
    let seconds = setting("PEERS_SECONDS", 8);
    let reps = setting("PEERS_REPS", 3);
    let peers: Vec<Peer> = match std::env::var("PEERS_ONLY").as_deref() {
        Ok("gateway") => vec![Peer::Gateway],
        _ => vec![Peer::Gateway, Peer::Supergateway, Peer::McpProxy],
    };
    println!("machine: {}", machine());
    println!("get-sum of server-everything over stdio behind each; {seconds} s a rep, {reps} reps interleaved");
    for &n in &sessions {
        let mut results: Vec<Vec<Rep>> = peers.iter().map(|_| Vec::new()).collect();
        let stolen_before = stolen();
        for _ in 0..reps {
            for (i, &peer) in peers.iter().enumerate() {
                results[i].push(rep(peer, n, seconds).await);
            }
        }
        println!("\n{n} sessions | calls/s | p50 ms | p99 ms | own CPU per call | errors");
        let mut per_call = Vec::new();
        for (peer, reps) in peers.iter().zip(&results) {
            let row = Summary::of(reps);
            per_call.push(row.own_per_call_us);
            println!(
                "{:<20} | {:>7.0} | {:>6.2} | {:>6.2} | {:>6.0} µs | {}",
                peer.name(),
                row.calls_per_second,
                row.p50,
                row.p99,
                row.own_per_call_us,
                row.errors
            );
        }
        println!(
            "CPU time other guests took from this machine over these reps: {:.1} s",
            stolen().saturating_sub(stolen_before).as_secs_f64()
        );
        for (peer, reps) in peers.iter().zip(&results) {
            let each: Vec<String> = reps
                .iter()
                .map(|r| format!("{:.0} µs ({:.1} s)", r.own_per_call_us(), r.stolen.as_secs_f64()))
                .collect();
            println!(
                "{:<20} rep by rep, own CPU per call (stolen meanwhile): {}",
                peer.name(),
                each.join(", ")
            );
        }
        if per_call.len() == 3 {
            let best = per_call[1].min(per_call[2]);
            println!(
                "gateway CPU per call against the best peer's: {:.2}×; rep by rep: {}",
                per_call[0] / best,
                paired(&results)
                    .iter()
                    .map(|r| format!("{r:.2}×"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
}
