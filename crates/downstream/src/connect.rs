//! One connection to a downstream server: open the transport, negotiate,
//! list tools, then serve until the connection ends or the gateway stops.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use process_wrap::tokio::{CommandWrap, ProcessGroup};
// 2025 sampling and roots are deprecated by 2026-07-28, but 2025 servers still send them.
#[allow(deprecated)]
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ElicitationCapability, ErrorData, Implementation, ListRootsResult, LoggingMessageNotificationParam,
    PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion, ResourceUpdatedNotificationParam,
    SubscriptionFilter, Tool,
};
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, NotificationContext, RequestContext, RunningService, ServiceError,
};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientCacheConfig, ClientHandler, ClientServiceExt, RoleClient};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use super::child_env::child_environment;
use super::http_client::{WholeListing, reqwest_client};
use super::line_transport::LineTransport;
use super::stdio::{ChildTransport, Lent};
use super::{Downstream, Ended, LIVENESS_TICK, Status};
use config::{Builtin, Transport};

/// Buffer of the in-memory pipe to a built-in server (large results pass through it).
const BUILTIN_PIPE_BYTES: usize = 256 * 1024;

/// Room for the JSON-RPC envelope around a result of `max_result_bytes`.
const ENVELOPE_BYTES: usize = 4096;

/// How long a stopping server's subscription gets to say it is cancelled.
const LISTEN_CANCEL_WAIT: Duration = Duration::from_secs(1);

/// How long a stopping child gets (rmcp closes stdin, waits, SIGTERMs, waits) before its group is killed.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(8);

/// The shortest re-listing interval a server's `ttlMs` can ask for, so that
/// a server cannot make the gateway list its tools in a loop.
const MIN_SERVER_TTL: Duration = Duration::from_secs(1);

/// The pause before a `subscriptions/listen` stream that ended is opened
/// again; it doubles, up to [`LISTEN_AGAIN_MAX`], while streams end sooner
/// than that (a server that ends each one at once is not asked in a loop).
const LISTEN_AGAIN_AFTER: Duration = Duration::from_secs(1);
/// The longest pause before a stream is opened again.
const LISTEN_AGAIN_MAX: Duration = Duration::from_secs(60);

/// The gateway's side of each downstream connection: it only listens for
/// "my tools changed" and relays it to the supervisor.
#[derive(Clone)]
struct Client {
    /// Why the tools should be listed again, for the log.
    tools_changed: mpsc::UnboundedSender<&'static str>,
    progress: std::sync::Arc<super::ProgressRoutes>,
    asks: std::sync::Arc<super::mid_call::Asks>,
    resource_updates: tokio::sync::broadcast::Sender<String>,
}

#[allow(deprecated)]
impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.client_info = Implementation::new("mcp-gateway", env!("CARGO_PKG_VERSION"));
        info.capabilities = gateway_capabilities();
        info
    }

    async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asks.elicit(params).await
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.asks.create_message(params).await
    }

    async fn list_roots(&self, _: RequestContext<RoleClient>) -> Result<ListRootsResult, ErrorData> {
        self.asks.list_roots().await
    }

    async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
        let _ = self.tools_changed.send("list_changed");
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _: NotificationContext<RoleClient>) {
        self.progress.relay(params).await;
    }

    async fn on_logging_message(&self, params: LoggingMessageNotificationParam, _: NotificationContext<RoleClient>) {
        self.asks.log(params).await;
    }

    async fn on_resource_updated(&self, params: ResourceUpdatedNotificationParam, _: NotificationContext<RoleClient>) {
        // No subscriber listening is fine: nobody asked.
        let _ = self.resource_updates.send(params.uri);
    }
}

type Connection = RunningService<RoleClient, Client>;

