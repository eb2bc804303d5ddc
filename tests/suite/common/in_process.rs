//! The whole gateway started in this process, as `serve --http 127.0.0.1:0`
//! starts it (`mcp_gateway::launch`), and spoken to over MCP with the rmcp
//! client: no binary to spawn, no log to read for the port, and the store
//! and catalog at hand for assertions.

use std::time::Duration;

use mcp_gateway::config::Config;
use mcp_gateway::gateway::Gateway;
use mcp_gateway::launch::{Launch, Launched};
use mcp_gateway::store::AuditRow;
use rmcp::RoleClient;
use rmcp::service::RunningService;
use tokio_util::sync::CancellationToken;

/// A gateway running in this process on `127.0.0.1:0`.
pub(crate) struct InProcess {
    launched: Option<Launched>,
    shutdown: CancellationToken,
    /// Where the URL clients connect to: `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    /// The config's folder: its store beside it.
    pub dir: tempfile::TempDir,
}

impl InProcess {
    /// Writes `config` to a temp dir, loads it as `serve` would, and serves
    /// streamable HTTP on a free port. The model is never fetched.
    pub(crate) async fn start(config: &str) -> InProcess {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("gateway.toml"), config).unwrap();
        Self::start_in(dir).await
    }

    /// Starts on the config (and store) in `dir`.
    async fn start_in(dir: tempfile::TempDir) -> InProcess {
        let config = Config::load(Some(&dir.path().join("gateway.toml"))).expect("a valid config");
        let http = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let shutdown = CancellationToken::new();
        let launch = Launch {
            config,
            watch: None,
            http: Some(http),
            stdio: None,
            fetch_model: false,
        };
        let launched = launch.start(shutdown.clone()).expect("the gateway starts");
        let url = format!("http://{}/mcp", launched.http_addr().expect("HTTP is served"));
        InProcess {
            launched: Some(launched),
            shutdown,
            url,
            dir,
        }
    }

    /// Stops, then starts again on the same config and store (a new port).
    pub(crate) async fn restart(mut self) -> InProcess {
        self.halt().await;
        let dir = tempfile::TempDir::new().unwrap();
        Self::start_in(std::mem::replace(&mut self.dir, dir)).await
    }

    /// The core: its store, catalog and registry.
    pub(crate) fn gateway(&self) -> &Gateway {
        self.launched.as_ref().expect("running").gateway()
    }

    /// An MCP client over streamable HTTP.
    pub(crate) async fn client(&self) -> RunningService<RoleClient, ()> {
        super::connect(&self.url).await
    }

    /// One request's audit rows: a script's own row first, then its inner calls.
    pub(crate) async fn rows_of(&self, request_id: &str) -> Vec<AuditRow> {
        self.journal_folded().await;
        self.gateway().store().audit_request(request_id).unwrap()
    }

    /// The newest `n` audit rows, newest last.
    pub(crate) async fn last_rows(&self, n: usize) -> Vec<AuditRow> {
        self.journal_folded().await;
        self.gateway().store().audit_tail(None, n).unwrap()
    }

    /// Strict audit on SQLite answers once a row is journaled: waits, at
    /// most 10 s, until the writer has every such row in the store.
    async fn journal_folded(&self) {
        let store = self.gateway().store();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while store.journaled_backlog().unwrap_or(0) > 0 && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Runs an `mcp-gateway` command on this gateway's config (and so its store).
    pub(crate) fn cli(&self, args: &[&str]) -> std::process::Output {
        let config = self.dir.path().join("gateway.toml");
        super::succeeded(args, super::cli_output_at(&config, &[], args))
    }

    /// Issues a token for `project` and returns its secret.
    pub(crate) fn issue_token(&self, project: &str) -> String {
        super::token_of(self.cli(&["token", "issue", "--project", project]))
    }

    /// An MCP client that sends `Authorization: Bearer <token>`.
    pub(crate) async fn client_with_token(&self, token: &str) -> RunningService<RoleClient, ()> {
        super::connect_with_token(&self.url, token)
            .await
            .expect("the client connects")
    }

    /// Stops as `serve` does on SIGTERM, and waits until every task it started has ended.
    pub(crate) async fn stop(mut self) {
        self.halt().await;
    }

    async fn halt(&mut self) {
        self.shutdown.cancel();
        let launched = self.launched.take().expect("running");
        tokio::time::timeout(Duration::from_secs(30), launched.wait())
            .await
            .expect("the gateway stops within 30 s");
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        // A test that ended early: the runtime drops the tasks with it.
        self.shutdown.cancel();
    }
}
