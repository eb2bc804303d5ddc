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
//!   server, as a JSON-RPC line on an in-memory pipe, read as stdio's
//!   lines are (`serve_lines`): parse, authenticate an `mgw_` token against a
//!   SQLite store in a temp dir, view, schema check, screens, the call to the
//!   demo server (in process, over rmcp like any built-in), the answer, the
//!   access log line, the audit row and its commit.
//! * `tool_discovery`: the same path for a discovery (BM25) over the demo's tools.
//! * `http_execute`: `tool_execute` over streamable HTTP as remote clients
//!   send it: a new connection per request (rmcp's client keeps none idle),
//!   the session and bearer token headers, the answer's SSE stream read to
//!   its end; hyper, axum, the guard and rmcp's session worker with it.
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
use mcp_gateway::launch::Launch;
use mcp_gateway::rank::{Hybrid, SearchProvider, local};
use mcp_gateway::search::Request;
use mcp_gateway::search::semantic::{DEFAULT_CACHE_PATH, DEFAULT_MODEL_DIR, Semantic, SemanticConfig};
use mcp_gateway::server::{Upstream, serve_lines};
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
    runtime.block_on(http_cases());
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
        let (read, write) = tokio::io::split(theirs);
        tokio::spawn(serve_lines(upstream, read, write, CancellationToken::new()));
        let (from, to) = tokio::io::split(ours);
        let mut session = Self {
            to,
            from: BufReader::new(from),
            next_id: 0,
        };
        let answer = session.request("initialize", INITIALIZE).await;
        assert!(answer.contains("\"result\""), "initialize failed: {answer}");
        session.send(INITIALIZED).await;
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
        self.send(&jsonrpc_request(id, method, params)).await;
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
        self.request("tools/call", &tool_call(tool, arguments)).await
    }
}

const INITIALIZE: &str =
    r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"instructions","version":"1"}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// A JSON-RPC request line.
fn jsonrpc_request(id: u64, method: &str, params: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#)
}