/// What the gateway declares to every server it connects to. Elicitation
/// and sampling are relayed to the caller of the call in flight (mid_call.rs),
/// when it can answer. Not roots: a 2025 server learns of them once for the
/// connection, which the gateway shares between callers, asks for them when
/// it starts, outside any call, and keeps the answer (it would trade its
/// configured directories for none, or keep one caller's roots for all). A
/// 2026-07-28 server is told per call what that call's caller can answer,
/// roots included (`Downstream::asked_of`). Tasks: a caller with the
/// extension polls them through the gateway, for any other the gateway
/// polls them itself (gateway/tasks.rs).
#[allow(deprecated)] // sampling: deprecated by 2026-07-28, still asked
pub(super) fn gateway_capabilities() -> ClientCapabilities {
    let mut capabilities = ClientCapabilities::builder()
        .enable_elicitation()
        .enable_sampling()
        .enable_tasks()
        .build();
    // Both modes of question: each goes only to a caller that declared its mode (mid_call.rs).
    capabilities.elicitation = Some(
        ElicitationCapability::new()
            .with_form(Default::default())
            .with_url(Default::default()),
    );
    capabilities
}

/// Connects, lists tools, publishes `running` and serves until the connection
/// closes, the gateway cancels `ct`, or (with `idle_timeout_ms`) no call came
/// for that long. A failure to connect or list is `Err` with a message for
/// the status line.
pub(super) async fn run(
    server: &Downstream,
    changed: &super::ToolChanges,
    ct: &CancellationToken,
) -> Result<Ended, String> {
    // `shared = false`: no connection of the gateway's own, only projects'
    // own, each listing for its project alone, as for sign-ins.
    if !server.config.shared && server.own.is_none() && server.parent.upgrade().is_none() {
        return Ok(Ended::SignInRequired);
    }
    let name = server.name();
    let (tx, mut tools_changed) = mpsc::unbounded_channel();
    let client = Client {
        tools_changed: tx.clone(),
        progress: server.progress.clone(),
        asks: server.asks.clone(),
        resource_updates: server.resource_updates.clone(),
    };
    let timeout = server.config.connect_timeout;

    // The child's process group, 0 while there is none.
    let group = AtomicU32::new(0);
    let connecting = async {
        let (conn, negotiated) = open(server, client, &group).await?;
        // rmcp keeps list results for as long as their `ttlMs` says (up to a
        // day) and answers a re-listing from there: the gateway's re-listing
        // would see nothing new, and a failed one would read as the old list.
        // The gateway keeps what it lists itself, and decides when it is stale.
        conn.peer()
            .set_response_cache_config(ClientCacheConfig::disabled())
            .await;
        let listing = list_tools(conn.peer())
            .await
            .map_err(|e| Refused::Failed(format!("tools/list failed: {e}")))?;
        Ok::<_, Refused>((conn, listing, negotiated))
    };
    let connected = tokio::select! {
        r = tokio::time::timeout(timeout, connecting) => r,
        _ = ct.cancelled() => {
            kill_group(&group);
            return Ok(Ended::Stopped);
        }
    };
    let (conn, (tools, ttl_ms), negotiated) = match connected {
        Ok(Ok(v)) => v,
        Ok(Err(Refused::SignInRequired)) if server.own.is_some() => {
            return Err("the server refused this project's credential (HTTP 401)".into());
        }
        Ok(Err(Refused::SignInRequired)) if configured_authorization(server) => {
            return Err("the server refused the configured credential (HTTP 401): check its `headers`".into());
        }
        Ok(Err(Refused::SignInRequired)) => return Ok(Ended::SignInRequired),
        Ok(Err(Refused::Failed(e))) => {
            kill_group(&group);
            return Err(e);
        }
        Err(_) => {
            kill_group(&group);
            return Err(format!(
                "no answer within {} ms (connect_timeout_ms)",
                timeout.as_millis()
            ));
        }
    };

    let peer = conn.peer().clone();
    let protocol = peer.peer_info().map(|i| i.protocol_version.to_string());
    info!(server = %name, tools = tools.len(), protocol = protocol.as_deref().unwrap_or("?"), handshake = negotiated, "downstream server running");
    server.memory.remember(&server.config, &tools);
    if let Some(p) = &protocol {
        server.memory.remember_protocol(&server.config, p);
    }
    *server.last_used.lock().expect("last_used lock") = std::time::Instant::now();
    server.publish_change(changed, |s| {
        s.status = Status::Running;
        s.tools = tools.into();
        s.peer = Some(peer.clone());
        s.protocol = protocol.clone();
    });

    // 2026-07-28 servers send list_changed only inside a subscription: the
    // Python SDK (2.x) drops one sent outside it, so a server announcing with
    // `session.send_tool_list_changed()` tells nobody (only
    // `ctx.notify_tools_changed()` reaches the stream), and the TTL below is
    // what bounds how old its tools get. Stopped with this connection (the
    // guard), or with the gateway.
    let listening = CancellationToken::new();
    let _stop_listening = listening.clone().drop_guard();
    // Only from a server that says its tools change (`tools.listChanged`):
    // one that does not (the built-ins) answers the stream with -32601,
    // which rmcp logs as a warning at every start.
    let announces = peer
        .peer_info()
        .and_then(|i| i.capabilities.tools.as_ref().and_then(|t| t.list_changed))
        == Some(true);
    let listener = (announces
        && protocol
            .as_deref()
            .is_some_and(|p| p >= ProtocolVersion::V_2026_07_28.as_str()))
    .then(|| tokio::spawn(listen(name.to_string(), peer.clone(), tx, listening.clone())));

    let (stop, stopping) = (conn.cancellation_token(), conn.cancellation_token());
    let mut done = tokio::spawn(conn.waiting());
    // Ends the subscription first: a server waits for its open
    // `subscriptions/listen` before it exits on a closed stdin (rmcp's for
    // 5 s), so the child would otherwise be SIGTERMed after its grace.
    let listening = &listening;
    let close = async move |done: &mut tokio::task::JoinHandle<_>| {
        listening.cancel();
        if let Some(listener) = listener {
            let _ = tokio::time::timeout(LISTEN_CANCEL_WAIT, listener).await;
        }
        stopping.cancel();
        let _ = tokio::time::timeout(STOP_GRACE, done).await;
    };
    let mut tick = tokio::time::interval(LIVENESS_TICK);
    // Whatever the server announces, its tools are listed again once the
    // last listing is this old (a fresh listing, for any reason, restarts it).
    let mut trusted = trusted_for(server.config.tools_ttl, ttl_ms);
    let expired = tokio::time::sleep(trusted);
    tokio::pin!(expired);
    let result = loop {
        let why = tokio::select! {
            _ = &mut done => break Ok(Ended::Closed),
            _ = ct.cancelled() => {
                close(&mut done).await;
                break Ok(Ended::Stopped);
            }
            _ = server.restart.notified() => {
                info!(server = %name, "restarting the downstream server, as an operator asked");
                close(&mut done).await;
                break Ok(Ended::Restart);
            }
            _ = server.relist.notified() => "operator",
            Some(why) = tools_changed.recv() => {
                while tools_changed.try_recv().is_ok() {}
                why
            }
            _ = &mut expired => if trusted < server.config.tools_ttl { "ttlMs" } else { "tools_ttl_ms" },
            _ = tick.tick() => {
                if peer.is_transport_closed() {
                    stop.cancel();
                    break Ok(Ended::Closed);
                }
                if server.config.idle_timeout.is_some_and(|limit| server.idle_for() >= limit) {
                    // New calls now wait for a fresh start; those already holding
                    // the connection finish on it first.
                    server.publish(|s| {
                        s.status = Status::Idle;
                        s.peer = None;
                    });
                    let _ = tokio::time::timeout(server.config.timeout, async {
                        while server.busy.load(std::sync::atomic::Ordering::SeqCst) > 0 {
                            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                        }
                    })
                    .await;
                    close(&mut done).await;
                    break Ok(Ended::Idle);
                }
                continue;
            }
        };
        if let Some(ttl_ms) = relist(server, &peer, changed, why).await {
            trusted = trusted_for(server.config.tools_ttl, ttl_ms);
        }
        expired.as_mut().reset(tokio::time::Instant::now() + trusted);
    };
    kill_group(&group);
    result
}

