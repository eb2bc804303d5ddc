//! Downstream MCP servers: one supervised connection per configured server.
//!
//! Each server is owned by its own task (an actor, see [`supervise`]): it
//! connects, lists tools, publishes its state, serves calls through a cloned
//! [`Peer`], and when the connection ends it backs off, reconnects and lists
//! again. Nothing here knows about search or callers; the catalog watches
//! [`Registry::changed`] and reads each server's [`ServerState`].

mod connect;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse, Prompt,
    ReadResourceRequestParams, ReadResourceResponse, Resource, ResourceTemplate, Tool,
};
use rmcp::service::{Peer, ServiceError};
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{info, warn};

use crate::config::ServerConfig;

/// First delay before reconnecting a failed server; doubles up to [`BACKOFF_MAX`].
pub const BACKOFF_START: Duration = Duration::from_millis(500);
/// Longest delay between reconnection attempts.
pub const BACKOFF_MAX: Duration = Duration::from_secs(30);
/// A connection that lived this long resets the backoff.
const HEALTHY_AFTER: Duration = Duration::from_secs(60);
/// How often an idle connection is checked for a closed transport (HTTP
/// transports do not always end their service loop when the peer goes away).
const LIVENESS_TICK: Duration = Duration::from_secs(2);

/// `_meta` key carrying the caller's bearer token to built-in servers only
/// (they run in process; no other downstream ever receives it).
pub const CALLER_TOKEN_META: &str = "mcp-gateway/callerToken";
/// `_meta` key carrying the gateway's request id, for correlating logs.
pub const REQUEST_ID_META: &str = "mcp-gateway/requestId";

/// Why a downstream call did not produce a result. Messages name the server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server is configured but not connected.
    #[error("server '{server}' is {status}; its tools are unavailable until it is running again")]
    NotRunning {
        /// The server.
        server: String,
        /// Its status, with the last error.
        status: Status,
    },
    /// The call took longer than the server's `timeout_ms`; it was cancelled downstream.
    #[error("call to '{server}:{tool}' timed out after {} ms and was cancelled", after.as_millis())]
    Timeout {
        /// The server.
        server: String,
        /// The tool, prompt or resource.
        tool: String,
        /// The timeout that fired.
        after: Duration,
    },
    /// The connection ended while the call was in flight.
    #[error("server '{server}' closed the connection during the call (it exited or crashed); it is being restarted")]
    Closed {
        /// The server.
        server: String,
    },
    /// The server answered with a JSON-RPC error; forwarded as is.
    #[error("server '{server}' refused the request: {}", error.message)]
    Protocol {
        /// The server.
        server: String,
        /// Its error.
        error: rmcp::ErrorData,
    },
    /// Anything else the client library reported.
    #[error("server '{server}': {message}")]
    Other {
        /// The server.
        server: String,
        /// What went wrong.
        message: String,
    },
}

/// Connection status of one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Starting, connecting or listing tools.
    Connecting,
    /// Connected, tools listed.
    Running,
    /// The last attempt failed; a retry is scheduled.
    Failed(String),
    /// Disabled in the config, or shut down.
    Stopped,
    /// A built-in that lacks its settings; never started.
    NotConfigured(String),
}

impl Status {
    /// The status word alone (`running`, `failed`...).
    pub fn word(&self) -> &'static str {
        match self {
            Status::Connecting => "connecting",
            Status::Running => "running",
            Status::Failed(_) => "failed",
            Status::Stopped => "stopped",
            Status::NotConfigured(_) => "unconfigured",
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Status::Failed(e) => write!(f, "failed ({e})"),
            Status::NotConfigured(why) => write!(f, "{why}"),
            other => f.write_str(other.word()),
        }
    }
}

/// What one server looks like right now. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ServerState {
    /// Connection status.
    pub status: Status,
    /// The tools of the current connection (empty unless running).
    pub tools: Arc<[Tool]>,
    /// Handle for requests (present only while running).
    pub peer: Option<Peer<RoleClient>>,
    /// How many times the connection was re-established.
    pub restarts: u32,
    /// Negotiated protocol revision.
    pub protocol: Option<String>,
}

