//! A gateway under test, one of two kinds. [`Gateway::start`] runs the
//! whole gateway in this process, wired as `serve --http 127.0.0.1:0` wires
//! it (`mcp_gateway::launch`) on a runtime of its own: no binary to spawn,
//! no log to read for the port, and the store at hand for assertions. Its
//! log lines are the binary's (`mcp_gateway::cli::lines`, at `info`),
//! kept apart from other gateways' by the threads of its runtime.
//! [`Gateway::spawn`] starts the `mcp-gateway` binary, for what only a
//! process shows: its signals, its children, its environment, its
//! process-wide metrics and its log at another level or format. Either is
//! spoken to over MCP with the rmcp client.

use std::cell::RefCell;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_gateway::config::Config;
use mcp_gateway::launch::Launch;
use mcp_gateway::store::AuditRow;
use rmcp::RoleClient;
use rmcp::service::RunningService;
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;
use tokio_util::sync::CancellationToken;

use super::{Engine, bin, connect, connect_with_token, eventually, postgres, signal, succeeded, token_of};

/// A running gateway: in this process, or a spawned `mcp-gateway serve`.
/// Dropping it stops it (SIGTERM for a process).
pub(crate) struct Gateway {
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    /// Holds the config file (and whatever else a test puts there).
    pub dir: tempfile::TempDir,
    /// Extra environment the config needs (also given to `cli`).
    env: Vec<(String, String)>,
    /// Its log lines so far.
    log: Log,
    running: Running,
}

enum Running {
    InProcess(InProcess),
    Spawned { child: tokio::process::Child },
}

/// A gateway's log lines, as they are written.
type Log = Arc<Mutex<String>>;

thread_local! {
    /// The log of the gateway in process whose runtime runs on this thread.
    static THREAD_LOG: RefCell<Option<Log>> = const { RefCell::new(None) };
}

/// Installs, once, this process's subscriber: the binary's log lines at
/// `info`, each appended to the log of the gateway whose thread logged it.
/// The lines of other threads are dropped: the test's own clients', and
/// those of the threads a gateway starts itself (the audit writer, a
/// script's engine); a test of those spawns the binary.
fn capture_logs() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        use tracing_subscriber::layer::SubscriberExt;
        use tracing_subscriber::util::SubscriberInitExt;
        let to_its_gateway: mcp_gateway::cli::Sink = |line| {
            THREAD_LOG.with(|log| {
                if let Some(log) = &*log.borrow() {
                    log.lock().unwrap().push_str(&String::from_utf8_lossy(line));
                }
            });
            Ok(())
        };
        let lines = mcp_gateway::cli::lines(
            mcp_gateway::cli::LogFormat::Pretty,
            tracing_subscriber::EnvFilter::new("info"),
            to_its_gateway,
        );
        let _ = tracing_subscriber::registry().with(lines).try_init();
    });
}

/// The gateway's own runtime on a thread of its own, as `serve` has one:
/// a test that blocks (a CLI command, a `std::thread::sleep`) does not stop it.
struct InProcess {
    core: mcp_gateway::gateway::Gateway,
    shutdown: CancellationToken,
    stopped: Option<std::sync::mpsc::Receiver<()>>,
}