/// How long a listing is trusted: `tools_ttl_ms`, or the server's own
/// `ttlMs` when that is shorter (floored at [`MIN_SERVER_TTL`]). A `ttlMs`
/// of 0, which is also what an absent one means, makes the listing stale at
/// once (the spec lets a client list again whenever it needs the result); it
/// is the SDKs' default, promises nothing, and so leaves `tools_ttl_ms` in force.
fn trusted_for(tools_ttl: Duration, ttl_ms: Option<u64>) -> Duration {
    match ttl_ms {
        Some(ms) if ms > 0 => tools_ttl.min(Duration::from_millis(ms).max(MIN_SERVER_TTL)),
        _ => tools_ttl,
    }
}

/// Every page of the server's tools, and the shortest `ttlMs` among them.
async fn list_tools(peer: &rmcp::Peer<RoleClient>) -> Result<(Vec<Tool>, Option<u64>), ServiceError> {
    let (mut tools, mut ttl_ms, mut cursor) = (Vec::new(), None::<u64>, None);
    loop {
        let page = peer
            .list_tools(Some(PaginatedRequestParams::default().with_cursor(cursor)))
            .await?;
        tools.extend(page.tools);
        ttl_ms = match (ttl_ms, page.ttl_ms) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        cursor = page.next_cursor;
        if cursor.is_none() {
            return Ok((tools, ttl_ms));
        }
    }
}

