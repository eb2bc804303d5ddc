//! The admission layer: an `initialize` that opens a session counts against
//! `[http] max_sessions` and `max_sessions_per_caller`. Over either, the
//! idlest session is closed, or the request is refused when none is idle.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::super::sessions::{Full, Sessions};
use super::{Identity, Message, SESSION_ID};
use crate::errors::{SESSIONS_FULL, unanswerable};

/// Admits a new session, and binds its place to the id rmcp gives it; see the module's doc.
pub(super) async fn admit(State(sessions): State<Arc<Sessions>>, request: Request, next: Next) -> Response {
    let opening = request.extensions().get::<Message>().is_some_and(|m| m.is_initialize)
        && request.headers().get(SESSION_ID).is_none();
    let owner = request.extensions().get::<Identity>().map(|i| i.owner.clone());
    let (true, Some(owner)) = (opening, owner) else {
        return next.run(request).await;
    };
    let admission = match sessions.admit(owner).await {
        Ok(a) => a,
        Err(full) => return sessions_full(full),
    };
    let response = next.run(request).await;
    if let Some(id) = response.headers().get(SESSION_ID) {
        admission.bind(id.to_str().unwrap_or_default().into());
    }
    response
}

fn sessions_full(full: Full) -> Response {
    let (status, limit) = match full {
        Full::Caller(_) => (http::StatusCode::TOO_MANY_REQUESTS, "caller"),
        Full::Gateway(_) => (http::StatusCode::SERVICE_UNAVAILABLE, "gateway"),
    };
    telemetry::session_refused(limit);
    tracing::warn!(limit, "refused a new session: the limit is full");
    let seconds = super::super::sessions::EVICTABLE_AFTER.as_secs().to_string();
    (
        status,
        [(http::header::RETRY_AFTER, seconds)],
        axum::Json(unanswerable(SESSIONS_FULL, &full.to_string())),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use axum::http::StatusCode;
    use axum::routing::any;

    use super::super::test_support::{answer, noted, post};
    use super::*;
    use crate::sessions::Owner;

    #[tokio::test]
    async fn an_initialize_over_the_callers_limit_is_refused_while_its_sessions_are_busy() {
        let sessions = Arc::new(Sessions::new(10, 1));
        // rmcp's part: each initialize gets a new session id.
        let ids = Arc::new(std::sync::atomic::AtomicU32::new(0));
        let handler = move || {
            let n = ids.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            async move { ([(SESSION_ID, format!("s{n}"))], "opened") }
        };
        let router = axum::Router::new()
            .route("/mcp", any(handler))
            .layer(axum::middleware::from_fn_with_state(sessions, admit));
        let initialize = |who: Owner| {
            let message = Message {
                is_request: true,
                is_initialize: true,
                token: None,
            };
            noted(post("{}"), message, who)
        };
        let (r, _) = answer(router.clone(), initialize(Owner::for_test(1, None))).await;
        assert_eq!(r.status(), StatusCode::OK);
        let (r, body) = answer(router.clone(), initialize(Owner::for_test(1, None))).await;
        assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
        assert!(r.headers().get(http::header::RETRY_AFTER).is_some());
        assert!(body.contains("-32030"), "{body}");
        let (r, _) = answer(router, initialize(Owner::for_test(2, None))).await;
        assert_eq!(r.status(), StatusCode::OK, "another caller has room of its own");
    }
}
