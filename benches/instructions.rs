//! Instructions per hot-path operation, counted by Valgrind's callgrind, so a
//! cost rise shows however noisy the machine is. Run `scripts/instructions`:
//! it builds this, runs it under callgrind and compares the counts with
//! `benches/instructions.baseline`. Run alone (`cargo bench --bench
//! instructions`), it runs every case natively once and prints wall times.
//!
//! Each case sets up and warms up, then runs its operation `n` times between
//! [`instructions_start`] and [`instructions_stop`], and prints `case NAME N`
//! (or `skip NAME: why`) on stdout. Callgrind dumps its counters on entering
//! either marker, so the dump at the second holds the case alone, every
//! thread of it: the runtime, the audit writer, the encoder's pool. The
//! script divides the k-th such dump by the k-th case's N.
//!
//! Kept deterministic: one runtime thread (current_thread), one encoder
//! thread, the same inputs each run, and no timer in what is measured but
//! the gateway's own. The same binary repeats within 0.5% (hash seeds and
//! the gateway's periodic tasks differ from run to run).
//!
//! Cases:
//! * `tool_execute`: `demo:calculate` through the gateway's upstream MCP
//!   server, as a JSON-RPC line on an in-memory pipe (what stdio serves,
//!   less its line guard): parse, authenticate an `mgw_` token against a
//!   SQLite store in a temp dir, view, schema check, screens, the call to the
//!   demo server (in process, over rmcp like any built-in), the answer, the
//!   access log line, the audit row and its commit.
//! * `tool_discovery`: the same path for a discovery (BM25) over the demo's tools.
//! * `catalog_bm25`: ranking one query over the benchmark catalog
//!   (`benches/data`, 1,764 tools) with BM25F, as `tool_discovery` does.
//! * `catalog_hybrid`: the same with hybrid search, each query new (so
//!   embedded by the model); skipped without the model (`scripts/setup`).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_gateway::access::Search;
use mcp_gateway::config::{Builtin, Config, Transport};
use mcp_gateway::eval::Bench;
use mcp_gateway::gateway::Gateway;
use mcp_gateway::rank::{Hybrid, SearchProvider, local};
use mcp_gateway::search::Request;
use mcp_gateway::search::semantic::{DEFAULT_CACHE_PATH, DEFAULT_MODEL_DIR, Semantic, SemanticConfig};
use mcp_gateway::server::Upstream;
use rmcp::ServiceExt;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio_util::sync::CancellationToken;

// Operations counted per case: enough that a per-op count is stable, few
// enough that the run stays short under callgrind (about 30× slower here).
const WIRE_CALLS: usize = 48;
const BM25_QUERIES: usize = 96;
const HYBRID_QUERIES: usize = 24;
/// Operations run before counting: caches filled, lazy statics built.
const WARM_UP: usize = 8;
/// How long each wire call waits after its answer: longer than the audit
/// writer's linger (25 ms) and its commit under callgrind, so every call's
/// row commits in a batch of its own, inside the count. (Once an answer
/// waits for its row's commit, a sequential caller has this shape anyway.)
const AUDIT_SETTLE: Duration = Duration::from_millis(80);

/// Callgrind dumps its counters on entering this and [`instructions_stop`]
/// (`--dump-before`: a dump covers and restarts every thread's count, where
/// `--zero-before` would restart only the calling thread's). Their bodies
/// differ, so the linker cannot fold the two into one symbol. Unmangled
/// names are unsafe by the language (they could clash); callgrind needs them.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
#[inline(never)]
pub fn instructions_start(case: &str) {
    std::hint::black_box((case, "start"));
}

/// See [`instructions_start`].
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
#[inline(never)]
pub fn instructions_stop(case: &str) {
    std::hint::black_box((case, 1u64 << 40));
}

/// Runs `op` `n` times between the markers, each followed by `settle`,
/// then says so on stdout.
async fn measure(case: &str, n: usize, settle: Duration, mut op: impl AsyncFnMut(usize)) {
    let mut took = Duration::ZERO;
    instructions_start(case);
    for i in 0..n {
        let started = Instant::now();
        op(i).await;
        took += started.elapsed();
        std::thread::sleep(settle);
    }
    instructions_stop(case);
    println!("case {case} {n}");
    eprintln!("{case}: {:.1?} each (wall)", took / n as u32);
}

