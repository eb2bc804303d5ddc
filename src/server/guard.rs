//! The HTTP guard in front of rmcp's streamable HTTP service, and the
//! JSON-RPC envelope it reads: shape errors, credentials, rate limits.

use std::sync::Arc;

use serde_json::Value;
use tracing::{info, warn};

use super::errors::{
    INVALID_REQUEST, PARSE_ERROR, RATE_LIMITED, SESSIONS_FULL, UNAUTHORIZED, unanswerable, unreadable,
};
use super::sessions::{Full, Owner, Sessions};
use crate::auth;
use crate::gateway::Gateway;
use crate::oauth;
use crate::ratelimit::{Budget, Limiter};

/// Largest request body accepted (the rmcp default).
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// What the HTTP guard needs.
#[derive(Debug, Clone)]
pub(super) struct Guarded {
    gateway: Gateway,
    limiter: Option<Arc<Limiter>>,
    sessions: Arc<Sessions>,
}

impl Guarded {
    pub(super) fn new(gateway: Gateway, limiter: Option<Arc<Limiter>>, sessions: Arc<Sessions>) -> Self {
        Self {
            gateway,
            limiter,
            sessions,
        }
    }
}

/// The HTTP guard in front of rmcp, on every method of `/mcp`:
/// * a POST whose body is not JSON-RPC gets the JSON-RPC error the spec
///   names (-32700, -32600), never a bare 415;
/// * every message carries a credential (the bearer token, or a request's
///   `_meta.token`), unless anonymous access is on: 401 otherwise; a valid
///   header token's caller is attached to the request;
/// * a message on a session must come from the caller that opened it
///   (project, and subject for OAuth); to anyone else the session is
///   unknown (404), exactly as a wrong id is;
/// * an `initialize` over `[http] max_sessions[_per_caller]` closes the
///   idlest session, or is refused when none is idle;
/// * a caller over `[http] requests_per_minute` gets 429 with `Retry-After`.
pub(super) async fn guard(
    axum::extract::State(Guarded {
        gateway,
        limiter,
        sessions,
    }): axum::extract::State<Guarded>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let (mut parts, body) = request.into_parts();
    let posted = parts.method == http::Method::POST;
    let bytes = if posted {
        match axum::body::to_bytes(body, MAX_BODY_BYTES).await {
            Ok(b) => b,
            Err(_) => return (http::StatusCode::PAYLOAD_TOO_LARGE, "request body larger than 4 MiB").into_response(),
        }
    } else {
        axum::body::Bytes::new()
    };
    // What the guard needs of the body, owned, so the bytes can move on.
    let (is_request, is_initialize, body_token) = if posted {
        match parse_jsonrpc(&bytes) {
            Ok(m) => (m.is_request(), m.is_initialize(), m.token().map(str::to_string)),
            Err((code, message)) => {
                return (http::StatusCode::BAD_REQUEST, axum::Json(unanswerable(code, &message))).into_response();
            }
        }
    } else {
        (false, false, None)
    };
    let oauth = gateway.oauth().cloned();
    // RFC 6750 §3 challenges; with OAuth on they also say where the
    // protected-resource metadata is (RFC 9728 §5.1), which is how an MCP
    // client finds the authorization server.
    let refuse = |status: http::StatusCode, error: Option<(&str, &str)>, message: &str| {
        let challenge = match (&oauth, error) {
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
    };
    let header = parts
        .headers
        .get(http::header::AUTHORIZATION)
        .map(|v| v.to_str().map(auth::bearer));
    let (token, from_header) = match header {
        Some(Ok(Some(token))) => (Some(token.to_string()), true),
        Some(_) => {
            let message = "the Authorization header must be 'Bearer <token>'";
            return refuse(
                http::StatusCode::UNAUTHORIZED,
                Some(("invalid_request", message)),
                message,
            );
        }
        None => (body_token, false),
    };
    if token.is_none() && !gateway.allows_anonymous() {
        let message = match &oauth {
            Some(_) => auth::Error::Unauthorized.to_string(),
            None => format!("unauthorized: {MISSING_TOKEN}"),
        };
        return refuse(http::StatusCode::UNAUTHORIZED, None, &message);
    }
    // The anonymous caller too: a session opened anonymously is its own.
    let caller = match gateway.authenticate(token.as_deref(), None).await {
        Ok(caller) => caller,
        Err(e) => return refusal(e, refuse),
    };
    let owner = Owner::of(&caller);
    if caller.token_id.is_none()
        && let (Some(issuer), Some(_)) = (&caller.issuer, &caller.subject)
    {
        crate::telemetry::oauth_token(issuer, "accepted");
    }
    let budget = caller.identity().unwrap_or_else(|| "anonymous".to_string());
    if from_header {
        parts.extensions.insert(caller);
    }
    let session = parts.headers.get(SESSION_ID).map(|v| v.to_str().unwrap_or_default());
    if let Some(id) = session
        && !sessions.claim(id, &owner)
    {
        return unknown_session();
    }
    if let Some(limiter) = &limiter
        && is_request
    {
        let budget = Budget::new(limiter.clone(), budget);
        if let Err(seconds) = budget.take() {
            let message = format!("too many requests; retry in {seconds} s ([http] requests_per_minute)");
            return (
                http::StatusCode::TOO_MANY_REQUESTS,
                [(http::header::RETRY_AFTER, seconds.to_string())],
                axum::Json(unanswerable(RATE_LIMITED, &message)),
            )
                .into_response();
        }
        // Handed on with the request: a script's calls are charged to it too.
        parts.extensions.insert(budget);
    }
    let admission = if is_initialize && session.is_none() {
        match sessions.admit(owner).await {
            Ok(a) => Some(a),
            Err(full) => return sessions_full(full),
        }
    } else {
        None
    };
    let deleting = parts.method == http::Method::DELETE;
    let json = parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("application/json"));
    let response = next
        .run(axum::extract::Request::from_parts(
            parts,
            axum::body::Body::from(bytes.clone()),
        ))
        .await;
    if let (Some(admission), Some(id)) = (admission, response.headers().get(SESSION_ID)) {
        admission.bind(id.to_str().unwrap_or_default().into());
    }
    // rmcp answers a JSON body it cannot read as an MCP message with a bare 415.
    if json && response.status() == http::StatusCode::UNSUPPORTED_MEDIA_TYPE {
        let (code, message) = unreadable(&bytes);
        return (http::StatusCode::BAD_REQUEST, axum::Json(unanswerable(code, &message))).into_response();
    }
    // rmcp ends a session with 202; the official Python SDK takes only 200,
    // 204 or 405 and warns "Session termination failed: 202" on every close.
    if deleting && response.status() == http::StatusCode::ACCEPTED {
        return http::StatusCode::OK.into_response();
    }
    response
}