/// Keeps a `subscriptions/listen` stream for tool changes open on a
/// 2026-07-28 connection and relays each change to `tools_changed`.
///
/// A stream carries no replay: each time one is acknowledged the tools are
/// listed again (a change made before it, even right after the first listing,
/// would be lost), and a stream that ends while the connection lives on (the
/// server closed it, a proxy cut a long HTTP response) is opened again. A
/// server that refuses the request, or a closed connection, ends this; the
/// TTL still bounds how old its tools get.
async fn listen(
    name: String,
    peer: rmcp::Peer<RoleClient>,
    tools_changed: mpsc::UnboundedSender<&'static str>,
    ct: CancellationToken,
) {
    let filter = SubscriptionFilter::builder().tools_list_changed().build();
    let mut pause = LISTEN_AGAIN_AFTER;
    loop {
        let opened = tokio::select! {
            opened = peer.listen(filter.clone()) => opened,
            _ = ct.cancelled() => return,
        };
        let mut sub = match opened {
            Ok(sub) => sub,
            Err(e) => {
                debug!(server = %name, error = %e, "no subscriptions/listen stream; its tools are re-listed on their TTL");
                return;
            }
        };
        let _ = tools_changed.send("subscribed");
        let since = tokio::time::Instant::now();
        loop {
            tokio::select! {
                n = sub.next() => match n {
                    Ok(Some(_)) => { let _ = tools_changed.send("list_changed"); }
                    _ => break,
                },
                _ = ct.cancelled() => {
                    // Said, not dropped: the notice is sent before this returns.
                    let _ = sub.cancel_with_reason(Some("the gateway is stopping this server".into())).await;
                    return;
                }
            }
        }
        if since.elapsed() >= LISTEN_AGAIN_MAX {
            pause = LISTEN_AGAIN_AFTER;
        }
        debug!(server = %name, end = ?sub.end(), pause_ms = pause.as_millis() as u64, "the subscriptions/listen stream ended; opening another");
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            _ = ct.cancelled() => return,
        }
        pause = (pause * 2).min(LISTEN_AGAIN_MAX);
    }
}

