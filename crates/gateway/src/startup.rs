//! Calls that arrive while servers start. A stdio client starts the gateway
//! with its conversation and asks within a second; an answer from whatever
//! has connected so far tells the model there are no tools, and it does not
//! ask again. So a call waits for the servers its caller may see that are
//! still in their first connection (at start, or added by a reload): each
//! at most its `connect_timeout_ms`, all at most `[startup] wait_ms`. Then
//! it reads the catalog that lists them, or says which are still starting.

use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::time::Instant;

use super::Gateway;
use store::access::Grants;

/// How long the catalog may take to list a server that came up just as the
/// wait's cap ran out (it is rebuilt off the request path, in milliseconds).
const CATALOG_GRACE: Duration = Duration::from_secs(2);

/// A duration as the milliseconds [`Gateway`] keeps it in.
pub(super) fn millis(d: Duration) -> u64 {
    d.as_millis().try_into().unwrap_or(u64::MAX)
}

/// The line that tells a caller some servers are still starting.
pub(super) fn notice(starting: &[String]) -> String {
    format!(
        "still starting: {}; their tools are not here yet, ask again in a few seconds to find more",
        starting.join(", ")
    )
}

impl Gateway {
    /// Waits for the servers `grants` may see (only `server`, when named)
    /// that are still in their first connection, then for the catalog to
    /// list those that came up (and any that came up just before the call). Returns those still starting when the wait
    /// ended; at once, and empty, when none was.
    pub async fn wait_for_starting(&self, grants: &Grants, server: Option<&str>) -> Vec<String> {
        let cap = Duration::from_millis(self.startup_wait.load(Ordering::Relaxed));
        let began = Instant::now();
        let wanted = |name: &str| server.is_none_or(|s| s == name) && grants.sees_server(name);
        let startup = self.registry.first_connections(wanted, cap).await;
        // Read after the states: a server seen running has counted its
        // change (it counts while its state is written), and the catalog
        // may not have listed it yet.
        let changes = self.registry.changed().count();
        if startup.is_empty() && !self.catalog.behind(changes) {
            return Vec::new();
        }
        let up: Vec<&str> = startup.up.iter().map(String::as_str).collect();
        let rest = cap.saturating_sub(began.elapsed()).max(CATALOG_GRACE);
        let listed = async {
            self.catalog.listing(&up).await;
            self.catalog.caught_up(changes).await;
        };
        let _ = tokio::time::timeout(rest, listed).await;
        let waited_ms = began.elapsed().as_millis() as u64;
        if startup.starting.is_empty() {
            tracing::debug!(servers = up.len(), waited_ms, "a call waited for servers to start");
        } else {
            tracing::info!(
                servers = up.len() + startup.starting.len(),
                still_starting = ?startup.starting,
                waited_ms,
                "a call waited for servers to start; some still are ([startup] wait_ms)"
            );
        }
        startup.starting
    }
}