fn main() {
    // One encoder thread: work split over a pool depends on who steals what.
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build_global()
        .expect("the encoder pool is set up first");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    runtime.block_on(wire_cases());
    catalog_cases(&runtime, root);
}

/// One MCP client session on the gateway's upstream server, speaking raw
/// JSON-RPC lines, so the client's own work is a copy and a line scan.
struct Session {
    to: WriteHalf<DuplexStream>,
    from: BufReader<ReadHalf<DuplexStream>>,
    next_id: u64,
}

impl Session {
    async fn open(upstream: Upstream) -> Self {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            let running = upstream.serve(theirs).await.expect("the upstream server starts");
            let _ = running.waiting().await;
        });
        let (from, to) = tokio::io::split(ours);
        let mut session = Self {
            to,
            from: BufReader::new(from),
            next_id: 0,
        };
        let answer = session
            .request(
                "initialize",
                r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"instructions","version":"1"}}"#,
            )
            .await;
        assert!(answer.contains("\"result\""), "initialize failed: {answer}");
        session
            .send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        session
    }

    async fn send(&mut self, line: &str) {
        self.to.write_all(line.as_bytes()).await.expect("the pipe is open");
        self.to.write_all(b"\n").await.expect("the pipe is open");
    }

    /// Sends a request and returns its response line (notifications skipped).
    async fn request(&mut self, method: &str, params: &str) -> String {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#
        ))
        .await;
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.from.read_line(&mut line).await.expect("the pipe is open");
            assert!(n > 0, "the gateway closed the session");
            if !line.contains(r#""method":"#) {
                return line;
            }
        }
    }

    async fn call(&mut self, tool: &str, arguments: &str) -> String {
        self.request("tools/call", &format!(r#"{{"name":"{tool}","arguments":{arguments}}}"#))
            .await
    }
}

/// The tool result inside a `tools/call` response line; panics on an error.
fn tool_result(line: &str) -> Value {
    let response: Value = serde_json::from_str(line).expect("a JSON-RPC response");
    let result = response.get("result").unwrap_or_else(|| panic!("an error: {line}"));
    assert_ne!(result.get("isError"), Some(&Value::Bool(true)), "a tool error: {line}");
    result.clone()
}

/// `tool_execute` and `tool_discovery` through the upstream server, as one
/// token-authenticated session of a gateway on a SQLite store.
async fn wire_cases() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let config_path = dir.path().join("gateway.toml");
    let text = format!(
        "[store]\npath = \"{}\"\n\n[search.semantic]\nenabled = false\n\n\
         [[servers]]\nname = \"demo\"\ncommand = \"replaced-by-the-in-process-demo\"\n",
        dir.path().join("gateway.db").display()
    );
    std::fs::write(&config_path, &text).expect("the config is written");
    // The access log as `serve` writes it (stderr, info), since serving pays for it.
    let cli = <mcp_gateway::cli::Cli as clap::Parser>::parse_from([
        "mcp-gateway",
        "serve",
        "--config",
        config_path.to_str().expect("a UTF-8 temp path"),
    ]);
    mcp_gateway::cli::init_logging(&cli).expect("logging starts");
    let mut config = Config::parse(&text, "instructions", dir.path()).expect("the config is valid");
    config.servers[0].transport = Transport::Builtin(Builtin::Demo);

    let running = Gateway::start(&config, CancellationToken::new()).expect("the gateway starts");
    let gateway = running.gateway.clone();
    gateway.ready().await;
    let store = gateway.store();
    store.create_project("bench", Some(Search::Bm25)).expect("a project");
    store.set_permission("bench", "demo", None, true).expect("a grant");
    let (_, token) = store.issue_token("bench", "instructions").expect("a token");
    let mut session = Session::open(Upstream::new(gateway, Some(token))).await;

    let execute = r#"{"toolKey":"demo:calculate","arguments":{"expression":"6*7"}}"#;
    // The demo's tools reach the view a moment after it connects (pinned, reviewed).
    for _ in 0..200 {
        if !session
            .call("tool_execute", execute)
            .await
            .contains(r#""isError":true"#)
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for _ in 0..WARM_UP {
        tool_result(&session.call("tool_execute", execute).await);
        std::thread::sleep(AUDIT_SETTLE);
    }
    let mut answers = Vec::with_capacity(WIRE_CALLS);
    measure("tool_execute", WIRE_CALLS, AUDIT_SETTLE, async |_| {
        answers.push(session.call("tool_execute", execute).await);
    })
    .await;
    for answer in &answers {
        let result = tool_result(answer);
        assert_eq!(result["structuredContent"]["result"], 42.0, "{answer}");
    }

    let queries = [
        "evaluate an arithmetic expression",
        "hash a text with sha256",
        "convert a temperature to fahrenheit",
        "count the words in a text",
    ];
    let discover = |i: usize| format!(r#"{{"query":"{}"}}"#, queries[i % queries.len()]);
    for i in 0..WARM_UP {
        tool_result(&session.call("tool_discovery", &discover(i)).await);
        std::thread::sleep(AUDIT_SETTLE);
    }
    answers.clear();
    measure("tool_discovery", WIRE_CALLS, AUDIT_SETTLE, async |i| {
        answers.push(session.call("tool_discovery", &discover(i)).await);
    })
    .await;
    for answer in &answers {
        let result = tool_result(answer);
        assert!(answer.contains("demo:"), "no demo tool found: {answer}");
        assert!(result["structuredContent"].is_object(), "{answer}");
    }
    drop(session);
    running.shutdown().await;
}

/// Distinct queries as people ask them: every task and step of the benchmark.
fn benchmark_queries(bench: &Bench) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    bench
        .tasks
        .iter()
        .flat_map(|t| std::iter::once(t.query.clone()).chain(t.steps.iter().cloned()))
        .filter(|q| seen.insert(q.clone()))
        .collect()
}

fn one_query(query: &str) -> Request {
    Request {
        queries: vec![query.to_string()],
        context: None,
        limit: mcp_gateway::gateway::DEFAULT_RESULTS,
        prior: None,
    }
}

/// The installed model, or why there is none. Tool vectors come from its
/// disk cache, which the script fills natively first (embedding the
/// catalog under callgrind would take an hour).
fn model(root: &Path) -> Result<Arc<Semantic>, String> {
    Semantic::load(&SemanticConfig {
        model_dir: root.join(DEFAULT_MODEL_DIR),
        cache_path: root.join(DEFAULT_CACHE_PATH),
        auto_install: false,
    })
    .map(Arc::new)
    .map_err(|e| format!("{e} (scripts/setup installs it)"))
}

/// Ranking over the benchmark catalog: BM25F, then hybrid when the model
/// is there, each hybrid query new to the query cache (so embedded).
fn catalog_cases(runtime: &tokio::runtime::Runtime, root: &Path) {
    let bench = Bench::load(&root.join("benches/data")).expect("the benchmark catalog loads");
    let queries = benchmark_queries(&bench);
    assert!(queries.len() >= WARM_UP + BM25_QUERIES.max(HYBRID_QUERIES));
    let (warm, counted) = queries.split_at(WARM_UP);
    let model = model(root);
    let view = bench
        .view(Default::default(), model.as_deref().ok())
        .expect("the catalog is indexed");
    for q in warm {
        assert!(!local::bm25(&view, &one_query(q)).is_empty());
    }
    runtime.block_on(measure("catalog_bm25", BM25_QUERIES, Duration::ZERO, async |i| {
        assert!(!local::bm25(&view, &one_query(&counted[i])).is_empty());
    }));
    let hybrid = match model {
        Ok(model) => Hybrid::new(model),
        Err(why) => return println!("skip catalog_hybrid: {why}"),
    };
    runtime.block_on(async {
        for q in warm {
            assert!(
                !hybrid
                    .search(&view, &one_query(q))
                    .await
                    .expect("hybrid answers")
                    .is_empty()
            );
        }
        measure("catalog_hybrid", HYBRID_QUERIES, Duration::ZERO, async |i| {
            let ranked = hybrid
                .search(&view, &one_query(&counted[i]))
                .await
                .expect("hybrid answers");
            assert!(!ranked.is_empty());
        })
        .await;
    });
}