/// Lists a running server's tools again and publishes them if they differ;
/// a failure keeps the list it had. Says the listing's `ttlMs` when it came.
async fn relist(
    server: &Downstream,
    peer: &rmcp::Peer<RoleClient>,
    changed: &super::ToolChanges,
    why: &str,
) -> Option<Option<u64>> {
    let name = server.name();
    match tokio::time::timeout(server.config.connect_timeout, list_tools(peer)).await {
        Ok(Ok((tools, ttl_ms))) => {
            if server.state().tools[..] == tools[..] {
                debug!(server = %name, why, "downstream tools unchanged");
                return Some(ttl_ms);
            }
            info!(server = %name, tools = tools.len(), why, "downstream tools changed");
            server.memory.remember(&server.config, &tools);
            server.publish_change(changed, |s| s.tools = tools.into());
            Some(ttl_ms)
        }
        Ok(Err(e)) => {
            let error = vocab::mask::urls_in(&e.to_string());
            warn!(server = %name, %error, why, "re-listing tools failed; keeping the previous list");
            None
        }
        Err(_) => {
            warn!(server = %name, why, "re-listing tools timed out; keeping the previous list");
            None
        }
    }
}

/// Opens the transport and negotiates: the newest revision first, falling
/// back to the legacy `initialize` handshake. Says how it went about it.
///
/// A child process gets only the `server/discover` probe, answered within
/// `connect_timeout_ms` like the rest: rmcp's Auto mode waits 10 s, then
/// sends `initialize` down the same pipe, and a server that starts slowly
/// (`npx -y`, `uvx`, `docker run`, a loaded machine) answers both and breaks
/// the handshake. A legacy server is offered `initialize` next, on the same
/// pipe, and its revision is remembered, so it restarts without the probe.
async fn open(server: &Downstream, client: Client, group: &AtomicU32) -> Result<(Connection, &'static str), Refused> {
    let remembered = server.memory.recall_protocol(&server.config).and_then(|p| {
        ProtocolVersion::KNOWN_VERSIONS
            .iter()
            .find(|v| v.as_str() == p)
            .cloned()
    });
    let (lifecycle, how) = match (&server.config.transport, remembered) {
        (Transport::Stdio { .. }, Some(v)) if v.has_initialize() => (ClientLifecycleMode::Initialize, "remembered"),
        (Transport::Stdio { .. }, known) => (
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::LATEST],
            },
            if known.is_some() { "remembered" } else { "probed" },
        ),
        _ => (
            ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::LATEST],
                legacy_version: None,
            },
            "probed",
        ),
    };
    // A server that answers the probe with an error gets `initialize` next:
    // a child on the same pipe (in `handshake`), a remote or built-in server
    // by rmcp's Auto mode. One that answers with the (older) revisions it
    // speaks gets it on a fresh transport (a child only if its pipe was lost).
    let opened = match handshake(server, client.clone(), group, lifecycle).await {
        Ok(conn) => {
            let legacy = conn
                .peer()
                .peer_info()
                .is_some_and(|i| i.protocol_version.has_initialize());
            Ok((
                conn,
                if legacy && how == "probed" {
                    "probed, then initialize"
                } else {
                    how
                },
            ))
        }
        Err(Failure::Handshake(e)) if is_legacy(&e) => {
            kill_group(group);
            debug!(server = %server.name(), "the server speaks only revisions with initialize");
            handshake(server, client, group, ClientLifecycleMode::Initialize)
                .await
                .map(|conn| (conn, "probed, then initialize"))
        }
        Err(other) => Err(other),
    };
    opened.map_err(|failure| match failure {
        Failure::Setup(message) => Refused::Failed(message),
        Failure::Handshake(e) if needs_sign_in(&e) => Refused::SignInRequired,
        Failure::Handshake(e) => Refused::Failed(match &server.config.transport {
            Transport::Stdio { .. } => format!("handshake failed: {e}"),
            Transport::Builtin(_) => format!("handshake with the built-in server failed: {e}"),
            Transport::Http { url, .. } => format!("cannot connect to {url}: {e}"),
        }),
    })
}

