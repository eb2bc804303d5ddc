//! The whole gateway in one call, wired as `serve` runs it: the core, the
//! config file's watcher and the upstream faces (stdio, and streamable HTTP
//! with the console beside it). The command line starts it from its flags,
//! the test harness in process on `127.0.0.1:0`; both stop it the same way.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::info;

use config::{Builtin, Config};
use downstream::{Builtins, serve_on};
use gateway::{Gateway, Running, StartError};
use server::{self, Upstream};

/// How long in-flight HTTP requests may take to finish once shutdown starts.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// What to start: a validated config and where to serve it.
#[derive(Debug)]
pub struct Launch {
    /// The configuration, as [`Config::load`] validated it.
    pub config: Config,
    /// The file to follow for hot reload (`serve --config`), if any.
    pub watch: Option<PathBuf>,
    /// Streamable HTTP at `/mcp` (and the console, health, metrics) on this bound listener.
    pub http: Option<TcpListener>,
    /// MCP over this process's stdin and stdout.
    pub stdio: Option<Stdio>,
    /// Fetch a missing embedding model in the background (`serve` does).
    pub fetch_model: bool,
}

/// The stdio session.
#[derive(Debug, Default)]
pub struct Stdio {
    /// Its token (`MCP_GATEWAY_TOKEN`); HTTP callers bring their own.
    pub token: Option<String>,
}

/// A started gateway: its bound address, its core, and every task it spawned.
#[derive(Debug)]
pub struct Launched {
    running: Running,
    http_addr: Option<SocketAddr>,
    http: Option<JoinHandle<anyhow::Result<()>>>,
    tasks: TaskTracker,
    shutdown: CancellationToken,
    stop_serving: CancellationToken,
}

impl Launch {
    /// Starts the core and the faces, on the current Tokio runtime.
    /// `shutdown` stops everything; closing stdin, when stdio is served,
    /// cancels it too.
    pub fn start(self, shutdown: CancellationToken) -> Result<Launched, StartError> {
        let Launch {
            config,
            watch,
            http,
            stdio,
            fetch_model,
        } = self;
        let mut running = Gateway::start(&config, Arc::new(BuiltinServers), CancellationToken::new())?;
        if fetch_model {
            running.fetch_missing_model();
        }
        let tasks = TaskTracker::new();
        let stop_serving = CancellationToken::new();
        let gateway = running.gateway.clone();
        if let Some(path) = watch {
            tasks.spawn(crate::reload::watch(
                path,
                gateway.clone(),
                config.clone(),
                stop_serving.child_token(),
            ));
        }
        info!(
            config = %config.source,
            servers = config.enabled_servers().count(),
            audit = config.audit.as_str(),
            "mcp-gateway starting"
        );
        let http_addr = http.as_ref().and_then(|l| l.local_addr().ok());
        let http = http.map(|listener| {
            // HTTP callers bring their own token.
            let upstream = Upstream::new(gateway.clone(), None);
            let (gateway, http_config, ct) = (gateway.clone(), config.http.clone(), stop_serving.child_token());
            tokio::spawn(async move {
                let pages = web_console::router(gateway.clone()).merge(BuiltinServers::routes());
                server::serve_http(upstream, gateway, pages, listener, &http_config, ct).await
            })
        });
        if let Some(Stdio { token }) = stdio {
            let (upstream, ct, shutdown) = (
                Upstream::new(gateway, token),
                stop_serving.child_token(),
                shutdown.clone(),
            );
            tasks.spawn(async move {
                if let Err(e) = server::serve_stdio(upstream, ct).await {
                    tracing::error!(error = %e, "stdio transport failed");
                }
                if !shutdown.is_cancelled() {
                    info!("stdin closed; shutting down");
                    shutdown.cancel();
                }
            });
        }
        tasks.close();
        Ok(Launched {
            running,
            http_addr,
            http,
            tasks,
            shutdown,
            stop_serving,
        })
    }
}

impl Launched {
    /// The core, for what is not served (the store, the catalog).
    pub fn gateway(&self) -> &Gateway {
        &self.running.gateway
    }

    /// Where streamable HTTP is served, when it is.
    pub fn http_addr(&self) -> Option<SocketAddr> {
        self.http_addr
    }

    /// Waits for shutdown, then stops in order: the faces (in-flight HTTP
    /// requests get [`SHUTDOWN_GRACE`], and any still running after it are
    /// left to the runtime), the watcher, the downstreams (each its own
    /// grace), and the audit log, flushed. Every other task it spawned has
    /// ended when this returns.
    pub async fn wait(self) {
        self.shutdown.cancelled().await;
        self.stop_serving.cancel();
        if let Some(task) = self.http {
            match tokio::time::timeout(SHUTDOWN_GRACE, task).await {
                Ok(Ok(Err(e))) => tracing::error!(error = %e, "http server failed"),
                Err(_) => tracing::warn!("in-flight HTTP requests did not finish within the grace period"),
                _ => {}
            }
        }
        self.tasks.wait().await;
        self.running.shutdown().await;
    }
}

/// The built-in servers, each from its crate: what the downstream layer
/// serves for a configured `index`, `archives` or `demo`.
#[derive(Debug)]
pub struct BuiltinServers;

impl BuiltinServers {
    /// What they serve over HTTP beside MCP: the Index widgets' files.
    pub fn routes() -> axum::Router {
        index_network::widget::router()
    }
}

impl Builtins for BuiltinServers {
    fn serve(&self, builtin: &Builtin, io: tokio::io::DuplexStream) {
        match builtin {
            Builtin::Index(config) => serve_on(index_network::IndexServer::new(config.clone()), io),
            Builtin::Archives(config) => serve_on(archive::ArchiveServer::new(config.clone()), io),
            Builtin::Demo => serve_on(demo::Demo::new(false), io),
        }
    }
}
