//! The rate layer: a caller's requests over `[http] requests_per_minute` get
//! 429 with `Retry-After`. Notifications and responses are not counted.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::{Identity, Message};
use crate::errors::{RATE_LIMITED, unanswerable};
use gateway::ratelimit::{Budget, Limiter};

/// Charges a request to its caller's budget; see the module's doc. The
/// budget goes on with the request: a script's calls are charged to it too.
pub(super) async fn limit(State(limiter): State<Arc<Limiter>>, mut request: Request, next: Next) -> Response {
    let is_request = request.extensions().get::<Message>().is_some_and(|m| m.is_request);
    let Some(identity) = request.extensions().get::<Identity>().filter(|_| is_request) else {
        return next.run(request).await;
    };
    let budget = Budget::new(limiter, identity.budget.clone());
    if let Err(seconds) = budget.take() {
        let message = format!("too many requests; retry in {seconds} s ([http] requests_per_minute)");
        return (
            http::StatusCode::TOO_MANY_REQUESTS,
            [(http::header::RETRY_AFTER, seconds.to_string())],
            axum::Json(unanswerable(RATE_LIMITED, &message)),
        )
            .into_response();
    }
    request.extensions_mut().insert(budget);
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use axum::routing::any;

    use super::super::test_support::{a_request, answer, noted, post};
    use super::*;
    use crate::sessions::Owner;
    use config::Rate;

    #[tokio::test]
    async fn requests_past_the_burst_wait_and_notifications_pass() {
        let limiter = Arc::new(Limiter::new(Rate {
            per_minute: 1,
            burst: 2,
        }));
        // The handler says whether the budget came with the request.
        let handler = |r: Request<Body>| async move { r.extensions().get::<Budget>().is_some().to_string() };
        let router = axum::Router::new()
            .route("/mcp", any(handler))
            .layer(axum::middleware::from_fn_with_state(limiter, limit));
        let call = |message| noted(post("{}"), message, Owner::for_test(1, None));
        for _ in 0..2 {
            let (r, body) = answer(router.clone(), call(a_request())).await;
            assert_eq!((r.status(), body.as_str()), (StatusCode::OK, "true"));
        }
        let (r, body) = answer(router.clone(), call(a_request())).await;
        assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
        assert!(r.headers().get(http::header::RETRY_AFTER).is_some());
        assert!(
            body.contains("-32029") && body.contains("requests_per_minute"),
            "{body}"
        );
        let (r, _) = answer(router.clone(), call(Message::default())).await;
        assert_eq!(r.status(), StatusCode::OK, "a notification is not counted");
        let other = noted(post("{}"), a_request(), Owner::for_test(2, None));
        assert_eq!(
            answer(router, other).await.0.status(),
            StatusCode::OK,
            "each caller has its own budget"
        );
    }
}