/// Why a connection could not be opened.
pub(super) enum Refused {
    /// The server wants an OAuth sign-in (HTTP 401) that this connection lacks.
    SignInRequired,
    /// Anything else, in words for the status line.
    Failed(String),
}

/// Whether the configuration gives the server an `Authorization` header
/// (then a 401 is a wrong credential, not a server waiting for sign-ins).
fn configured_authorization(server: &Downstream) -> bool {
    matches!(&server.config.transport, Transport::Http { headers, .. }
        if headers.keys().any(|k| k.eq_ignore_ascii_case("authorization")))
}

/// Whether the handshake ended on the server's 401: an OAuth-protected
/// server that this connection brought no (valid) token to.
fn needs_sign_in(e: &ClientInitializeError) -> bool {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    use rmcp::transport::worker::WorkerQuitReason;
    type HttpError = StreamableHttpError<reqwest::Error>;
    let is_401 = |e: &HttpError| matches!(e, StreamableHttpError::AuthRequired(_));
    // Neither the handshake error nor the worker's quit reason names the
    // error it holds as its source, so each is opened by hand.
    let mut source: Option<&(dyn std::error::Error + 'static)> = match e {
        ClientInitializeError::TransportError { error, .. } => Some(error.error.as_ref()),
        other => Some(other),
    };
    while let Some(error) = source {
        if error.downcast_ref::<HttpError>().is_some_and(is_401) {
            return true;
        }
        if let Some(WorkerQuitReason::Fatal { error, .. }) = error.downcast_ref::<WorkerQuitReason<HttpError>>()
            && is_401(error)
        {
            return true;
        }
        source = error.source();
    }
    false
}

/// Whether a failed probe says the server is legacy: a JSON-RPC error to
/// `server/discover` (Discover mode does not fall back by itself), or a list
/// of revisions that all have `initialize`.
fn is_legacy(e: &ClientInitializeError) -> bool {
    match e {
        ClientInitializeError::JsonRpcError(_) => true,
        ClientInitializeError::NoCompatibleProtocolVersion { server_supported, .. } => {
            server_supported.iter().any(ProtocolVersion::has_initialize)
        }
        _ => false,
    }
}

/// Why a connection attempt failed.
enum Failure {
    /// The transport could not be set up (no such program, a bad header).
    Setup(String),
    /// The MCP handshake failed (boxed: the error is large and this path is cold).
    Handshake(Box<ClientInitializeError>),
}

