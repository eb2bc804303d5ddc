//! Where the upstream server is served: stdio (its lines bounded), and
//! streamable HTTP at `/mcp` (behind the HTTP guard) beside the OAuth
//! metadata, the operations endpoints (`/healthz`, `/readyz`, `/metrics`)
//! and the operator console (`/console`).

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tracing::info;

use super::Upstream;
use super::guard::{Authenticated, guarded};
use super::hosts::{self, Hosts};
use super::sessions::Sessions;
use config::HttpConfig;
use gateway::Gateway;
use gateway::auth::Caller;
use gateway::ratelimit::Limiter;

mod answers;
mod connections;
mod stdio;

/// Serves MCP on stdin/stdout until the client closes stdin or `ct` is cancelled.
pub async fn serve_stdio(upstream: Upstream, ct: CancellationToken) -> anyhow::Result<()> {
    serve_lines(upstream, tokio::io::stdin(), tokio::io::stdout(), ct).await
}

/// Serves MCP to a client that writes lines to `read` and reads them from
/// `write` (see [`stdio`]), until it closes `read` or `ct` is cancelled.
pub async fn serve_lines<R, W>(upstream: Upstream, read: R, write: W, ct: CancellationToken) -> anyhow::Result<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    tokio::spawn(upstream.clone().announce_changes(ct.child_token()));
    let service = upstream.serve(stdio::ClientLines::new(read, write)).await?;
    let stop = service.cancellation_token();
    tokio::select! {
        _ = service.waiting() => info!("stdio client disconnected"),
        _ = ct.cancelled() => stop.cancel(),
    }
    Ok(())
}

/// Serves streamable HTTP at `/mcp` on an already-bound listener until `ct`
/// is cancelled. `pages` (the operator console, the built-ins' widgets) are
/// served beside it, behind the same host checks but not the MCP guard: they
/// check their own credentials, or need none.
/// Connections are capped and timed as `[http]` says (see `connections`).
pub async fn serve_http(
    upstream: Upstream,
    gateway: Gateway,
    pages: axum::Router,
    listener: tokio::net::TcpListener,
    http: &HttpConfig,
    ct: CancellationToken,
) -> anyhow::Result<()> {
    // A 2026-07-28 answer that is one response goes as JSON: rmcp's client
    // (3.9) drops the tool schemas of a `tools/list` whose SSE stream ends as
    // its message arrives, and then calls without the `Mcp-Param-*` headers.
    let config = StreamableHttpServerConfig::default()
        .with_json_response(true)
        .with_allowed_hosts(http.allowed_hosts.clone())
        .with_allowed_origins(http.allowed_origins.clone())
        .with_cancellation_token(ct.child_token());
    // Tasks of this face, awaited before it returns.
    let tasks = tokio_util::task::TaskTracker::new();
    tasks.spawn(upstream.clone().announce_changes(ct.child_token()));
    let sessions = Arc::new(Sessions::new(http.max_sessions, http.max_sessions_per_caller));
    let service = Mcp(Arc::new(StreamableHttpService::new(
        move || Ok(upstream.for_session()),
        sessions.clone(),
        config,
    )));
    let gateway_for_ops = gateway.clone();
    let limiter = http
        .rate
        .map(|r| Arc::new(Limiter::for_store(r, gateway.store().clone())));
    let app = guarded(service, gateway.clone(), limiter, sessions)
        // Outside the MCP guard: health, metrics, and the pages: the
        // widgets' static assets and the operator console (which checks its
        // own credentials).
        .merge(resource_metadata(gateway_for_ops.clone()))
        .merge(pages)
        .merge(operations(gateway_for_ops, &tasks, ct.child_token()))
        // Every route answers only the configured hosts and origins.
        .layer(axum::middleware::from_fn_with_state(Hosts::new(http), hosts::check));
    let addr: SocketAddr = listener.local_addr()?;
    info!("listening on http://{addr}/mcp");
    info!(
        "next: point an MCP client at http://{addr}/mcp; `mcp-gateway servers` shows each server; \
         the console is at http://{addr}/console (`mcp-gateway token issue --admin` opens it)"
    );
    connections::serve(listener, app, http, ct).await;
    tasks.close();
    tasks.wait().await;
    Ok(())
}

/// rmcp's streamable HTTP service behind one `Arc`. Tower's layers clone
/// their inner service on every request, and rmcp's carries its whole
/// configuration (the host and origin lists): a request cloned it about a
/// dozen times, allocating each time.
#[derive(Clone)]
struct Mcp(Arc<StreamableHttpService<Upstream, Sessions>>);

