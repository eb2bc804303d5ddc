//! The credential layer: every message carries a credential (the bearer
//! token, or a request's `_meta.token`) unless anonymous access is on, and
//! a refusal says why in the way OAuth clients read (RFC 6750 §3, with the
//! protected-resource metadata of RFC 9728 §5.1 when OAuth is on).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tracing::{info, warn};

use super::super::sessions::Owner;
use super::{Authenticated, Identity, Message};
use crate::errors::{UNAUTHORIZED, unanswerable};
use gateway::Gateway;
use gateway::auth;

/// What a 401 without a token says, in its challenge and its body.
const MISSING_TOKEN: &str = "this gateway requires a token: send Authorization: Bearer mgw_... (an operator issues one with mcp-gateway token issue)";

/// Finds and checks the caller; see the module's doc.
pub(super) async fn check(State(gateway): State<Gateway>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    let body_token = parts.extensions.get::<Message>().and_then(|m| m.token.clone());
    let refuse = Refuse(gateway.oauth());
    let header = parts
        .headers
        .get(http::header::AUTHORIZATION)
        .map(|v| v.to_str().map(auth::bearer));
    let (token, from_header) = match header {
        Some(Ok(Some(token))) => (Some(token.to_string()), true),
        Some(_) => {
            let message = "the Authorization header must be 'Bearer <token>'";
            return refuse.with(
                http::StatusCode::UNAUTHORIZED,
                Some(("invalid_request", message)),
                message,
            );
        }
        None => (body_token, false),
    };
    if token.is_none() && !gateway.allows_anonymous() {
        let message = match &refuse.0 {
            Some(_) => auth::Error::Unauthorized.to_string(),
            None => format!("unauthorized: {MISSING_TOKEN}"),
        };
        return refuse.with(http::StatusCode::UNAUTHORIZED, None, &message);
    }
    // The anonymous caller too: a session opened anonymously is its own.
    let caller = match gateway.authenticate(token.as_deref(), None).await {
        Ok(caller) => caller,
        Err(e) => return refuse.because(e),
    };
    if caller.token_id.is_none()
        && let (Some(issuer), Some(_)) = (&caller.issuer, &caller.subject)
    {
        telemetry::oauth_token(issuer, "accepted");
    }
    parts.extensions.insert(Identity {
        owner: Owner::of(&caller),
        budget: caller.identity().unwrap_or_else(|| "anonymous".to_string()),
    });
    // The handler takes this caller, and resolves a message's own
    // `_meta.token` itself. An anonymous caller goes on too: resolving it
    // again read the store a second time on every call.
    if from_header || token.is_none() {
        parts.extensions.insert(caller);
    } else {
        parts.extensions.insert(Authenticated(caller));
    }
    next.run(Request::from_parts(parts, body)).await
}

/// A refusal with its challenge, given the gateway's OAuth verifier if any.
struct Refuse(Option<Arc<oauth::Verifier>>);

impl Refuse {
    /// `status` with an RFC 6750 §3 challenge; with OAuth on it also says
    /// where the protected-resource metadata is (RFC 9728 §5.1), which is
    /// how an MCP client finds the authorization server.
    fn with(&self, status: http::StatusCode, error: Option<(&str, &str)>, message: &str) -> Response {
        let challenge = match (&self.0, error) {
            (Some(v), e) => v.challenge(e),
            (None, Some((code, _))) => format!("Bearer realm=\"mcp-gateway\", error=\"{code}\""),
            // No token at all: RFC 6750 would say no more, but then no
            // client can tell its user what is missing (mcp-remote reads
            // "registration rejected", Claude Code "failed to connect").
            (None, None) => {
                format!("Bearer realm=\"mcp-gateway\", error=\"invalid_token\", error_description=\"{MISSING_TOKEN}\"")
            }
        };
        let body = unanswerable(UNAUTHORIZED, message);
        (status, [(http::header::WWW_AUTHENTICATE, challenge)], axum::Json(body)).into_response()
    }

    /// The HTTP answer to a refused caller: 401 for a missing or invalid
    /// token, 403 for a valid one that lacks a scope or maps to no project,
    /// 503 when the store or an authorization server is unreachable.
    fn because(&self, e: auth::Error) -> Response {
        let message = e.to_string();
        match e {
            auth::Error::Store(e) => {
                tracing::error!(error = %e, "store unavailable");
                (
                    http::StatusCode::SERVICE_UNAVAILABLE,
                    "the gateway's store is unavailable",
                )
                    .into_response()
            }
            auth::Error::OAuth(oauth::Error::Unavailable { ref issuer, .. }) => {
                warn!(issuer = %issuer, error = %message, "authorization server unavailable");
                telemetry::oauth_token(issuer, "unavailable");
                (
                    http::StatusCode::SERVICE_UNAVAILABLE,
                    axum::Json(unanswerable(UNAUTHORIZED, &message)),
                )
                    .into_response()
            }
            // The challenge's `scope` lists every scope required (RFC 6750 §3).
            auth::Error::OAuth(oauth::Error::InsufficientScope(_)) => {
                telemetry::oauth_token("", "insufficient_scope");
                self.with(
                    http::StatusCode::FORBIDDEN,
                    Some(("insufficient_scope", &message)),
                    &message,
                )
            }
            auth::Error::NoProject {
                ref issuer,
                ref subject,
            } => {
                info!(issuer = %issuer, subject = %subject, "valid token maps to no project; refused");
                telemetry::oauth_token(issuer, "no_project");
                self.with(http::StatusCode::FORBIDDEN, None, &message)
            }
            auth::Error::OAuth(_) => {
                telemetry::oauth_token("", "invalid");
                self.with(
                    http::StatusCode::UNAUTHORIZED,
                    Some(("invalid_token", &message)),
                    &message,
                )
            }
            _ => self.with(
                http::StatusCode::UNAUTHORIZED,
                Some(("invalid_token", &message)),
                &message,
            ),
        }
    }
}