/// One connection attempt with `lifecycle`; a child's process group goes to `group`.
async fn handshake(
    server: &Downstream,
    client: Client,
    group: &AtomicU32,
    lifecycle: ClientLifecycleMode,
) -> Result<Connection, Failure> {
    let name = server.name().to_string();
    // The largest message read from the server: the result cap plus its envelope.
    let answer_limit = usize::try_from(server.config.max_result_bytes)
        .unwrap_or(usize::MAX)
        .saturating_add(ENVELOPE_BYTES);
    let connected = match &server.config.transport {
        Transport::Stdio {
            command,
            args,
            env,
            env_passthrough,
            cwd,
        } => {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(args)
                .env_clear()
                .envs(child_environment(std::env::vars_os(), env_passthrough, env))
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            if let Some(cwd) = cwd {
                cmd.current_dir(cwd);
            }
            // Its own process group, so npx/uvx-style grandchildren are stopped with it.
            let mut wrapped = CommandWrap::from(cmd);
            wrapped.wrap(ProcessGroup::leader());
            let cannot_start = |e: std::io::Error| Failure::Setup(format!("cannot start '{command}': {e}"));
            let mut child = wrapped.spawn().map_err(cannot_start)?;
            let stderr = child.inner_mut().stderr().take();
            let transport = ChildTransport::new(name.clone(), child, answer_limit).map_err(cannot_start)?;
            group.store(transport.id().unwrap_or(0), Ordering::SeqCst);
            if let Some(stderr) = stderr {
                tokio::spawn(super::stderr::follow(name, stderr, server.stderr.clone()));
            }
            if !matches!(lifecycle, ClientLifecycleMode::Discover { .. }) {
                return client
                    .serve_with_lifecycle(transport, lifecycle)
                    .await
                    .map_err(|e| Failure::Handshake(Box::new(e)));
            }
            // A legacy server's refusal of the probe ends the handshake; the
            // child that answered it gets `initialize` on the same pipe.
            let (lent, returned) = Lent::new(transport);
            match client.clone().serve_with_lifecycle(lent, lifecycle).await {
                Err(e) if is_legacy(&e) => match returned.await {
                    Ok(transport) => {
                        debug!(server = %server.name(), "the server speaks only revisions with initialize");
                        client
                            .serve_with_lifecycle(transport, ClientLifecycleMode::Initialize)
                            .await
                    }
                    Err(_) => Err(e),
                },
                other => other,
            }
        }
        Transport::Builtin(builtin) => {
            // A missing archive folder fails the server (and `check`), and
            // each retry looks again, so a folder that appears later is served.
            if let Builtin::Archives(config) = builtin
                && let Some((_, why)) = config.missing_folder()
            {
                return Err(Failure::Setup(why));
            }
            let (ours, theirs) = tokio::io::duplex(BUILTIN_PIPE_BYTES);
            server.builtins.serve(builtin, theirs);
            let (read, write) = tokio::io::split(ours);
            let transport = LineTransport::new(name.clone(), read, write, answer_limit);
            client.serve_with_lifecycle(transport, lifecycle).await
        }
        Transport::Http { url, headers } => {
            let mut custom = HashMap::new();
            for (k, v) in headers {
                let header = |e: &dyn std::fmt::Display| Failure::Setup(format!("header '{k}': {e}"));
                let key = k.parse::<http::HeaderName>().map_err(|e| header(&e))?;
                let value = v.parse::<http::HeaderValue>().map_err(|e| header(&e))?;
                custom.insert(key, value);
            }
            let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                .custom_headers(custom)
                .max_sse_event_size(answer_limit);
            match server.own.as_ref().and_then(|own| own.sign_in.clone()) {
                // A project signed in with OAuth: its token on every request, refreshed when due.
                Some(signed_in) => {
                    let transport = StreamableHttpClientTransport::with_client(WholeListing(signed_in), config);
                    client.serve_with_lifecycle(transport, lifecycle).await
                }
                None => {
                    let transport = StreamableHttpClientTransport::with_client(WholeListing(reqwest_client()), config);
                    client.serve_with_lifecycle(transport, lifecycle).await
                }
            }
        }
    };
    connected.map_err(|e| Failure::Handshake(Box::new(e)))
}

/// Kills whatever is left of the child's process group (grandchildren that
/// outlive their parent would otherwise be orphaned).
fn kill_group(group: &AtomicU32) {
    let Ok(pid) = i32::try_from(group.swap(0, Ordering::SeqCst)) else {
        return;
    };
    if pid > 0 {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Client")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_servers_ttl_shortens_the_bound_but_never_below_a_floor() {
        let ours = Duration::from_secs(300);
        // No promise (absent, or 0: the SDKs' default): ours.
        assert_eq!(trusted_for(ours, None), ours);
        assert_eq!(trusted_for(ours, Some(0)), ours);
        // Shorter: the server's; longer: ours.
        assert_eq!(trusted_for(ours, Some(20_000)), Duration::from_secs(20));
        assert_eq!(trusted_for(ours, Some(86_400_000)), ours);
        // A tiny one cannot make the gateway list in a loop...
        assert_eq!(trusted_for(ours, Some(1)), MIN_SERVER_TTL);
        // ...but an operator may go below the floor.
        let tight = Duration::from_millis(500);
        assert_eq!(trusted_for(tight, Some(1)), tight);
    }
}
