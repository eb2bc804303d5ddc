//! Shared fixtures: start the real `mcp-gateway` binary on 127.0.0.1:0 with a
//! config, watch its log, and talk MCP to it with the rmcp client.
#![allow(dead_code)] // each test binary uses a different part of this module

pub(crate) mod in_process;
pub(crate) mod oauth;
pub(crate) mod postgres;
pub(crate) mod projects;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RunningService, Service};
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

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

/// A running gateway process. Dropping it sends SIGTERM.
pub(crate) struct Gateway {
    child: tokio::process::Child,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    log: Arc<Mutex<String>>,
    /// Holds the config file (and whatever else a test puts there).
    pub dir: tempfile::TempDir,
    /// Extra environment the config needs (also given to `cli`).
    env: Vec<(String, String)>,
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

impl Gateway {
    /// Writes `config` to a temp dir and runs `mcp-gateway serve --http 127.0.0.1:0` on it.
    pub(crate) async fn start(config: &str) -> Gateway {
        Self::start_with(config, &[]).await
    }

    /// Like [`Gateway::start`], with its store on `engine` (the CLI commands
    /// of [`Gateway::cli`] reach the same store).
    pub(crate) async fn start_on(engine: Engine, config: &str) -> Gateway {
        match engine {
            Engine::Sqlite => Self::start(config).await,
            Engine::Postgres => {
                let url = postgres::Cluster::shared().database();
                Self::start_with(config, &[("MCP_GATEWAY_DB", &url)]).await
            }
        }
    }

    /// Like [`Gateway::start`], with extra environment variables.
    pub(crate) async fn start_with(config: &str, env: &[(&str, &str)]) -> Gateway {
        Self::start_at("127.0.0.1:0", config, env).await
    }

    /// Starts on a port known before the config is written, for configs that
    /// name the gateway's own URL (the OAuth audience): `config` gets
    /// `http://127.0.0.1:PORT/mcp`.
    pub(crate) async fn start_knowing_url(config: impl FnOnce(&str) -> String) -> Gateway {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = format!("http://127.0.0.1:{port}/mcp");
        Self::start_at(&format!("127.0.0.1:{port}"), &config(&url), &[]).await
    }

    async fn start_at(addr: &str, config: &str, env: &[(&str, &str)]) -> Gateway {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gateway.toml");
        std::fs::write(&path, config).unwrap();
        let mut child = tokio::process::Command::new(bin())
            .args(["serve", "--http", addr, "--config"])
            .arg(&path)
            .env("RUST_LOG", "info")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(false)
            .spawn()
            .expect("gateway starts");
        let log = Arc::new(Mutex::new(String::new()));
        let stderr = child.stderr.take().unwrap();
        let sink = log.clone();
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let mut log = sink.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        let env = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let mut gw = Gateway {
            child,
            url: String::new(),
            log,
            dir,
            env,
        };
        let line = gw.wait_log("listening on http://", Duration::from_secs(30)).await;
        let line = line.unwrap_or_else(|| panic!("gateway did not start listening:\n{}", gw.log()));
        let start = line.find("http://").unwrap();
        gw.url = line[start..].split_whitespace().next().unwrap().to_string();
        gw
    }

    /// Everything the gateway wrote to stderr so far.
    pub(crate) fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Waits for a log line containing `needle`; returns it.
    pub(crate) async fn wait_log(&self, needle: &str, timeout: Duration) -> Option<String> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(line) = self.log().lines().find(|l| l.contains(needle)) {
                return Some(line.to_string());
            }
            if Instant::now() > deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// Strict audit on SQLite answers once a call's row is journaled: waits,
    /// at most 10 s, until `/readyz` says the store has every such row.
    pub(crate) async fn audit_folded(&self) {
        eventually(Duration::from_secs(10), "journaled audit rows in the store", || async {
            (self.readyz().await["audit_journaled"].as_u64().unwrap_or(0) == 0).then_some(())
        })
        .await;
    }

    /// The config file this gateway runs on.
    pub(crate) fn config_path(&self) -> PathBuf {
        self.dir.path().join("gateway.toml")
    }

    /// Runs an `mcp-gateway` command against this gateway's config (and so its store).
    pub(crate) fn cli(&self, args: &[&str]) -> std::process::Output {
        succeeded(args, self.cli_output(args))
    }

    /// Like [`Gateway::cli`], for a command that may fail.
    pub(crate) fn cli_output(&self, args: &[&str]) -> std::process::Output {
        cli_output_at(&self.config_path(), &self.env, args)
    }

    /// Issues a token for `project` and returns its secret.
    pub(crate) fn issue_token(&self, project: &str) -> String {
        token_of(self.cli(&["token", "issue", "--project", project]))
    }

    /// What `tool_discovery` finds for `project`, as operators see it (the
    /// console's playground, the same search): each result with its
    /// `explanation` and `tags`, which the model's answer leaves out.
    pub(crate) async fn explained(&self, project: &str, query: Value) -> Vec<Value> {
        let out = self.cli(&["token", "issue", "--admin", "--label", "explained", "--json"]);
        let admin: Value = serde_json::from_slice(&out.stdout).unwrap();
        let answer: Value = reqwest::Client::new()
            .post(self.url.replace("/mcp", "/console/api/search"))
            .bearer_auth(admin["token"].as_str().unwrap())
            .json(&json!({ "project": project, "arguments": { "query": query } }))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        answer["answer"]["results"]
            .as_array()
            .unwrap_or_else(|| panic!("the console's search: {answer}"))
            .clone()
    }

    /// An MCP client that sends `Authorization: Bearer <token>`.
    pub(crate) async fn client_with_token(
        &self,
        token: &str,
    ) -> Result<RunningService<RoleClient, ()>, rmcp::service::ClientInitializeError> {
        connect_with_token(&self.url, token).await
    }

    /// `GET /readyz`, as JSON (whatever the status code).
    pub(crate) async fn readyz(&self) -> Value {
        reqwest::get(self.url.replace("/mcp", "/readyz"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// `GET /metrics`, Prometheus text.
    pub(crate) async fn metrics(&self) -> String {
        reqwest::get(self.url.replace("/mcp", "/metrics"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    }

    /// The gateway's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id().unwrap()
    }

    /// An MCP client (legacy `initialize` lifecycle, as most clients today).
    pub(crate) async fn client(&self) -> RunningService<RoleClient, ()> {
        connect(&self.url).await
    }

    /// Sends SIGTERM and waits for the process to exit.
    pub(crate) async fn stop(&mut self) -> std::process::ExitStatus {
        signal(self.pid(), nix::sys::signal::Signal::SIGTERM);
        tokio::time::timeout(Duration::from_secs(30), self.child.wait())
            .await
            .expect("gateway exits")
            .unwrap()
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        if let Some(pid) = self.child.id() {
            signal(pid, nix::sys::signal::Signal::SIGTERM);
        }
    }
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
    use tokio::io::AsyncBufReadExt;
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
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
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