impl ServerState {
    fn new(status: Status) -> Self {
        Self {
            status,
            tools: Arc::from([]),
            peer: None,
            restarts: 0,
            protocol: None,
        }
    }
}

/// One configured downstream server and its live state.
#[derive(Debug)]
pub struct Downstream {
    /// Its configuration.
    pub config: ServerConfig,
    state: watch::Sender<ServerState>,
}

impl Downstream {
    fn new(config: ServerConfig) -> Self {
        let initial = match config.unconfigured() {
            Some(why) => Status::NotConfigured(why),
            None if config.enabled => Status::Connecting,
            None => Status::Stopped,
        };
        Self {
            config,
            state: watch::Sender::new(ServerState::new(initial)),
        }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// A copy of its current state.
    pub fn state(&self) -> ServerState {
        self.state.borrow().clone()
    }

    /// Waits until the server is past `connecting` (running, failed or stopped).
    pub async fn settled(&self) {
        let mut rx = self.state.subscribe();
        let _ = rx.wait_for(|s| s.status != Status::Connecting).await;
    }

    fn peer(&self) -> Result<Peer<RoleClient>, Error> {
        let state = self.state.borrow();
        match (&state.status, &state.peer) {
            (Status::Running, Some(peer)) if !peer.is_transport_closed() => Ok(peer.clone()),
            (Status::Running, _) => Err(Error::Closed {
                server: self.name().to_string(),
            }),
            (status, _) => Err(Error::NotRunning {
                server: self.name().to_string(),
                status: status.clone(),
            }),
        }
    }

    /// Calls a tool, bounded by the server's timeout. Dropping the future (or
    /// the timeout firing) sends `notifications/cancelled` downstream.
    pub async fn call_tool(&self, params: CallToolRequestParams) -> Result<CallToolResponse, Error> {
        let peer = self.peer()?;
        let tool = params.name.to_string();
        self.bounded(&tool, peer.call_tool_once(params)).await
    }

    /// Reads a resource from this server.
    pub async fn read_resource(&self, params: ReadResourceRequestParams) -> Result<ReadResourceResponse, Error> {
        let peer = self.peer()?;
        let uri = params.uri.clone();
        self.bounded(&uri, peer.read_resource_once(params)).await
    }

    /// Gets a prompt from this server.
    pub async fn get_prompt(&self, params: GetPromptRequestParams) -> Result<GetPromptResponse, Error> {
        let peer = self.peer()?;
        let name = params.name.clone();
        self.bounded(&name, peer.get_prompt_once(params)).await
    }

    /// Lists resources, or nothing when the server has none or is down.
    pub async fn list_resources(&self) -> Result<Vec<Resource>, Error> {
        let peer = self.peer()?;
        if !advertises(&peer, |c| c.resources.is_some()) {
            return Ok(Vec::new());
        }
        self.bounded("resources/list", peer.list_all_resources()).await
    }

    /// Lists resource templates.
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, Error> {
        let peer = self.peer()?;
        if !advertises(&peer, |c| c.resources.is_some()) {
            return Ok(Vec::new());
        }
        self.bounded("resources/templates/list", peer.list_all_resource_templates())
            .await
    }

    /// Lists prompts.
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, Error> {
        let peer = self.peer()?;
        if !advertises(&peer, |c| c.prompts.is_some()) {
            return Ok(Vec::new());
        }
        self.bounded("prompts/list", peer.list_all_prompts()).await
    }

    async fn bounded<T>(&self, what: &str, call: impl Future<Output = Result<T, ServiceError>>) -> Result<T, Error> {
        let after = self.config.timeout;
        match tokio::time::timeout(after, call).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(self.map_error(e)),
            Err(_) => Err(Error::Timeout {
                server: self.name().to_string(),
                tool: what.to_string(),
                after,
            }),
        }
    }

