//! The owner layer: a message on a session must come from the caller that
//! opened it (its project, and its subject for OAuth). To anyone else the
//! session is unknown, exactly as a wrong id is.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::super::sessions::Sessions;
use super::{Identity, SESSION_ID};

/// Checks whose session a message is on; see the module's doc.
pub(super) async fn claim(State(sessions): State<Arc<Sessions>>, request: Request, next: Next) -> Response {
    let session = request
        .headers()
        .get(SESSION_ID)
        .map(|v| v.to_str().unwrap_or_default());
    if let (Some(id), Some(identity)) = (session, request.extensions().get::<Identity>())
        && !sessions.claim(id, &identity.owner)
    {
        return unknown_session();
    }
    next.run(request).await
}

/// What a wrong session id gets from rmcp, word for word: a session that is
/// not the caller's must read the same.
fn unknown_session() -> Response {
    (http::StatusCode::NOT_FOUND, "Not Found: Session not found").into_response()
}

#[cfg(test)]
mod tests {
    use axum::http::StatusCode;
    use axum::routing::any;

    use super::super::test_support::{a_request, answer, noted, post};
    use super::*;
    use crate::sessions::Owner;

    #[tokio::test]
    async fn a_session_is_unknown_to_all_but_its_owner() {
        let sessions = Arc::new(Sessions::new(10, 10));
        let alice = Owner::for_test(1, Some("alice"));
        sessions.admit(alice.clone()).await.unwrap().bind("s1".into());
        let router = axum::Router::new()
            .route("/mcp", any(|| async { "reached" }))
            .layer(axum::middleware::from_fn_with_state(sessions, claim));
        let on = |session: Option<&str>, who: &Owner| {
            let mut request = post("{}");
            if let Some(id) = session {
                request.headers_mut().insert(SESSION_ID, id.parse().unwrap());
            }
            noted(request, a_request(), who.clone())
        };
        let bob = Owner::for_test(1, Some("bob"));
        let (r, body) = answer(router.clone(), on(Some("s1"), &bob)).await;
        assert_eq!(
            (r.status(), body.as_str()),
            (StatusCode::NOT_FOUND, "Not Found: Session not found")
        );
        let (r, body) = answer(router.clone(), on(Some("s9"), &alice)).await;
        assert_eq!(
            (r.status(), body.as_str()),
            (StatusCode::NOT_FOUND, "Not Found: Session not found")
        );
        assert_eq!(answer(router.clone(), on(Some("s1"), &alice)).await.1, "reached");
        assert_eq!(
            answer(router, on(None, &bob)).await.1,
            "reached",
            "no session: nothing to claim"
        );
    }
}