/// What a 401 without a token says, in its challenge and its body.
const MISSING_TOKEN: &str = "this gateway requires a token: send Authorization: Bearer mgw_... (an operator issues one with mcp-gateway token issue)";

/// The session header (lower case, as `http` stores names).
const SESSION_ID: &str = "mcp-session-id";

/// What a wrong session id gets from rmcp, word for word: a session that is
/// not the caller's must read the same.
fn unknown_session() -> axum::response::Response {
    use axum::response::IntoResponse;
    (http::StatusCode::NOT_FOUND, "Not Found: Session not found").into_response()
}

fn sessions_full(full: Full) -> axum::response::Response {
    use axum::response::IntoResponse;
    let (status, limit) = match full {
        Full::Caller(_) => (http::StatusCode::TOO_MANY_REQUESTS, "caller"),
        Full::Gateway(_) => (http::StatusCode::SERVICE_UNAVAILABLE, "gateway"),
    };
    crate::telemetry::session_refused(limit);
    tracing::warn!(limit, "refused a new session: the limit is full");
    let seconds = super::sessions::EVICTABLE_AFTER.as_secs().to_string();
    (
        status,
        [(http::header::RETRY_AFTER, seconds)],
        axum::Json(unanswerable(SESSIONS_FULL, &full.to_string())),
    )
        .into_response()
}

