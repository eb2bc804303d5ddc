//! The operator console at `/console`: the gateway's servers, projects and
//! usage, and a search playground, for people. One page (built from
//! `widgets/src/console`, committed, embedded by `build.rs`) over a small
//! JSON API (`api.rs`) that needs an operator's credential (`guard.rs`);
//! the charts are SVG drawn here (`charts.rs`). It asks the core
//! ([`gateway`]); it may not know the MCP faces or the command line.
//!
//! The page loads nothing from elsewhere, and its CSP says so: scripts,
//! styles and requests only from this origin, no inline code, no framing.

mod api;
mod charts;
mod guard;

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::json;

pub use guard::{COOKIE, CSRF_HEADER, cookie, same_origin};

use gateway::Gateway;
use gateway::operator::Operator;

mod built {
    include!(concat!(env!("OUT_DIR"), "/console.rs"));
}

/// The page's Content-Security-Policy: nothing but this origin, no inline code.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                       connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
/// The page links its assets by fingerprinted name, so they never change under it.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";
const PAGE: &str = "console.html";

/// What the console's handlers share.
#[derive(Debug, Clone)]
struct Console {
    gateway: Gateway,
    sessions: Arc<guard::Sessions>,
}

impl Console {
    /// What the console reads and changes goes through the operator's use case.
    fn operator(&self) -> Operator<'_> {
        Operator::new(self.gateway.store())
    }
}

fn file(name: &str) -> Option<&'static [u8]> {
    built::FILES.iter().find(|(n, _)| *n == name).map(|(_, bytes)| *bytes)
}

/// Headers every console answer carries.
fn hardened(mut response: Response) -> Response {
    let h = response.headers_mut();
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

/// `GET /console`: the page (it asks the API who is signed in).
async fn page() -> Response {
    let body = file(PAGE).expect("widgets/dist/console has the page");
    hardened(
        (
            [
                (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                (header::CACHE_CONTROL, "no-store"),
            ],
            body,
        )
            .into_response(),
    )
}

/// `GET /console/assets/{name}`: the page's fingerprinted script and style.
async fn asset(Path(name): Path<String>) -> Response {
    let kind = match name.rsplit('.').next() {
        Some("css") => "text/css; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        _ => return StatusCode::NOT_FOUND.into_response(),
    };
    match file(&name) {
        Some(bytes) => hardened(
            (
                [(header::CONTENT_TYPE, kind), (header::CACHE_CONTROL, IMMUTABLE)],
                bytes,
            )
                .into_response(),
        ),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

/// Every API route but signing in: the operator goes into the request's
/// extensions, with the session's CSRF token.
async fn admitted(State(console): State<Console>, mut request: Request, next: Next) -> Response {
    match console
        .sessions
        .admit(&console.gateway, request.method(), request.headers())
        .await
    {
        Ok((admin, csrf)) => {
            request.extensions_mut().insert(admin);
            request.extensions_mut().insert(csrf);
            hardened(next.run(request).await)
        }
        Err(denied) => hardened(denied.into_response()),
    }
}

/// The sign-in form's body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SignIn {
    token: String,
}

/// `POST /console/api/session`: an admin token (or OAuth token with the
/// admin scope) in, a session cookie and the CSRF token out.
async fn sign_in(State(console): State<Console>, headers: HeaderMap, Json(body): Json<SignIn>) -> Response {
    match console.sessions.open(&console.gateway, &headers, &body.token).await {
        Ok((admin, cookie, csrf)) => {
            tracing::info!(actor = %admin.actor, "console: signed in");
            let body = Json(json!({ "actor": admin.actor.to_string(), "csrf": csrf }));
            hardened(([(header::SET_COOKIE, guard::set_cookie(Some(&cookie)))], body).into_response())
        }
        Err(denied) => hardened(denied.into_response()),
    }
}

/// `DELETE /console/api/session`: signs out.
async fn sign_out(State(console): State<Console>, headers: HeaderMap) -> Response {
    console.sessions.close(&headers);
    hardened(([(header::SET_COOKIE, guard::set_cookie(None))], StatusCode::NO_CONTENT).into_response())
}

/// How often the audit log's new rows are rolled up for the day and week views.
const ROLL_UP_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

/// Keeps the hourly usage rollups current, off the request path, so the day
/// and week views read few raw rows.
async fn roll_up_usage(gateway: Gateway) {
    let mut tick = tokio::time::interval(ROLL_UP_EVERY);
    loop {
        tick.tick().await;
        let store = gateway.store().clone();
        match tokio::task::spawn_blocking(move || Operator::new(&store).roll_up_usage()).await {
            Ok(Ok(rows)) if rows > 0 => tracing::debug!(rows, "audit rows rolled up for usage"),
            Ok(Ok(_)) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "rolling up usage failed; the console reads the rows instead"),
            Err(e) => tracing::warn!(error = %e, "rolling up usage stopped"),
        }
    }
}

/// The console's routes, for the HTTP listener (which also starts the usage roll-up).
pub fn router(gateway: Gateway) -> axum::Router {
    tokio::spawn(roll_up_usage(gateway.clone()));
    let console = Console {
        gateway,
        sessions: Arc::default(),
    };
    let api = axum::Router::new()
        .route("/console/api/session", get(api::session))
        .route("/console/api/overview", get(api::overview))
        .route("/console/api/servers/{name}", get(api::server))
        .route("/console/api/servers/{name}/{action}", post(api::server_action))
        .route("/console/api/projects/{name}", get(api::project))
        .route("/console/api/projects/{name}/grants", post(api::grant))
        .route("/console/api/projects/{name}/tokens", post(api::issue_token))
        .route("/console/api/projects/{name}/search", post(api::set_search))
        .route("/console/api/tokens/{id}/revoke", post(api::revoke_token))
        .route("/console/api/requests/{id}", get(api::request))
        .route("/console/api/usage", get(api::usage))
        .route("/console/api/search", post(api::search))
        .layer(axum::middleware::from_fn_with_state(console.clone(), admitted));
    axum::Router::new()
        .route("/console", get(page))
        .route("/console/", get(page))
        .route("/console/assets/{name}", get(asset))
        .route("/console/api/session", post(sign_in).delete(sign_out))
        .merge(api)
        .with_state(console)
}
