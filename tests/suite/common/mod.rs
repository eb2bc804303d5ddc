//! Shared fixtures: a gateway on 127.0.0.1:0 with a config (in this process,
//! or the real binary spawned), the rmcp client to talk MCP to it, and the
//! servers, stores and commands around it.
#![allow(dead_code)] // each test binary uses a different part of this module

pub(crate) mod gateway;
pub(crate) mod oauth;
pub(crate) mod postgres;
pub(crate) mod projects;

pub(crate) use gateway::Gateway;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RunningService, Service};
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

/// The gateway binary cargo built for these tests. Every gateway they start
/// runs as on a machine without network for its model: `serve` would fetch
/// a missing embedding model, and each test's config sits in its own folder.
pub(crate) fn bin() -> &'static str {
    static OFFLINE: std::sync::Once = std::sync::Once::new();
    OFFLINE.call_once(|| {
        // SAFETY: set once, before this process spawns the children that read
        // it; nothing in the tests reads the environment from C code meanwhile.
        #[allow(unsafe_code)]
        unsafe {
            std::env::set_var("MCP_GATEWAY_MODEL_URL", OFFLINE_MODEL_URL);
        };
    });
    env!("CARGO_BIN_EXE_mcp-gateway")
}

/// xorshift64, for generated inputs: reproducible without a dependency.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    /// The next number below `n` (0 when `n` is 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

/// Where test gateways "fetch" a missing model: port 9 (discard) refuses at once.
pub(crate) const OFFLINE_MODEL_URL: &str = "http://127.0.0.1:9/offline.whl";

/// Lets callers without a token in, as project "local" (granted every server).
pub(crate) const ANONYMOUS: &str = "[auth]\nallow_anonymous = true\nanonymous_project = \"local\"\n\n";

/// A `[[servers]]` entry running the demo server with its test tools.
pub(crate) fn chaos_server(name: &str, extra: &str) -> String {
    format!(
        "[[servers]]\nname = \"{name}\"\ncommand = \"{}\"\nargs = [\"demo-server\", \"--chaos\"]\n{extra}\n",
        bin()
    )
}

/// Like [`chaos_server`], for a server that starts `secs` seconds late, as
/// `npx -y` fetching a package does.
pub(crate) fn slow_server(name: &str, secs: u64, extra: &str) -> String {
    format!(
        "[[servers]]\nname = \"{name}\"\ncommand = \"sh\"\nargs = [\"-c\", \"sleep {secs}; exec '{}' demo-server --chaos\"]\n{extra}\n",
        bin()
    )
}

/// Makes the SQLite store at `db` take no audit row, as a full disk would
/// for the writer, until the connection given runs `DROP TRIGGER refuse_rows`.
pub(crate) fn refuse_audit_rows(db: &std::path::Path) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.execute_batch(
        "CREATE TRIGGER refuse_rows BEFORE INSERT ON audit_log
         BEGIN SELECT RAISE(ABORT, 'the disk is full'); END;",
    )
    .unwrap();
    conn
}

/// Which engine holds a test gateway's store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Engine {
    /// A SQLite file beside the config (the default).
    Sqlite,
    /// A database of its own on this test binary's PostgreSQL cluster.
    Postgres,
}

/// Runs an async test body once per engine: `on_both_engines!(name, body)`
/// defines tests `name::sqlite` and `name::postgres` calling `body(Engine)`;
/// the second needs PostgreSQL, so only the full tier runs it.
#[macro_export]
macro_rules! on_both_engines {
    ($name:ident, $body:ident) => {
        mod $name {
            #[tokio::test]
            async fn sqlite() {
                super::$body($crate::common::Engine::Sqlite).await
            }
            #[tokio::test]
            #[ignore = "full tier: needs PostgreSQL (scripts/setup)"]
            async fn postgres() {
                super::$body($crate::common::Engine::Postgres).await
            }
        }
    };
}

/// Runs `mcp-gateway ARGS --config CONFIG` with `env` added, as an operator would.
pub(crate) fn cli_output_at(config: &Path, env: &[(String, String)], args: &[&str]) -> std::process::Output {
    std::process::Command::new(bin())
        .args(args)
        .arg("--config")
        .arg(config)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env_remove("MCP_GATEWAY_TOKEN")
        .output()
        .unwrap()
}