/// The HTTP answer to a refused caller: 401 for a missing or invalid token,
/// 403 for a valid one that lacks a scope or maps to no project, 503 when
/// the store or an authorization server is unreachable.
fn refusal(
    e: auth::Error,
    refuse: impl Fn(http::StatusCode, Option<(&str, &str)>, &str) -> axum::response::Response,
) -> axum::response::Response {
    use axum::response::IntoResponse;
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
            crate::telemetry::oauth_token(issuer, "unavailable");
            (
                http::StatusCode::SERVICE_UNAVAILABLE,
                axum::Json(unanswerable(UNAUTHORIZED, &message)),
            )
                .into_response()
        }
        // The challenge's `scope` lists every scope required (RFC 6750 §3).
        auth::Error::OAuth(oauth::Error::InsufficientScope(_)) => {
            crate::telemetry::oauth_token("", "insufficient_scope");
            refuse(
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
            crate::telemetry::oauth_token(issuer, "no_project");
            refuse(http::StatusCode::FORBIDDEN, None, &message)
        }
        auth::Error::OAuth(_) => {
            crate::telemetry::oauth_token("", "invalid");
            refuse(
                http::StatusCode::UNAUTHORIZED,
                Some(("invalid_token", &message)),
                &message,
            )
        }
        _ => refuse(
            http::StatusCode::UNAUTHORIZED,
            Some(("invalid_token", &message)),
            &message,
        ),
    }
}

/// What the guard reads of a JSON-RPC message. The rest is skipped without
/// being built: rmcp parses the message for real, once.
#[derive(Debug, Default, serde::Deserialize)]
pub struct Envelope<'a> {
    #[serde(default, borrow)]
    jsonrpc: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    id: Present,
    #[serde(default, borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    result: Present,
    #[serde(default)]
    error: Present,
    #[serde(default)]
    params: Option<EnvelopeParams>,
}

#[derive(Debug, Default, serde::Deserialize)]
struct EnvelopeParams {
    #[serde(default, rename = "_meta")]
    meta: Option<EnvelopeMeta>,
}

#[derive(Debug, Default, serde::Deserialize)]
struct EnvelopeMeta {
    /// A request's own credential; only a string is one.
    #[serde(default)]
    token: Option<Value>,
}

/// Whether a member is there at all (`null` counts), its value skipped.
#[derive(Debug, Default)]
struct Present(bool);

impl<'de> serde::Deserialize<'de> for Present {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d)?;
        Ok(Present(true))
    }
}

impl Envelope<'_> {
    /// A request (an id and a method), not a notification or a response.
    pub fn is_request(&self) -> bool {
        self.id.0 && self.method.is_some()
    }

    /// An `initialize` request, which opens a session.
    fn is_initialize(&self) -> bool {
        self.is_request() && self.method.as_deref() == Some("initialize")
    }

    /// The message's own credential, `_meta.token`.
    fn token(&self) -> Option<&str> {
        self.params.as_ref()?.meta.as_ref()?.token.as_ref()?.as_str()
    }
}