    fn map_error(&self, e: ServiceError) -> Error {
        let server = self.name().to_string();
        match e {
            ServiceError::McpError(error) => Error::Protocol { server, error },
            ServiceError::TransportClosed | ServiceError::Cancelled { .. } => Error::Closed { server },
            ServiceError::TransportSend(_) => Error::Closed { server },
            other => Error::Other {
                server,
                message: other.to_string(),
            },
        }
    }

    fn publish(&self, f: impl FnOnce(&mut ServerState)) {
        self.state.send_modify(f);
    }
}

fn advertises(peer: &Peer<RoleClient>, has: impl Fn(&rmcp::model::ServerCapabilities) -> bool) -> bool {
    // A server that never told us its capabilities gets the benefit of the doubt.
    peer.peer_info().is_none_or(|info| has(&info.capabilities))
}

/// Every configured server, in config order, plus a signal for "some server's tools changed".
#[derive(Debug)]
pub struct Registry {
    servers: Vec<Arc<Downstream>>,
    by_name: HashMap<String, usize>,
    changed: Arc<Notify>,
}

impl Registry {
    /// All servers.
    pub fn servers(&self) -> &[Arc<Downstream>] {
        &self.servers
    }

    /// A server by name.
    pub fn get(&self, name: &str) -> Option<&Arc<Downstream>> {
        self.by_name.get(name).map(|&i| &self.servers[i])
    }

    /// Notified whenever a server's status or tools change.
    pub fn changed(&self) -> &Arc<Notify> {
        &self.changed
    }

    /// Waits until every enabled server has connected or failed at least once.
    pub async fn settled(&self) {
        futures::future::join_all(self.servers.iter().map(|s| s.settled())).await;
    }
}

/// Starts a supervisor per enabled server, concurrently, on `tracker`.
/// Cancelling `ct` stops them all; each stops its child process on the way out.
pub fn start(servers: &[ServerConfig], tracker: &TaskTracker, ct: &CancellationToken) -> Arc<Registry> {
    let changed = Arc::new(Notify::new());
    let servers: Vec<_> = servers.iter().cloned().map(|c| Arc::new(Downstream::new(c))).collect();
    for server in servers
        .iter()
        .filter(|s| s.config.enabled && s.config.unconfigured().is_none())
    {
        tracker.spawn(supervise(server.clone(), changed.clone(), ct.child_token()));
    }
    let by_name = servers
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name().to_string(), i))
        .collect();
    Arc::new(Registry {
        servers,
        by_name,
        changed,
    })
}

/// The life of one server: connect, serve until the connection ends, back off, repeat.
async fn supervise(server: Arc<Downstream>, changed: Arc<Notify>, ct: CancellationToken) {
    let name = server.name().to_string();
    let mut backoff = BACKOFF_START;
    let mut attempts = 0u32;
    loop {
        server.publish(|s| {
            s.status = Status::Connecting;
            s.restarts = attempts.saturating_sub(1);
        });
        attempts += 1;
        let started = Instant::now();
        // `run` watches `ct` itself, so that a stopping server still gets its grace period.
        let failure = match connect::run(&server, &changed, &ct).await {
            Ok(()) if ct.is_cancelled() => break,
            Ok(()) => "connection closed (the server exited)".to_string(),
            Err(e) => e,
        };
        warn!(server = %name, error = %failure, retry_in_ms = backoff.as_millis() as u64, "downstream server failed");
        server.publish(|s| {
            s.status = Status::Failed(failure);
            s.tools = Arc::from([]);
            s.peer = None;
        });
        changed.notify_one();
        if started.elapsed() > HEALTHY_AFTER {
            backoff = BACKOFF_START;
        }
        tokio::select! {
            _ = tokio::time::sleep(backoff) => {}
            _ = ct.cancelled() => break,
        }
        backoff = (backoff * 2).min(BACKOFF_MAX);
    }
    server.publish(|s| {
        s.status = Status::Stopped;
        s.tools = Arc::from([]);
        s.peer = None;
    });
    changed.notify_one();
    info!(server = %name, "downstream server stopped");
}