/// `out`, once it is sure the command `args` succeeded.
pub(crate) fn succeeded(args: &[&str], out: std::process::Output) -> std::process::Output {
    assert!(
        out.status.success(),
        "mcp-gateway {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The token `token issue` printed.
pub(crate) fn token_of(out: std::process::Output) -> String {
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// An MCP client over streamable HTTP that sends `Authorization: Bearer <token>`.
pub(crate) async fn connect_with_token(
    url: &str,
    token: &str,
) -> Result<RunningService<RoleClient, ()>, rmcp::service::ClientInitializeError> {
    let config =
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(url).auth_header(token);
    ().serve(StreamableHttpClientTransport::from_config(config)).await
}

/// A demo server over streamable HTTP on `addr` (with `extra` arguments); returns it and its URL.
pub(crate) async fn http_demo(addr: &str, extra: &[&str]) -> (tokio::process::Child, String) {
    let mut demo = tokio::process::Command::new(bin())
        .args(["demo-server", "--chaos", "--http", addr])
        .args(extra)
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(demo.stderr.take().unwrap()));
    let line = lines.next_line().await.unwrap().unwrap();
    // Keep reading: a closed pipe would break the server's next log line.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (demo, line.trim_start_matches("listening on ").trim().to_string())
}

/// Sends a signal to a process.
pub(crate) fn signal(pid: u32, sig: nix::sys::signal::Signal) {
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), sig);
}

/// An MCP client of the gateway at `url` (legacy `initialize` lifecycle).
pub(crate) async fn connect(url: &str) -> RunningService<RoleClient, ()> {
    ().serve(StreamableHttpClientTransport::from_uri(url))
        .await
        .expect("client connects")
}

/// Calls a meta-tool.
pub(crate) async fn call<S: Service<RoleClient>>(
    client: &RunningService<RoleClient, S>,
    tool: &str,
    args: Value,
) -> CallToolResult {
    let params = CallToolRequestParams::new(tool.to_string()).with_arguments(args.as_object().unwrap().clone());
    client.call_tool(params).await.expect("the gateway answers")
}

/// `tool_discovery` results for `query`.
pub(crate) async fn discover<S: Service<RoleClient>>(
    client: &RunningService<RoleClient, S>,
    query: Value,
) -> Vec<Value> {
    let r = call(client, "tool_discovery", json!({ "query": query })).await;
    assert_ne!(r.is_error, Some(true), "discovery failed: {r:?}");
    r.structured_content.unwrap()["results"].as_array().unwrap().clone()
}

/// `tool_execute` of `key` with `arguments`.
pub(crate) async fn execute<S: Service<RoleClient>>(
    client: &RunningService<RoleClient, S>,
    key: &str,
    arguments: Value,
) -> CallToolResult {
    call(
        client,
        "tool_execute",
        json!({ "toolKey": key, "arguments": arguments }),
    )
    .await
}

/// Waits until `tool_discovery` finds `key` (`server:tool`).
pub(crate) async fn wait_for_tool<S: Service<RoleClient>>(client: &RunningService<RoleClient, S>, key: &str) {
    let (server, tool) = key.split_once(':').unwrap();
    eventually(Duration::from_secs(20), key, || async {
        let results = discover(client, json!([tool, server])).await;
        results.iter().any(|r| r["toolKey"] == key).then_some(())
    })
    .await;
}

/// Waits, at most 5 s, until the chaos server `server` says (its `stats`
/// tool) that a client cancelled one of its `sleep` calls.
pub(crate) async fn cancel_reached<S: Service<RoleClient>>(client: &RunningService<RoleClient, S>, server: &str) {
    let stats = format!("{server}:stats");
    eventually(
        Duration::from_secs(5),
        "notifications/cancelled at the server",
        || async {
            let r = execute(client, &stats, json!({})).await;
            (r.structured_content?["cancelled"].as_u64()? >= 1).then_some(())
        },
    )
    .await;
}

/// The `error.code` of a gateway error result.
pub(crate) fn error_code(r: &CallToolResult) -> String {
    assert_eq!(r.is_error, Some(true), "expected an error: {r:?}");
    r.structured_content
        .as_ref()
        .and_then(|s| s["error"]["code"].as_str())
        .unwrap_or("")
        .to_string()
}

/// The first text block of a result.
pub(crate) fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .find_map(|c| c.as_text().map(|t| t.text.clone()))
        .unwrap_or_default()
}

