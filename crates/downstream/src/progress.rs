//! Progress of downstream calls: each call's progress token (rmcp gives
//! every request its own) routed to the upstream client that asked, under
//! that client's token, including notifications that beat their call's
//! registration, and bounded against a flood.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::Peer;

/// How long progress for a not-yet-registered call is kept.
const EARLY_PROGRESS_KEPT: Duration = Duration::from_secs(5);
/// Most progress tokens kept waiting for their call (a flood of unknown tokens stays bounded).
const EARLY_PROGRESS_TOKENS: usize = 64;
/// Most notifications kept per waiting token.
const EARLY_PROGRESS_PER_TOKEN: usize = 16;
/// Longest wait for progress notifications still being relayed when a result arrives.
const PROGRESS_SETTLE: Duration = Duration::from_millis(100);

/// Where a downstream call's progress notifications go: the upstream client
/// that asked, under its own token.
#[derive(Debug, Clone)]
pub struct Relay {
    /// The upstream client.
    pub peer: Peer<RoleServer>,
    /// Its progress token.
    pub token: ProgressToken,
}

/// Progress tokens of one server's calls in flight (rmcp gives every request
/// its own) to the relays their notifications go to.
#[derive(Debug, Default)]
pub struct ProgressRoutes {
    routes: std::sync::Mutex<HashMap<ProgressToken, (Relay, Arc<AtomicUsize>)>>,
    /// Notifications being relayed right now.
    in_flight: AtomicUsize,
    /// Notifications that arrived before their call registered its route.
    early: std::sync::Mutex<HashMap<ProgressToken, Vec<(Instant, ProgressNotificationParam)>>>,
}

impl ProgressRoutes {
    /// Routes `token` to `relay`, first relaying what arrived for it before
    /// the route existed (the server may answer faster than we register).
    pub(super) async fn register(self: &Arc<Self>, token: ProgressToken, relay: Relay) -> Route {
        let relayed = Arc::new(AtomicUsize::new(0));
        self.routes
            .lock()
            .expect("progress routes")
            .insert(token.clone(), (relay.clone(), relayed.clone()));
        let early = self.early.lock().expect("early progress").remove(&token);
        for (_, mut params) in early.unwrap_or_default() {
            relayed.fetch_add(1, Ordering::SeqCst);
            params.progress_token = relay.token.clone();
            let _ = relay.peer.notify_progress(params).await;
        }
        Route {
            routes: self.clone(),
            token,
            relayed,
        }
    }

    /// Relays a downstream progress notification, if its call is still in flight.
    pub async fn relay(&self, mut params: ProgressNotificationParam) {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        let relay = self
            .routes
            .lock()
            .expect("progress routes")
            .get(&params.progress_token)
            .cloned();
        match relay {
            Some((relay, relayed)) => {
                relayed.fetch_add(1, Ordering::SeqCst);
                params.progress_token = relay.token;
                let _ = relay.peer.notify_progress(params).await;
            }
            None => {
                // Perhaps its call is about to register; keep it a little while.
                let mut early = self.early.lock().expect("early progress");
                early.retain(|_, v| {
                    v.retain(|(at, _)| at.elapsed() < EARLY_PROGRESS_KEPT);
                    !v.is_empty()
                });
                if early.len() < EARLY_PROGRESS_TOKENS || early.contains_key(&params.progress_token) {
                    let kept = early.entry(params.progress_token.clone()).or_default();
                    if kept.len() < EARLY_PROGRESS_PER_TOKEN {
                        kept.push((Instant::now(), params));
                    }
                }
            }
        }
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
    }

    /// rmcp handles each notification on a task of its own, so progress sent
    /// just before a result may still be on its way when the result arrives.
    /// For a call that did report progress, let those tasks run first, so the
    /// client sees all of it before the result (bounded; progress is
    /// advisory). Calls without progress (most) do not wait at all.
    pub(super) async fn settle(&self, route: &Route) {
        if route.relayed.load(Ordering::SeqCst) == 0 {
            return;
        }
        let deadline = Instant::now() + PROGRESS_SETTLE;
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
        while self.in_flight.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            tokio::task::yield_now().await;
        }
    }
}

/// Removes its route when the call ends, however it ends.
pub(super) struct Route {
    routes: Arc<ProgressRoutes>,
    token: ProgressToken,
    /// Notifications relayed for this call so far.
    relayed: Arc<AtomicUsize>,
}

impl Drop for Route {
    fn drop(&mut self) {
        self.routes.routes.lock().expect("progress routes").remove(&self.token);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_flood_of_progress_for_unknown_calls_stays_bounded() {
        let routes = ProgressRoutes::default();
        for i in 0..10_000 {
            let token = ProgressToken(rmcp::model::NumberOrString::Number(i % 1000));
            routes.relay(ProgressNotificationParam::new(token, i as f64)).await;
        }
        let early = routes.early.lock().unwrap();
        assert_eq!(early.len(), EARLY_PROGRESS_TOKENS);
        assert!(early.values().all(|v| v.len() <= EARLY_PROGRESS_PER_TOKEN));
    }
}
