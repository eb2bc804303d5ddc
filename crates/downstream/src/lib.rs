//! Downstream MCP servers: one supervised connection per configured server.
//! It may not know callers, search or the faces above it, nor which
//! built-in servers exist: they come through [`Builtins`], from the entry
//! point.
//!
//! Each server is owned by its own task (an actor, see [`supervise`]): it
//! connects, lists tools, publishes its state, serves calls through a cloned
//! [`Peer`], and when the connection ends it backs off, reconnects and lists
//! again. Nothing here knows about search or callers; the catalog watches
//! [`Registry::changed`] and reads each server's [`ServerState`].

mod builtins;
mod child_env;
mod connect;
mod http_client;
mod instances;
pub mod line_codec;
mod line_transport;
pub mod mid_call;
mod passthrough;
mod progress;
mod registry;
mod remembered;
mod stderr;
mod stdio;

pub use builtins::{Builtins, serve_on};
pub use http_client::reqwest_client;
pub use instances::ProjectCredential;
pub use progress::{ProgressRoutes, Relay};
pub use registry::{Changes, Registry, Startup, ToolChanges};

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CancelledNotificationParam, ClientCapabilities,
    ClientRequest, RequestId, RequestMetaObject, ServerResult, Tool,
};
use rmcp::service::PeerRequestOptions;
use rmcp::service::{Peer, ServiceError};
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{info, warn};

use config::ServerConfig;

/// First delay before reconnecting a failed server; doubles up to [`BACKOFF_MAX`].
pub const BACKOFF_START: Duration = Duration::from_millis(500);
/// Longest delay between reconnection attempts.
pub const BACKOFF_MAX: Duration = Duration::from_secs(30);
/// A connection that lived this long resets the backoff.
const HEALTHY_AFTER: Duration = Duration::from_secs(60);
/// How often an idle connection is checked for a closed transport (HTTP
/// transports do not always end their service loop when the peer goes away).
const LIVENESS_TICK: Duration = Duration::from_secs(2);

/// The upstream side of one call: where its progress goes, and whom a 2025
/// downstream's mid-call requests may be put to (a 2025 session).
#[derive(Debug, Clone, Default)]
pub struct CallOrigin {
    /// The caller's progress token and session, when it sent a token.
    pub progress: Option<Relay>,
    /// Whom mid-call requests go to, when the caller may be asked (`mid_call.rs`).
    pub ask: Option<mid_call::Asker>,
    /// The capabilities of a caller that reads `InputRequiredResult`s (a
    /// 2026-07-28 client): mid-call requests it can answer come back as
    /// input requests (`gateway/rounds_parked.rs`).
    pub input_requests: Option<rmcp::model::ClientCapabilities>,
    /// Whether the caller declared the tasks extension (it polls a task itself).
    pub tasks: bool,
    /// Where the server's log messages during the call go, if the caller
    /// reads them.
    pub log: Option<mid_call::LogTo>,
}

impl CallOrigin {
    /// What the caller can answer when asked through the gateway: a 2026
    /// caller's declared capabilities, a 2025 session's; `None` when it
    /// cannot be asked (a script's calls, the command line).
    fn answerable(&self) -> Option<ClientCapabilities> {
        match &self.ask {
            Some(mid_call::Asker::Rounds(_, capabilities)) => Some(capabilities.clone()),
            Some(mid_call::Asker::Session { peer, .. }) => peer.peer_info().map(|info| info.capabilities.clone()),
            None => self.input_requests.clone(),
        }
    }
}