/// A request body's envelope, or what is wrong with it as a JSON-RPC error
/// code and message.
pub fn parse_jsonrpc(body: &[u8]) -> Result<Envelope<'_>, (i32, String)> {
    let not_json = |e: serde_json::Error| (PARSE_ERROR, format!("parse error: the message is not JSON ({e})"));
    let invalid = "invalid request: expected a JSON-RPC 2.0 message with \"jsonrpc\": \"2.0\" and a \"method\"";
    if body.trim_ascii_start().starts_with(b"[") {
        // JSON-RPC batching was removed from MCP in 2025-06-18, and rmcp
        // answers none of the revisions that had it with a batch.
        serde_json::from_slice::<serde::de::IgnoredAny>(body).map_err(not_json)?;
        let message = "invalid request: JSON-RPC batches are not supported by this protocol revision; send each message on its own";
        return Err((INVALID_REQUEST, message.to_string()));
    }
    let envelope: Envelope = serde_json::from_slice(body).map_err(|e| match e.classify() {
        // Well-formed JSON of the wrong shape (a number, a non-string method).
        serde_json::error::Category::Data => (INVALID_REQUEST, invalid.to_string()),
        _ => not_json(e),
    })?;
    let valid = envelope.jsonrpc.as_deref() == Some("2.0")
        && (envelope.method.is_some() || envelope.result.0 || envelope.error.0);
    if !valid {
        return Err((INVALID_REQUEST, invalid.to_string()));
    }
    Ok(envelope)
}

/// What is wrong with a request body, as a JSON-RPC error code and message.
pub(super) fn jsonrpc_shape_error(body: &[u8]) -> Option<(i32, String)> {
    parse_jsonrpc(body).err()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_bodies_get_jsonrpc_codes() {
        assert_eq!(jsonrpc_shape_error(b"{not json").unwrap().0, -32700);
        assert_eq!(jsonrpc_shape_error(b"{\"foo\": 1}").unwrap().0, -32600);
        assert_eq!(jsonrpc_shape_error(b"[]").unwrap().0, -32600);
        let batch = br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#;
        let (code, message) = jsonrpc_shape_error(batch).unwrap();
        assert_eq!(code, -32600);
        assert!(message.contains("batches are not supported"), "{message}");
        assert_eq!(jsonrpc_shape_error(b"42").unwrap().0, -32600);
        assert!(jsonrpc_shape_error(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).is_none());
        assert!(jsonrpc_shape_error(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#).is_none());
        assert_eq!(
            jsonrpc_shape_error(br#"{"jsonrpc":"2.0","id":1,"method":5}"#)
                .unwrap()
                .0,
            -32600
        );
        assert_eq!(
            jsonrpc_shape_error(br#"{"jsonrpc":"2.0","id":1,"method":"x""#)
                .unwrap()
                .0,
            -32700
        );
    }

    #[test]
    fn unreadable_mcp_gets_a_jsonrpc_code_without_its_content() {
        let (code, message) = unreadable(br#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}"#);
        assert_eq!(code, -32600);
        assert!(!message.contains("1234567890"), "{message}");
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(unreadable(deep.as_bytes()).0, -32700);
        assert_eq!(unreadable(b"{\"a\":\"\xff\"}").0, -32700);
    }

    #[test]
    fn the_envelope_tells_requests_and_their_tokens() {
        let call =
            br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":1}}}"#;
        let call = parse_jsonrpc(call).unwrap();
        assert!(call.is_request() && call.token().is_none() && !call.is_initialize());
        let own = br#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"_meta":{"token":"mgw_1_x"}}}"#;
        let own = parse_jsonrpc(own).unwrap();
        assert!(own.is_request(), "a null id is still a request");
        assert_eq!(own.token(), Some("mgw_1_x"));
        let odd = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"token":{"a":1}}}}"#;
        assert_eq!(parse_jsonrpc(odd).unwrap().token(), None, "only a string is a token");
        let note = parse_jsonrpc(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap();
        assert!(!note.is_request() && note.token().is_none());
        let init = parse_jsonrpc(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#).unwrap();
        assert!(init.is_initialize());
        let escaped = parse_jsonrpc(br#"{"jsonrpc":"2\u002e0","id":1,"method":"ping"}"#).unwrap();
        assert!(escaped.is_request());
    }
}