impl tower::Service<axum::extract::Request> for Mcp {
    type Response = axum::response::Response;
    type Error = std::convert::Infallible;
    type Future = futures::future::BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, _: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: axum::extract::Request) -> Self::Future {
        let mcp = self.0.clone();
        let post = request.method() == http::Method::POST;
        // Only a POST carries a call whose headers rmcp checks.
        let extensions = request.extensions();
        let caller = post
            .then(|| {
                extensions
                    .get::<Caller>()
                    .or(extensions.get::<Authenticated>().map(|a| &a.0))
            })
            .flatten()
            .cloned();
        Box::pin(REQUEST_CALLER.scope(caller, async move {
            let response = mcp.handle(request).await.map(axum::body::Body::new);
            Ok(if post {
                answers::coalesced(response).await
            } else {
                response
            })
        }))
    }
}

tokio::task_local! {
    /// The caller of the HTTP request rmcp is handling in this task: rmcp
    /// asks [`Upstream`](super::Upstream) for a tool's schema before any
    /// handler has a request context.
    static REQUEST_CALLER: Option<Caller>;
}

/// The caller of the HTTP request being handled, where one is.
pub(super) fn http_request_caller() -> Option<Caller> {
    REQUEST_CALLER.try_with(Clone::clone).ok().flatten()
}

/// `GET /.well-known/oauth-protected-resource[/path]` (RFC 9728), when
/// `[auth.oauth]` is configured; outside the guard, as clients read it
/// before they have a token.
fn resource_metadata(gateway: Gateway) -> axum::Router {
    use axum::response::IntoResponse;
    let answer = move || {
        let gateway = gateway.clone();
        async move {
            match gateway.oauth() {
                Some(v) => axum::Json(v.metadata()).into_response(),
                None => (http::StatusCode::NOT_FOUND, "OAuth is not configured ([auth.oauth])").into_response(),
            }
        }
    };
    axum::Router::new()
        .route(oauth::WELL_KNOWN, axum::routing::get(answer.clone()))
        .route(
            &format!("{}/{{*resource}}", oauth::WELL_KNOWN),
            axum::routing::get(answer),
        )
}

/// `GET /healthz` (the process answers), `GET /readyz` (the store answers
/// and its audit writes commit, every enabled server past its first
/// connection; 503 otherwise, with the
/// details, so a load balancer drains a replica whose store is down) and
/// `GET /metrics` (Prometheus text).
fn operations(gateway: Gateway, tasks: &tokio_util::task::TaskTracker, ct: CancellationToken) -> axum::Router {
    use axum::response::IntoResponse;
    use axum::routing::get;
    let metrics = telemetry::install();
    let upkeep = metrics.clone();
    tasks.spawn(async move {
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(10));
        loop {
            tokio::select! {
                _ = tick.tick() => upkeep.run_upkeep(),
                _ = ct.cancelled() => break,
            }
        }
    });
    let ready = move || {
        let gateway = gateway.clone();
        async move {
            let store = gateway.store().ping();
            // Only a server's first connection holds readiness back: one that
            // keeps failing would otherwise take every replica out together.
            let mut settled = true;
            let servers: Vec<Value> = gateway
                .registry()
                .servers()
                .iter()
                .map(|s| {
                    let state = s.state();
                    settled &= !state.first_connection();
                    serde_json::json!({
                        "name": s.name(), "status": state.status.word(), "tools": state.tools.len(), "restarts": state.restarts,
                    })
                })
                .collect();
            let ready = store.is_ok() && settled;
            let body = serde_json::json!({
                "ready": ready,
                "store": match &store { Ok(()) => "ok".to_string(), Err(e) => e.to_string() },
                "servers": servers,
                "search": gateway.catalog().search_status(),
                "audit": gateway.audit_mode().as_str(),
                // Strict audit on SQLite: rows durable in the journal, not yet in the store.
                "audit_journaled": gateway.store().journaled_backlog(),
                "code_mode": gateway.code_mode_status(),
            });
            let status = if ready {
                http::StatusCode::OK
            } else {
                http::StatusCode::SERVICE_UNAVAILABLE
            };
            (status, axum::Json(body)).into_response()
        }
    };
    axum::Router::new()
        .route(
            "/healthz",
            get(|| async { axum::Json(serde_json::json!({ "status": "ok" })) }),
        )
        .route("/readyz", get(ready))
        .route(
            "/metrics",
            get(move || {
                let metrics = metrics.clone();
                async move {
                    (
                        [(http::header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
                        metrics.render(),
                    )
                }
            }),
        )
}