impl Gateway {
    /// Writes `config` to a temp dir and serves it in this process on a free
    /// port, following the file for hot reload as `serve --config` does.
    /// The embedding model is never fetched.
    pub(crate) async fn start(config: &str) -> Gateway {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("gateway.toml"), config).unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        Self::start_in(dir, listener).await
    }

    /// Like [`Gateway::start`], with its store on `engine` (the CLI commands
    /// of [`Gateway::cli`] reach the same store: the URL is in the config).
    pub(crate) async fn start_on(engine: Engine, config: &str) -> Gateway {
        match engine {
            Engine::Sqlite => Self::start(config).await,
            Engine::Postgres => {
                let url = postgres::Cluster::shared().database();
                let url = format!("url = \"{url}\"\n");
                match config.split_once("[store]\n") {
                    Some((before, after)) => Self::start(&format!("{before}[store]\n{url}{after}")).await,
                    None => Self::start(&format!("{config}\n[store]\n{url}")).await,
                }
            }
        }
    }

    /// Starts on a port known before the config is written, for configs that
    /// name the gateway's own URL (the OAuth audience): `config` gets
    /// `http://127.0.0.1:PORT/mcp`.
    pub(crate) async fn start_knowing_url(config: impl FnOnce(&str) -> String) -> Gateway {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("gateway.toml"), config(&url)).unwrap();
        Self::start_in(dir, listener).await
    }

    async fn start_in(dir: tempfile::TempDir, listener: std::net::TcpListener) -> Gateway {
        let path = dir.path().join("gateway.toml");
        let config = Config::load(Some(&path)).expect("a valid config");
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        listener.set_nonblocking(true).unwrap();
        let shutdown = CancellationToken::new();
        let (started, core) = tokio::sync::oneshot::channel();
        let (stopped_tx, stopped) = std::sync::mpsc::channel();
        let ct = shutdown.clone();
        capture_logs();
        let log = Log::default();
        let its_log = log.clone();
        std::thread::spawn(move || {
            // Its start is logged from this thread, the rest from the runtime's.
            THREAD_LOG.with(|log| *log.borrow_mut() = Some(its_log.clone()));
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .on_thread_start(move || THREAD_LOG.with(|log| *log.borrow_mut() = Some(its_log.clone())))
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let launch = Launch {
                    config,
                    watch: Some(path),
                    http: Some(tokio::net::TcpListener::from_std(listener).unwrap()),
                    stdio: None,
                    fetch_model: false,
                };
                let launched = launch.start(ct).expect("the gateway starts");
                let _ = started.send(launched.gateway().clone());
                launched.wait().await;
            });
            drop(runtime);
            let _ = stopped_tx.send(());
        });
        let core = core.await.expect("the gateway starts");
        Gateway {
            url,
            dir,
            env: Vec::new(),
            log,
            running: Running::InProcess(InProcess {
                core,
                shutdown,
                stopped: Some(stopped),
            }),
        }
    }

    /// Stops, then starts again on the same config and store (a new port).
    pub(crate) async fn restart(mut self) -> Gateway {
        self.stop().await;
        let dir = std::mem::replace(&mut self.dir, tempfile::tempdir().unwrap());
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        Self::start_in(dir, listener).await
    }

    /// Writes `config` to a temp dir and spawns `mcp-gateway serve --http 127.0.0.1:0` on it.
    pub(crate) async fn spawn(config: &str) -> Gateway {
        Self::spawn_with(config, &[]).await
    }

    /// Like [`Gateway::spawn`], with extra environment variables.
    pub(crate) async fn spawn_with(config: &str, env: &[(&str, &str)]) -> Gateway {
        Self::spawn_at("127.0.0.1:0", config, env).await
    }

    /// [`Gateway::start_knowing_url`], the binary spawned.
    pub(crate) async fn spawn_knowing_url(config: impl FnOnce(&str) -> String) -> Gateway {
        let addr = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        Self::spawn_at(&addr.to_string(), &config(&format!("http://{addr}/mcp")), &[]).await
    }

    async fn spawn_at(addr: &str, config: &str, env: &[(&str, &str)]) -> Gateway {
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
        let log = Log::default();
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
            url: String::new(),
            dir,
            env,
            running: Running::Spawned { child },
            log,
        };
        // The port is known only from the log: the one fact read from it.
        let line = gw.wait_log("listening on http://", Duration::from_secs(30)).await;
        let line = line.unwrap_or_else(|| panic!("gateway did not start listening:\n{}", gw.log()));
        let start = line.find("http://").unwrap();
        gw.url = line[start..].split_whitespace().next().unwrap().to_string();
        gw
    }

    /// Every log line the gateway wrote so far.
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

    /// The spawned gateway's process id.
    pub(crate) fn pid(&self) -> u32 {
        match &self.running {
            Running::Spawned { child, .. } => child.id().unwrap(),
            Running::InProcess(_) => panic!("a gateway in process has no process of its own: use Gateway::spawn"),
        }
    }

    /// The core of a gateway in process: its store, catalog and registry.
    pub(crate) fn gateway(&self) -> &mcp_gateway::gateway::Gateway {
        match &self.running {
            Running::InProcess(p) => &p.core,
            Running::Spawned { .. } => panic!("a spawned gateway's core is in another process"),
        }
    }

    /// The last failure of the server `name` of a gateway in process, as the
    /// registry keeps it (the console and `servers` show it).
    pub(crate) fn server_error(&self, name: &str) -> Option<String> {
        let server = self
            .gateway()
            .registry()
            .servers()
            .into_iter()
            .find(|s| s.name() == name)?;
        server.state().last_error.map(|(message, _at)| message)
    }

    /// Waits, at most `timeout`, until the server `name` has failed with an
    /// error containing `needle`; returns the error.
    pub(crate) async fn wait_server_error(&self, name: &str, needle: &str, timeout: Duration) -> String {
        eventually(timeout, &format!("{name} failing with {needle:?}"), || async {
            self.server_error(name).filter(|e| e.contains(needle))
        })
        .await
    }

    /// Stops as `serve` does on SIGTERM, and waits until it has (every task
    /// of a gateway in process ended, the audit log flushed).
    pub(crate) async fn stop(&mut self) {
        match &mut self.running {
            Running::InProcess(p) => {
                p.shutdown.cancel();
                if let Some(stopped) = p.stopped.take() {
                    let waited = tokio::task::spawn_blocking(move || stopped.recv_timeout(Duration::from_secs(30)));
                    waited.await.unwrap().expect("the gateway stops within 30 s");
                }
            }
            Running::Spawned { .. } => {
                self.terminate().await;
            }
        }
    }

    /// Sends the spawned gateway SIGTERM and waits for it to exit.
    pub(crate) async fn terminate(&mut self) -> std::process::ExitStatus {
        signal(self.pid(), nix::sys::signal::Signal::SIGTERM);
        let Running::Spawned { child, .. } = &mut self.running else {
            unreachable!("pid() is a spawned gateway's")
        };
        tokio::time::timeout(Duration::from_secs(30), child.wait())
            .await
            .expect("gateway exits")
            .unwrap()
    }

    /// Strict audit on SQLite answers once a call's row is journaled: waits,
    /// at most 10 s, until `/readyz` says the store has every such row.
    pub(crate) async fn audit_folded(&self) {
        eventually(Duration::from_secs(10), "journaled audit rows in the store", || async {
            (self.readyz().await["audit_journaled"].as_u64().unwrap_or(0) == 0).then_some(())
        })
        .await;
    }

    /// One request's audit rows: a script's own row first, then its inner calls.
    pub(crate) async fn rows_of(&self, request_id: &str) -> Vec<AuditRow> {
        self.audit_folded().await;
        self.gateway().store().audit_request(request_id).unwrap()
    }

    /// The newest `n` audit rows, newest last.
    pub(crate) async fn last_rows(&self, n: usize) -> Vec<AuditRow> {
        self.audit_folded().await;
        self.gateway().store().audit_tail(None, n).unwrap()
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
        super::cli_output_at(&self.config_path(), &self.env, args)
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

    /// `GET /metrics` of a spawned gateway, Prometheus text. (Metrics are
    /// the process's: gateways in the test process would share them.)
    pub(crate) async fn metrics(&self) -> String {
        assert!(
            matches!(self.running, Running::Spawned { .. }),
            "metrics are process-wide: use Gateway::spawn"
        );
        reqwest::get(self.url.replace("/mcp", "/metrics"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    }

    /// An MCP client (legacy `initialize` lifecycle, as most clients today).
    pub(crate) async fn client(&self) -> RunningService<RoleClient, ()> {
        connect(&self.url).await
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        match &self.running {
            // Its thread stops it and ends; a test that ended early does not wait.
            Running::InProcess(p) => p.shutdown.cancel(),
            Running::Spawned { child, .. } => {
                if let Some(pid) = child.id() {
                    signal(pid, nix::sys::signal::Signal::SIGTERM);
                }
            }
        }
    }
}
