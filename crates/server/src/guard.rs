//! The HTTP guard in front of rmcp's streamable HTTP service on `/mcp`: a
//! stack of layers, outermost first, each with one concern and tested alone.
//!
//! * [`envelope`]: a POST's body is JSON-RPC, or gets the JSON-RPC error the
//!   spec names (-32700, -32600), never a bare 415;
//! * [`credential`]: every message carries a credential (the bearer token,
//!   or a request's `_meta.token`), unless anonymous access is on: 401
//!   otherwise; the caller of a header token, or the anonymous caller, is
//!   attached to the request;
//! * [`owner`]: a message on a session must come from the caller that
//!   opened it (project, and subject for OAuth); to anyone else the session
//!   is unknown (404), exactly as a wrong id is;
//! * [`rate`]: a caller over `[http] requests_per_minute` gets 429 with `Retry-After`;
//! * [`admission`]: an `initialize` over `[http] max_sessions[_per_caller]`
//!   closes the idlest session, or is refused when none is idle.
//!
//! Each layer hands the next what it learned in the request's extensions:
//! the [`Message`] read from the body, then the caller's [`Identity`].

use std::sync::Arc;

use super::sessions::{Owner, Sessions};
use gateway::Gateway;
use gateway::ratelimit::Limiter;

mod admission;
mod credential;
mod envelope;
mod owner;
mod rate;

pub(super) use envelope::jsonrpc_shape_error;
pub use envelope::{Envelope, parse_jsonrpc};

/// What the envelope layer read of a POST's JSON-RPC message (nothing, for GET and DELETE).
#[derive(Debug, Clone, Default)]
struct Message {
    /// A request (an id and a method), which counts against the caller's rate.
    is_request: bool,
    /// An `initialize`, which opens a session.
    is_initialize: bool,
    /// The message's own credential, `_meta.token`.
    token: Option<String>,
}

/// Who the credential layer found: whose sessions these are, and whose rate budget.
#[derive(Debug, Clone)]
struct Identity {
    owner: Owner,
    budget: String,
}

/// The caller the credential layer found for a request's `_meta.token`,
/// which the handler resolves again itself (hint and all): what rmcp's
/// check of a call's `Mcp-Param-*` headers sees the tools through, as it
/// does a header's caller.
#[derive(Debug, Clone)]
pub(super) struct Authenticated(pub(super) gateway::auth::Caller);

/// The session header (lower case, as `http` stores names).
const SESSION_ID: &str = "mcp-session-id";

/// `mcp` wrapped in the guard's layers, the envelope outermost, on
/// `/mcp`; a limiter only where `[http]` sets a rate. The layers wrap the
/// service itself, not a router: a router boxes what each layer wraps, and
/// every request cloned each box below each layer (about twenty
/// allocations a request, for five layers).
pub(super) fn guarded<S>(
    mcp: S,
    gateway: Gateway,
    limiter: Option<Arc<Limiter>>,
    sessions: Arc<Sessions>,
) -> axum::Router
where
    S: tower::Service<axum::extract::Request, Response = axum::response::Response, Error = std::convert::Infallible>
        + Clone
        + Send
        + Sync
        + 'static,
    S::Future: Send + 'static,
{
    use axum::middleware::{from_fn, from_fn_with_state};
    let service = tower::ServiceBuilder::new()
        .layer(from_fn(envelope::read))
        .layer(from_fn_with_state(gateway, credential::check))
        .layer(from_fn_with_state(sessions.clone(), owner::claim))
        .option_layer(limiter.map(|limiter| from_fn_with_state(limiter, rate::limit)))
        .layer(from_fn_with_state(sessions, admission::admit))
        .service(mcp);
    axum::Router::new().nest_service("/mcp", service)
}

#[cfg(test)]
mod test_support {
    //! A layer under test, alone in front of a handler that answers with
    //! what reached it.

    use axum::body::Body;
    use axum::http::{Request, Response};
    use tower::ServiceExt;

    /// `router`'s answer to `request`: its status and body text.
    pub(super) async fn answer(router: axum::Router, request: Request<Body>) -> (Response<()>, String) {
        let response = router.oneshot(request).await.unwrap();
        let (parts, body) = response.into_parts();
        let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
        (
            Response::from_parts(parts, ()),
            String::from_utf8_lossy(&bytes).into_owned(),
        )
    }

    pub(super) fn post(body: &str) -> Request<Body> {
        Request::post("/mcp")
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))
            .unwrap()
    }

    /// A request as the layers above would hand it on: its message noted,
    /// and its caller found.
    pub(super) fn noted(mut request: Request<Body>, message: super::Message, owner: super::Owner) -> Request<Body> {
        request.extensions_mut().insert(message);
        let budget = format!("{owner:?}");
        request.extensions_mut().insert(super::Identity { owner, budget });
        request
    }

    pub(super) fn a_request() -> super::Message {
        super::Message {
            is_request: true,
            ..Default::default()
        }
    }
}