/// Cancels a downstream request whose caller stopped waiting (as rmcp's own
/// `call_tool_once` does), unless disarmed by its answer.
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            let peer = self.peer.clone();
            tokio::spawn(async move {
                let param = CancelledNotificationParam::new(Some(id), Some("cancelled by the upstream client".into()));
                let _ = peer.notify_cancelled(param).await;
            });
        }
    }
}

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
    /// The answer was longer than the server's `max_result_bytes`; it was not read into memory.
    #[error("server '{server}' answered with {bytes} bytes, more than its max_result_bytes")]
    TooLarge {
        /// The server.
        server: String,
        /// The answer's size.
        bytes: u64,
    },
    /// The server already runs `max_instances` per-project connections.
    #[error(
        "server '{server}' already runs {limit} connections for projects with their own credentials (max_instances); try again when one has gone idle, or raise max_instances"
    )]
    TooManyInstances {
        /// The server.
        server: String,
        /// Its `max_instances`.
        limit: usize,
    },
    /// The server takes only a project's own credential (an OAuth sign-in,
    /// or secrets with `shared = false`), and the caller's project has none.
    #[error("server '{server}' takes only a project's own credential, and this project has none")]
    SignInRequired {
        /// The server.
        server: String,
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
    /// Not started yet (lazy) or stopped for lack of calls (`idle_timeout_ms`);
    /// its tools are those of its last listing, and the next call starts it.
    Idle,
    /// It answers only with an OAuth sign-in, and the configuration gives
    /// none (or `shared = false`): projects reach it with their own
    /// (`mcp-gateway login`, `secret set`), and each project's connection
    /// lists its tools for that project alone.
    SignInRequired,
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
            Status::Idle => "idle",
            Status::SignInRequired => "sign-in",
        }
    }

    /// Whether the server's tools are known in this status: listed by the
    /// current connection, or those of its last listing (idle); one waiting
    /// for projects' credentials (sign-in) is known to have none of its own.
    pub fn tools_known(&self) -> bool {
        matches!(self, Status::Running | Status::Idle | Status::SignInRequired)
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Status::Failed(e) => write!(f, "failed ({e})"),
            Status::NotConfigured(why) => write!(f, "{why}"),
            Status::SignInRequired => {
                f.write_str("waiting for a project's credential: it takes only projects' own sign-ins or secrets")
            }
            other => f.write_str(other.word()),
        }
    }
}

/// What one server looks like right now. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ServerState {
    /// Connection status.
    pub status: Status,
    /// The tools of the current connection; while idle, those of its last listing.
    pub tools: Arc<[Tool]>,
    /// Handle for requests (present only while running).
    pub peer: Option<Peer<RoleClient>>,
    /// How many times the connection was re-established.
    pub restarts: u32,
    /// Negotiated protocol revision.
    pub protocol: Option<String>,
    /// The last failure and when it happened (ISO 8601), kept after recovery.
    pub last_error: Option<(String, String)>,
}

impl ServerState {
    /// Whether the server is in its first connection: its tools were never
    /// known since it was started (or added by a reload). One that failed
    /// and is trying again is not: it may keep failing.
    pub fn first_connection(&self) -> bool {
        self.status == Status::Connecting && self.restarts == 0
    }

    fn new(status: Status) -> Self {
        Self {
            status,
            tools: Arc::from([]),
            peer: None,
            restarts: 0,
            protocol: None,
            last_error: None,
        }
    }
}

/// Where each server's latest tool listing is kept across restarts (the
/// store), so a lazy server's tools are known before it first starts, and
/// the protocol revision of its last good connection, so a restart skips
/// the probe.
pub trait ToolMemory: Send + Sync + std::fmt::Debug {
    /// The tools `server` listed last, if it was ever reached as configured now.
    fn recall(&self, server: &ServerConfig) -> Option<Vec<Tool>>;
    /// Keeps a fresh listing.
    fn remember(&self, server: &ServerConfig, tools: &[Tool]);
    /// The revision `server` spoke last time it was reached as configured now.
    fn recall_protocol(&self, server: &ServerConfig) -> Option<String>;
    /// Keeps the revision of a good connection (after [`ToolMemory::remember`]).
    fn remember_protocol(&self, server: &ServerConfig, protocol: &str);
}

/// One configured downstream server and its live state.
#[derive(Debug)]
pub struct Downstream {
    /// Its configuration.
    pub config: ServerConfig,
    state: watch::Sender<ServerState>,
    progress: Arc<ProgressRoutes>,
    /// Its calls in flight whose callers a mid-call request may be put to.
    asks: Arc<mid_call::Asks>,
    /// Stops this server alone (a reload removed or changed it), or with the gateway.
    stop: CancellationToken,
    /// URIs of its `notifications/resources/updated`.
    resource_updates: tokio::sync::broadcast::Sender<String>,
    /// Open `subscriptions/listen` streams by resource URI (2026-07-28 servers).
    listens: std::sync::Mutex<HashMap<String, tokio_util::sync::DropGuard>>,
    memory: Arc<dyn ToolMemory>,
    /// Serves it when it is a built-in.
    builtins: Arc<dyn Builtins>,
    /// Rung by the first call to an idle server.
    wake: Notify,
    /// Rung when an operator asks for a restart, or for the tools to be listed again.
    restart: Notify,
    relist: Notify,
    /// A child's newest stderr lines.
    stderr: Arc<stderr::Tail>,
    /// Calls in flight, and when the last one ended (for `idle_timeout_ms`).
    busy: AtomicUsize,
    last_used: std::sync::Mutex<Instant>,
    /// For a per-project instance: whose credential it runs with.
    own: Option<ProjectCredential>,
    /// For a per-project instance: the server it stands in for.
    parent: std::sync::Weak<Downstream>,
    /// Rung when its tools change (the catalog listens).
    changed: Arc<ToolChanges>,
    /// Per-project instances of this server.
    instances: instances::Instances,
    /// Where instances' supervisors run.
    tracker: TaskTracker,
}