/// Polls `f` until it returns `Some`, or panics after `timeout` with `what`.
pub(crate) async fn eventually<T, F, Fut>(timeout: Duration, what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Child process ids of `pid` (from /proc).
pub(crate) fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...: comm may hold spaces, so split after the last ')'.
        let after = &stat[stat.rfind(')').map_or(0, |i| i + 1)..];
        if after.split_whitespace().nth(1).and_then(|p| p.parse::<u32>().ok()) == Some(pid) {
            out.push(child);
        }
    }
    out
}

/// Whether a process exists and is not a zombie.
pub(crate) fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let after = &stat[stat.rfind(')').map_or(0, |i| i + 1)..];
            after.split_whitespace().next() != Some("Z")
        }
        Err(_) => false,
    }
}

/// Path of a file in the repository.
pub(crate) fn repo_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// Runs `mcp-gateway login SERVER --project PROJECT --no-browser` on
/// `config` and plays its browser as `user` (`browser.mjs`): sign-in page,
/// consent, redirect back to the command's loopback listener. Returns the
/// command's stdout; panics with its stderr when it fails.
pub(crate) async fn login(config: &std::path::Path, server: &str, project: &str, user: &str) -> String {
    let mut child = tokio::process::Command::new(bin())
        .args([
            "login",
            server,
            "--project",
            project,
            "--no-browser",
            "--wait-secs",
            "60",
            "--config",
        ])
        .arg(config)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("mcp-gateway login starts");
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(child.stderr.take().unwrap()));
    let mut said = String::new();
    let url = loop {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("login prints the sign-in URL")
            .unwrap()
            .unwrap_or_else(|| panic!("login ended without a URL:\n{said}"));
        said.push_str(&line);
        said.push('\n');
        if let Some(at) = line.find("http://") {
            break line[at..].trim().to_string();
        }
    };
    let browser = tokio::process::Command::new("node")
        .arg(oauth::scripts().join("browser.mjs"))
        .args(["--url", &url, "--login", user])
        .output()
        .await
        .expect("node runs browser.mjs");
    assert!(
        browser.status.success(),
        "browser: {}",
        String::from_utf8_lossy(&browser.stderr)
    );
    let rest = tokio::spawn(async move {
        let mut rest = String::new();
        while let Ok(Some(line)) = lines.next_line().await {
            rest.push_str(&line);
            rest.push('\n');
        }
        rest
    });
    let mut stdout = String::new();
    tokio::io::AsyncReadExt::read_to_string(child.stdout.as_mut().unwrap(), &mut stdout)
        .await
        .unwrap();
    let status = child.wait().await.unwrap();
    let rest = rest.await.unwrap();
    assert!(status.success(), "login failed:\n{said}{rest}");
    stdout
}

/// Two chaos servers, `alpha` (calls time out after 1.5 s) and `beta`, open to anonymous callers.
pub(crate) fn two_servers() -> String {
    format!(
        "{ANONYMOUS}{}{}",
        chaos_server("alpha", "timeout_ms = 1500"),
        chaos_server("beta", "")
    )
}

/// A gateway whose one server, `remote`, is an HTTP demo server started with
/// `demo_args`; `settings` go into its `[[servers]]` entry. Returns once its
/// tools are found.
pub(crate) async fn gateway_before_http_demo(
    demo_args: &[&str],
    settings: &str,
) -> (tokio::process::Child, Gateway, RunningService<RoleClient, ()>) {
    let (demo, url) = http_demo("127.0.0.1:0", demo_args).await;
    let gw = Gateway::start(&format!(
        "{ANONYMOUS}[[servers]]\nname = \"remote\"\nurl = \"{url}\"\n{settings}\n"
    ))
    .await;
    let client = gw.client().await;
    wait_for_tool(&client, "remote:calculate").await;
    (demo, gw, client)
}

/// `mcp-gateway serve` over stdio on `config`: the client, the gateway's pid,
/// and the folder holding the config (kept while the gateway runs).
pub(crate) async fn stdio_gateway(config: &str) -> (RunningService<RoleClient, ()>, u32, tempfile::TempDir) {
    stdio_gateway_with(config, ()).await
}

/// [`stdio_gateway`] with a client that handles what the gateway sends.
pub(crate) async fn stdio_gateway_with<C: Service<RoleClient>>(
    config: &str,
    client: C,
) -> (RunningService<RoleClient, C>, u32, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gateway.toml");
    std::fs::write(&path, config).unwrap();
    let cmd = tokio::process::Command::new(bin()).configure(|c| {
        c.args(["serve", "--config"]).arg(&path);
    });
    let (transport, _stderr) = TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = transport.id().unwrap();
    (client.serve(transport).await.unwrap(), pid, dir)
}