/// `tools/call`'s params.
fn tool_call(tool: &str, arguments: &str) -> String {
    format!(r#"{{"name":"{tool}","arguments":{arguments}}}"#)
}

/// The tool result inside a `tools/call` response line; panics on an error.
fn tool_result(line: &str) -> Value {
    let response: Value = serde_json::from_str(line).expect("a JSON-RPC response");
    let result = response.get("result").unwrap_or_else(|| panic!("an error: {line}"));
    assert_ne!(result.get("isError"), Some(&Value::Bool(true)), "a tool error: {line}");
    result.clone()
}

/// A gateway's configuration in `dir`: a SQLite store there, BM25 only, the
/// demo server in process. The first one starts the access log as `serve
/// --http` writes it (stderr, info: a line per call), since serving pays for it.
fn demo_config(dir: &Path) -> Config {
    let config_path = dir.join("gateway.toml");
    let text = format!(
        "[store]\npath = \"{}\"\n\n[search.semantic]\nenabled = false\n\n\
         [[servers]]\nname = \"demo\"\ncommand = \"replaced-by-the-in-process-demo\"\n",
        dir.join("gateway.db").display()
    );
    std::fs::write(&config_path, &text).expect("the config is written");
    static LOGGING: std::sync::Once = std::sync::Once::new();
    LOGGING.call_once(|| {
        let cli = <mcp_gateway::cli::Cli as clap::Parser>::parse_from([
            "mcp-gateway",
            "serve",
            "--http",
            "127.0.0.1:0",
            "--config",
            config_path.to_str().expect("a UTF-8 temp path"),
        ]);
        mcp_gateway::cli::init_logging(&cli).expect("logging starts");
    });
    let mut config = Config::parse(&text, "instructions", dir).expect("the config is valid");
    config.servers[0].transport = Transport::Builtin(Builtin::Demo);
    config
}

/// A project granted the demo server, and a token of it.
fn bench_token(gateway: &Gateway) -> String {
    let store = gateway.store();
    store.create_project("bench", Some(Search::Bm25)).expect("a project");
    store.set_permission("bench", "demo", None, true).expect("a grant");
    store.issue_token("bench", "instructions").expect("a token").1
}

const EXECUTE: &str = r#"{"toolKey":"demo:calculate","arguments":{"expression":"6*7"}}"#;

/// Counts `case`: `WIRE_CALLS` calls of `demo:calculate`, each answered
/// 42, once the demo's tools have reached the view (a moment after it
/// connects: pinned, reviewed) and `WARM_UP` calls have run. `call` returns
/// the JSON-RPC response line.
async fn count_executes(case: &str, gateway: &Gateway, mut call: impl AsyncFnMut() -> String) {
    for _ in 0..200 {
        if !call().await.contains(r#""isError":true"#) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The catalog counts its tools' tokens on a blocking thread once the
    // demo's tools arrive (tiktoken's tables built first); under callgrind
    // that thread's slices landed in whichever case was being counted.
    let catalog = gateway.catalog();
    catalog.snapshot().count_tokens();
    catalog.snapshot_for("bench").count_tokens();
    for _ in 0..WARM_UP {
        tool_result(&call().await);
        std::thread::sleep(AUDIT_SETTLE);
    }
    let mut answers = Vec::with_capacity(WIRE_CALLS);
    measure(case, WIRE_CALLS, AUDIT_SETTLE, async |_| answers.push(call().await)).await;
    for answer in &answers {
        let result = tool_result(answer);
        assert_eq!(result["structuredContent"]["result"], 42.0, "{answer}");
    }
}

/// `tool_execute` and `tool_discovery` through the upstream server, as one
/// token-authenticated session of a gateway on a SQLite store.
async fn wire_cases() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let config = demo_config(dir.path());
    let builtins = std::sync::Arc::new(mcp_gateway::launch::BuiltinServers);
    let running = Gateway::start(&config, builtins, CancellationToken::new()).expect("the gateway starts");
    let gateway = running.gateway.clone();
    gateway.ready().await;
    let token = bench_token(&gateway);
    let mut session = Session::open(Upstream::new(gateway.clone(), Some(token))).await;

    count_executes("tool_execute", &gateway, async || {
        session.call("tool_execute", EXECUTE).await
    })
    .await;

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
    let mut answers = Vec::with_capacity(WIRE_CALLS);
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
    after_shutdown().await;
}

/// One MCP session over streamable HTTP, as raw HTTP/1.1 on a new
/// connection per request, so the client's own work is a copy and a scan.
struct HttpSession {
    addr: std::net::SocketAddr,
    token: String,
    session: Option<String>,
    next_id: u64,
}

impl HttpSession {
    async fn open(addr: std::net::SocketAddr, token: String) -> Self {
        let mut session = Self {
            addr,
            token,
            session: None,
            next_id: 1,
        };
        let (head, body) = session
            .send("POST", &jsonrpc_request(1, "initialize", INITIALIZE))
            .await;
        assert!(body.contains(r#""result""#), "initialize failed: {head}{body}");
        session.session = head
            .lines()
            .find_map(|l| l.strip_prefix("mcp-session-id: "))
            .map(str::to_string);
        assert!(session.session.is_some(), "no session: {head}");
        let (head, _) = session.send("POST", INITIALIZED).await;
        assert!(head.starts_with("HTTP/1.1 202"), "{head}");
        session
    }

    /// One request on a new connection: the response's head and whole body.
    async fn send(&self, method: &str, body: &str) -> (String, String) {
        use tokio::io::AsyncReadExt;
        let mut stream = tokio::net::TcpStream::connect(self.addr)
            .await
            .expect("the gateway listens");
        let session = self
            .session
            .as_deref()
            .map(|s| format!("mcp-session-id: {s}\r\n"))
            .unwrap_or_default();
        let request = format!(
            "{method} /mcp HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\n\
             accept: application/json, text/event-stream\r\nauthorization: Bearer {}\r\n\
             mcp-protocol-version: 2025-11-25\r\n{session}content-length: {}\r\n\r\n{body}",
            self.addr,
            self.token,
            body.len()
        );
        stream.write_all(request.as_bytes()).await.expect("the request is sent");
        let mut read = Vec::with_capacity(4096);
        loop {
            let n = stream.read_buf(&mut read).await.expect("the answer is read");
            let text = std::str::from_utf8(&read).expect("UTF-8");
            if let Some(end) = text.find("\r\n\r\n") {
                let (head, rest) = (&text[..end + 2], &text[end + 4..]);
                let length = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length: "))
                    .map(|n| n.parse::<usize>().expect("a length"));
                let complete = match length {
                    Some(length) => rest.len() >= length,
                    None => rest.ends_with("\r\n0\r\n\r\n") || rest.starts_with("0\r\n\r\n"),
                };
                if complete {
                    return (head.to_string(), rest.to_string());
                }
            }
            assert!(n > 0, "the gateway closed the connection early: {text}");
        }
    }

    async fn call(&mut self, tool: &str, arguments: &str) -> String {
        self.next_id += 1;
        let request = jsonrpc_request(self.next_id, "tools/call", &tool_call(tool, arguments));
        let (head, body) = self.send("POST", &request).await;
        // The SSE answer's response event, as the stdio session reads a line.
        body.lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .find(|d| d.contains(r#""result""#) || d.contains(r#""error""#))
            .unwrap_or_else(|| panic!("no response in {head}{body}"))
            .to_string()
    }

    /// Ends the session (a gateway stopping with it open waits to drain it,
    /// and logs so into the next case's count).
    async fn close(self) {
        let (head, _) = self.send("DELETE", "").await;
        assert!(head.starts_with("HTTP/1.1 2"), "{head}");
    }
}

/// `tool_execute` over streamable HTTP: the listener, hyper, the guard, the
/// caller from a bearer token, rmcp's session worker and the SSE answer.
async fn http_cases() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let shutdown = CancellationToken::new();
    let launched = Launch {
        config: demo_config(dir.path()),
        watch: None,
        http: Some(listener),
        stdio: None,
        fetch_model: false,
    }
    .start(shutdown.clone())
    .expect("the gateway starts");
    launched.gateway().ready().await;
    let token = bench_token(launched.gateway());
    let addr = launched.http_addr().expect("HTTP is served");
    let mut session = HttpSession::open(addr, token).await;
    count_executes("http_execute", launched.gateway(), async || {
        session.call("tool_execute", EXECUTE).await
    })
    .await;
    session.close().await;
    shutdown.cancel();
    launched.wait().await;
    after_shutdown().await;
}

/// rmcp's services drain for up to 2 s once cancelled (the in-process demo's
/// among them), and log when that times out: let them, outside any count.
async fn after_shutdown() {
    tokio::time::sleep(Duration::from_secs(3)).await;
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