/// Counts one call in flight for as long as it lives.
struct Busy<'a>(&'a Downstream);

impl<'a> Busy<'a> {
    fn new(server: &'a Downstream) -> Self {
        server.busy.fetch_add(1, Ordering::SeqCst);
        Self(server)
    }
}

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        *self.0.last_used.lock().expect("last_used lock") = Instant::now();
        self.0.busy.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Downstream {
    fn new(
        config: ServerConfig,
        stop: CancellationToken,
        memory: Arc<dyn ToolMemory>,
        builtins: Arc<dyn Builtins>,
        tracker: TaskTracker,
        changed: Arc<ToolChanges>,
    ) -> Self {
        // A lazy server never listed before starts once now, to learn its
        // tools. One with no connection of its own has no listing to recall.
        let remembered = (config.lazy && config.shared).then(|| memory.recall(&config)).flatten();
        let mut state = ServerState::new(match config.unconfigured() {
            Some(why) => Status::NotConfigured(why),
            None if !config.enabled => Status::Stopped,
            None if remembered.is_some() => Status::Idle,
            None => Status::Connecting,
        });
        state.tools = remembered.unwrap_or_default().into();
        Self {
            config,
            state: watch::Sender::new(state),
            // Per server: each peer numbers its progress tokens from zero.
            progress: Arc::default(),
            asks: Arc::default(),
            stop,
            resource_updates: tokio::sync::broadcast::Sender::new(64),
            listens: Default::default(),
            memory,
            builtins,
            wake: Notify::new(),
            restart: Notify::new(),
            relist: Notify::new(),
            stderr: Arc::default(),
            busy: AtomicUsize::new(0),
            last_used: std::sync::Mutex::new(Instant::now()),
            own: None,
            parent: std::sync::Weak::new(),
            changed,
            instances: Default::default(),
            tracker,
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

    /// Its child's newest stderr lines (none for HTTP and built-in servers).
    pub fn stderr_tail(&self) -> Vec<String> {
        self.stderr.lines()
    }

    /// Stops the connection and starts it again now (a failed server skips
    /// its back-off; an idle one starts).
    pub fn restart(&self) {
        if self.state.borrow().status == Status::Idle {
            self.wake.notify_one();
        } else {
            self.restart.notify_one();
        }
    }

    /// Lists the running server's tools again (at its next connection, if it is not running).
    pub fn list_tools_again(&self) {
        self.relist.notify_one();
    }

    /// Waits until the server is past `connecting` (running, failed or stopped).
    pub async fn settled(&self) {
        let mut rx = self.state.subscribe();
        let _ = rx.wait_for(|s| s.status != Status::Connecting).await;
    }

    /// Waits until the server's first connection has ended (running,
    /// failed, waiting for sign-ins), at most its `connect_timeout_ms`.
    pub async fn first_connected(&self) {
        let mut rx = self.state.subscribe();
        let ended = rx.wait_for(|s| !s.first_connection());
        let _ = tokio::time::timeout(self.config.connect_timeout, ended).await;
    }

    /// How long no call has been in flight.
    fn idle_for(&self) -> Duration {
        if self.busy.load(Ordering::SeqCst) > 0 {
            return Duration::ZERO;
        }
        self.last_used.lock().expect("last_used lock").elapsed()
    }

    /// The connection, starting an idle server first (bounded by its
    /// `connect_timeout_ms`); a per-project instance is also waited for
    /// while it connects, as it starts on the call that needs it.
    async fn ready_peer(&self) -> Result<Peer<RoleClient>, Error> {
        let status = self.state.borrow().status.clone();
        if status == Status::Idle || (self.own.is_some() && status == Status::Connecting) {
            if status == Status::Idle {
                // Only then: a permit left unused would wake it again the moment it next goes idle.
                self.wake.notify_one();
            }
            let mut rx = self.state.subscribe();
            let started = rx.wait_for(|s| !matches!(s.status, Status::Idle | Status::Connecting));
            let _ = tokio::time::timeout(self.config.connect_timeout, started).await;
        }
        self.peer()
    }

    fn peer(&self) -> Result<Peer<RoleClient>, Error> {
        let state = self.state.borrow();
        match (&state.status, &state.peer) {
            (Status::Running, Some(peer)) if !peer.is_transport_closed() => Ok(peer.clone()),
            (Status::Running, _) => Err(Error::Closed {
                server: self.name().to_string(),
            }),
            (Status::SignInRequired, _) => Err(Error::SignInRequired {
                server: self.name().to_string(),
            }),
            (status, _) => Err(Error::NotRunning {
                server: self.name().to_string(),
                status: status.clone(),
            }),
        }
    }

    /// Calls a tool, bounded by the server's timeout. Dropping the future (or
    /// the timeout firing) sends `notifications/cancelled` downstream. With a
    /// `progress` relay, the call carries a progress token of ours and the
    /// server's progress notifications reach the relay. A 2026-07-28 server
    /// is told, with the call, what its caller can answer ([`Self::asked_of`]).
    pub async fn call_tool(
        &self,
        params: CallToolRequestParams,
        origin: CallOrigin,
    ) -> Result<CallToolResponse, Error> {
        let peer = self.ready_peer().await?;
        let tool = params.name.to_string();
        let meta = self.asked_of(&origin);
        let _in_flight = self.asks.enter(origin.ask, origin.log);
        if origin.progress.is_none() && meta.is_none() {
            return self.bounded(&tool, peer.call_tool_once(params)).await;
        }
        let call = async {
            let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
            let mut options = PeerRequestOptions::no_options();
            options.meta = meta;
            let handle = peer.send_request_with_option(request, options).await?;
            // rmcp puts its own progress token on every request: route that one.
            let route = match origin.progress {
                Some(relay) => Some(self.progress.register(handle.progress_token.clone(), relay).await),
                None => None,
            };
            let mut cancel = CancelOnDrop {
                peer: peer.clone(),
                id: Some(handle.id.clone()),
            };
            let answer = handle.await_response().await;
            cancel.id = None;
            if let Some(route) = &route {
                self.progress.settle(route).await;
            }
            match answer? {
                ServerResult::CallToolResult(r) => Ok(CallToolResponse::Complete(r)),
                ServerResult::InputRequiredResult(r) => Ok(CallToolResponse::InputRequired(r)),
                ServerResult::CreateTaskResult(r) => Ok(CallToolResponse::Task(r)),
                _ => Err(ServiceError::UnexpectedResponse),
            }
        };
        self.bounded(&tool, call).await
    }

    /// The `_meta` that tells a 2026-07-28 server, per request, what may be
    /// asked of the caller behind a call: its roots, questions (form or URL)
    /// and sampling, as the caller declared them, since each input request
    /// goes to that caller (tasks the gateway handles itself); and the log
    /// level it asked for. `None` for a 2025 server, which learned the
    /// gateway's capabilities once for all its callers, and for a caller
    /// that can be neither asked nor told.
    #[allow(deprecated)] // roots, sampling and logging: deprecated by 2026-07-28, still used
    fn asked_of(&self, origin: &CallOrigin) -> Option<RequestMetaObject> {
        if !self.stateless() {
            return None;
        }
        let answerable = origin.answerable();
        if answerable.is_none() && origin.log.is_none() {
            return None;
        }
        let mut meta = RequestMetaObject::default();
        if let Some(caller) = answerable {
            let mut capabilities = connect::gateway_capabilities();
            capabilities.roots = caller.roots.map(|_| Default::default());
            capabilities.sampling = caller.sampling;
            capabilities.elicitation = caller.elicitation;
            meta.set_client_capabilities(capabilities);
        }
        if let Some(level) = origin.log.as_ref().and_then(|log| log.level) {
            meta.set_log_level(level);
        }
        Some(meta)
    }

    async fn bounded<T>(&self, what: &str, call: impl Future<Output = Result<T, ServiceError>>) -> Result<T, Error> {
        let _busy = Busy::new(self);
        let after = self.config.timeout;
        let started = Instant::now();
        let outcome = tokio::time::timeout(after, call).await;
        telemetry::downstream_call(self.name(), started.elapsed());
        match outcome {
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
            ServiceError::McpError(error) => match oversized(&error) {
                Some(bytes) => Error::TooLarge { server, bytes },
                None => Error::Protocol { server, error },
            },
            ServiceError::TransportClosed | ServiceError::Cancelled { .. } => Error::Closed { server },
            ServiceError::TransportSend(_) => Error::Closed { server },
            other => Error::Other {
                server,
                message: vocab::mask::urls_in(&other.to_string()),
            },
        }
    }

    /// Publishes a change of the server's tools (or whether they are
    /// known), counted while the new state is being written: a call that
    /// reads the state, then the count, and a rebuild that reads the count,
    /// then the states, never see one without the other, so neither answers
    /// from a catalog that misses a server already running.
    fn publish_change(&self, changed: &ToolChanges, f: impl FnOnce(&mut ServerState)) {
        self.publish(|s| {
            f(s);
            changed.notify_one();
        });
    }

    fn publish(&self, f: impl FnOnce(&mut ServerState)) {
        self.state.send_modify(f);
        if self.stop.is_cancelled() || self.own.is_some() {
            // Removed or replaced by a reload: its name's gauges are no longer
            // its own. A per-project instance never had them.
            return;
        }
        let state = self.state.borrow();
        telemetry::downstream_state(
            self.name(),
            state.status == Status::Running,
            state.restarts,
            state.tools.len(),
        );
    }
}

/// The size of an answer refused for its length (`line_transport::refused_answer`), if `error` is one.
fn oversized(error: &rmcp::ErrorData) -> Option<u64> {
    error.data.as_ref()?.get(line_transport::OVERSIZED_BYTES)?.as_u64()
}

/// How a connection ended without failing.
pub(crate) enum Ended {
    /// The server closed it (exited).
    Closed,
    /// The gateway stopped it (shutdown, or a reload removed the server).
    Stopped,
    /// It had no calls for `idle_timeout_ms`; the next call starts it again.
    Idle,
    /// It refused the configured credential (HTTP 401): only projects' own sign-ins reach it.
    SignInRequired,
    /// An operator asked for a restart.
    Restart,
}

/// The life of one server: connect, serve until the connection ends, back
/// off, repeat; an idle server waits for a call first.
async fn supervise(server: Arc<Downstream>, changed: Arc<ToolChanges>) {
    let name = server.name().to_string();
    let ct = server.stop.clone();
    let mut backoff = BACKOFF_START;
    let mut restarts = 0u32;
    let mut idle = server.state.borrow().status == Status::Idle;
    loop {
        if idle {
            tokio::select! {
                _ = server.wake.notified() => {}
                _ = ct.cancelled() => break,
            }
            idle = false;
        }
        server.publish(|s| {
            s.status = Status::Connecting;
            s.restarts = restarts;
        });
        let started = Instant::now();
        // `run` watches `ct` itself, so that a stopping server still gets its grace period.
        let failure = match connect::run(&server, &changed, &ct).await {
            Ok(Ended::Stopped) => break,
            Ok(Ended::Restart) => {
                restarts += 1;
                backoff = BACKOFF_START;
                continue;
            }
            Ok(Ended::Idle) => {
                info!(server = %name, "downstream server stopped while idle; the next call starts it");
                idle = true;
                backoff = BACKOFF_START;
                continue;
            }
            Ok(Ended::SignInRequired) => {
                info!(server = %name, "downstream server takes only projects' own credentials; each such project's connection lists its tools for it alone");
                // No listing of its own: one a project made is that project's.
                server.publish_change(&changed, |s| {
                    s.status = Status::SignInRequired;
                    s.peer = None;
                    s.tools = Arc::from([]);
                });
                // Nothing to retry: a reload with a credential restarts it.
                ct.cancelled().await;
                break;
            }
            Ok(Ended::Closed) => "connection closed (the server exited)".to_string(),
            // Transport errors quote the URL they failed on, password and all.
            Err(e) => vocab::mask::urls_in(&e),
        };
        let instance = server.own.is_some();
        warn!(server = %name, error = %failure, retry_in_ms = (!instance).then_some(backoff.as_millis() as u64), "downstream server failed");
        let at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        server.publish_change(&changed, |s| {
            s.last_error = Some((failure.clone(), at));
            s.status = Status::Failed(failure);
            s.tools = Arc::from([]);
            s.peer = None;
        });
        if instance {
            // A project's own connection is tried again by its next call, not in the background.
            return;
        }
        if started.elapsed() > HEALTHY_AFTER {
            backoff = BACKOFF_START;
        }
        tokio::select! {
            _ = tokio::time::sleep(backoff) => {}
            _ = server.restart.notified() => backoff = BACKOFF_START,
            _ = ct.cancelled() => break,
        }
        backoff = (backoff * 2).min(BACKOFF_MAX);
        restarts += 1;
    }
    server.publish_change(&changed, |s| {
        s.status = Status::Stopped;
        s.tools = Arc::from([]);
        s.peer = None;
    });
    info!(server = %name, "downstream server stopped");
}

#[cfg(test)]
mod tests;
