//! The HTTP listener's connections: at most `[http] max_connections` open,
//! each with `header_timeout_secs` to send a request's headers, at most
//! [`MAX_HEADER_BYTES`] of them, and `body_timeout_secs` to finish its body,
//! drained on shutdown.
//!
//! `axum::serve` sets none of these: a connection that never finished its
//! headers or its body stayed open as long as its client liked, and needs no
//! token to open, so a few hundred of them took every file descriptor and
//! `/healthz` with them.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hyper::body::{Frame, SizeHint};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{debug, info, warn};

use config::HttpConfig;

/// The connections of `wanted` that fit in half the open-file limit, once
/// the soft limit is raised to the hard one (as Go's runtime and nginx do):
/// the other half is for the store, stdio servers' pipes and connections to
/// HTTP servers. A descriptor short, `accept` fails and axum waits a second
/// before it accepts again, which a burst of new clients meets as a
/// one-second stall.
fn within_open_files(wanted: usize) -> usize {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let limit = match getrlimit(Resource::RLIMIT_NOFILE) {
        Ok((soft, hard)) => {
            let raised = hard.min(1 << 20);
            if soft < raised && setrlimit(Resource::RLIMIT_NOFILE, raised, hard).is_ok() {
                raised
            } else {
                soft
            }
        }
        Err(_) => 1024,
    };
    let room = usize::try_from(limit / 2).unwrap_or(usize::MAX).max(1);
    if wanted > room {
        // Only a value the operator chose is worth a warning.
        if wanted == HttpConfig::default().max_connections {
            info!(
                max_connections = room,
                open_files = limit,
                "HTTP connections: half the open-file limit"
            );
        } else {
            warn!(
                max_connections = wanted,
                open_files = limit,
                allowed = room,
                "[http] max_connections is past half the open-file limit; fewer are accepted at once"
            );
        }
    }
    wanted.min(room)
}

/// The most bytes of a request's head (request line and headers) a
/// connection may hold; past it hyper answers 431. hyper's default, about
/// 400 KiB, let a connection that needs no token to open hold that much
/// while it never finished its headers (issue #71). nginx allows 32 KiB too,
/// Node.js 16 KiB: a long OAuth token and a browser's cookies fit.
const MAX_HEADER_BYTES: usize = 32 * 1024;

/// Serves `app` on `listener` until `ct` is cancelled, then stops accepting
/// and waits for the open connections to finish their requests in flight,
/// as `axum::serve(..).with_graceful_shutdown(..)` does.
///
/// Past `max_connections`, new connections are left in the kernel's accept
/// backlog rather than accepted and closed: waiting costs the gateway no file
/// descriptor, and a caller (a load balancer's health check included) is
/// answered once a slow connection times out, instead of being refused for
/// as long as someone keeps the listener full.
pub(super) async fn serve(mut listener: TcpListener, app: axum::Router, http: &HttpConfig, ct: CancellationToken) {
    let app = app.layer(axum::middleware::from_fn_with_state(http.body_timeout, body_deadline));
    let mut builder = http1::Builder::new();
    // Without a timer hyper cannot time the header read at all. The timeout
    // also closes a kept-alive connection that sends no next request.
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(http.header_timeout)
        .max_buf_size(MAX_HEADER_BYTES);
    let slots = Arc::new(Semaphore::new(within_open_files(http.max_connections)));
    let connections = TaskTracker::new();
    let mut full = false;
    loop {
        let slot = match slots.clone().try_acquire_owned() {
            Ok(slot) => {
                full = false;
                slot
            }
            Err(_) => {
                // Once per time the listener fills, not once per connection.
                if !full {
                    warn!(
                        max_connections = http.max_connections,
                        "HTTP connections at [http] max_connections; new ones wait to be accepted"
                    );
                    full = true;
                }
                tokio::select! {
                    slot = slots.clone().acquire_owned() => match slot {
                        Ok(slot) => slot,
                        Err(_) => break, // closed: never, the semaphore is ours
                    },
                    _ = ct.cancelled() => break,
                }
            }
        };
        // axum's accept retries: at once after a connection's own error, a
        // second later after one such as EMFILE (logged).
        let stream = tokio::select! {
            (stream, _) = axum::serve::Listener::accept(&mut listener) => stream,
            _ = ct.cancelled() => break,
        };
        connections.spawn(connection(builder.clone(), stream, app.clone(), slot, ct.clone()));
    }
    drop(listener);
    connections.close();
    connections.wait().await;
}

/// Serves one connection; its `_slot` goes back when it closes.
async fn connection(
    builder: http1::Builder,
    stream: TcpStream,
    app: axum::Router,
    _slot: OwnedSemaphorePermit,
    ct: CancellationToken,
) {
    let conn = builder.serve_connection(TokioIo::new(stream), TowerToHyperService::new(app));
    let mut conn = std::pin::pin!(conn);
    let served = tokio::select! {
        served = conn.as_mut() => served,
        _ = ct.cancelled() => {
            // Finish the request in flight, keep no connection alive after it.
            conn.as_mut().graceful_shutdown();
            conn.as_mut().await
        }
    };
    // A header timeout lands here too: the client's doing, not the gateway's.
    if let Err(e) = served {
        debug!(cause = %e, "HTTP connection closed");
    }
}

/// Gives a request's body `timeout` from the moment its headers arrived. A
/// body that has not ended by then fails whoever reads it, and the request
/// is answered 408 with `Connection: close`: what the handler made of the
/// failure (the guard would say 413) is not what happened.
async fn body_deadline(State(timeout): State<Duration>, request: Request, next: Next) -> Response {
    if request.body().is_end_stream() {
        return next.run(request).await;
    }
    let expired = Arc::new(AtomicBool::new(false));
    let sleep = Box::pin(tokio::time::sleep(timeout));
    let request = request.map(|body| {
        Body::new(Deadline {
            body,
            sleep,
            expired: expired.clone(),
        })
    });
    let response = next.run(request).await;
    if !expired.load(Ordering::Relaxed) {
        return response;
    }
    let secs = timeout.as_secs();
    debug!(secs, "request body timed out");
    let message = format!("the request body did not arrive within {secs} s ([http] body_timeout_secs)");
    (
        http::StatusCode::REQUEST_TIMEOUT,
        [(http::header::CONNECTION, "close")],
        message,
    )
        .into_response()
}

/// A request body that fails once `sleep` ends before the body does.
struct Deadline {
    body: Body,
    sleep: Pin<Box<tokio::time::Sleep>>,
    /// Set when the deadline failed the body, for [`body_deadline`] to see.
    expired: Arc<AtomicBool>,
}

/// Why a body read failed; only a handler's logs see it.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive in time ([http] body_timeout_secs)")]
struct BodyTimedOut;

impl HttpBody for Deadline {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        // Every field is Unpin, and so is `Deadline`.
        let this = &mut *self;
        if let Poll::Ready(frame) = Pin::new(&mut this.body).poll_frame(cx) {
            return Poll::Ready(frame);
        }
        if this.sleep.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        this.expired.store(true, Ordering::Relaxed);
        Poll::Ready(Some(Err(axum::Error::new(BodyTimedOut))))
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
