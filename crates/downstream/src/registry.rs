//! The running set of servers: each configured server's [`Downstream`],
//! swapped whole by a reload, and the count of "some server's tools
//! changed" the catalog follows.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::{Builtins, Downstream, ToolMemory, supervise};
use config::ServerConfig;

/// The servers of one configuration, in config order.
#[derive(Debug, Default)]
struct Members {
    servers: Vec<Arc<Downstream>>,
    by_name: HashMap<String, usize>,
}

impl Members {
    fn new(servers: Vec<Arc<Downstream>>) -> Self {
        let by_name = servers
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name().to_string(), i))
            .collect();
        Self { servers, by_name }
    }

    fn get(&self, name: &str) -> Option<&Arc<Downstream>> {
        self.by_name.get(name).map(|&i| &self.servers[i])
    }
}

/// "Some server's tools changed": a notice for the catalog, and a count of
/// changes, so that a call can tell whether the catalog has caught up with
/// a server that came up a moment before it.
#[derive(Debug, Default)]
pub struct ToolChanges {
    notify: Notify,
    count: std::sync::atomic::AtomicU64,
}

impl ToolChanges {
    /// Records a change and wakes the catalog.
    pub fn notify_one(&self) {
        self.count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.notify.notify_one();
    }

    /// Resolves on the next change (or one that came since the last wait).
    pub fn notified(&self) -> tokio::sync::futures::Notified<'_> {
        self.notify.notified()
    }

    /// How many changes so far.
    pub fn count(&self) -> u64 {
        self.count.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// Every configured server plus a signal for "some server's tools changed".
/// [`Registry::apply`] swaps in a new configuration's servers while requests
/// keep reading the old list.
#[derive(Debug)]
pub struct Registry {
    members: ArcSwap<Members>,
    changed: Arc<ToolChanges>,
    tracker: TaskTracker,
    ct: CancellationToken,
    memory: Arc<dyn ToolMemory>,
    builtins: Arc<dyn Builtins>,
}

/// What [`Registry::first_connections`] waited for, by server name.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Startup {
    /// Came up while waited for: their tools are known now.
    pub up: Vec<String>,
    /// Still in their first connection when the wait ended.
    pub starting: Vec<String>,
}

impl Startup {
    /// Whether nothing was waited for.
    pub fn is_empty(&self) -> bool {
        self.up.is_empty() && self.starting.is_empty()
    }
}

/// What [`Registry::apply`] did, by server name.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// New in the configuration: started.
    pub added: Vec<String>,
    /// Gone from the configuration: stopped.
    pub removed: Vec<String>,
    /// Configured differently: stopped and started again.
    pub restarted: Vec<String>,
    /// Same configuration: left alone, in-flight calls included.
    pub unchanged: usize,
}

impl Registry {
    /// Starts a supervisor per enabled server, concurrently, on `tracker`;
    /// `builtins` serves the built-in ones. Cancelling `ct` stops them all;
    /// each stops its child process on the way out.
    pub fn start(
        servers: &[ServerConfig],
        tracker: &TaskTracker,
        ct: &CancellationToken,
        memory: Arc<dyn ToolMemory>,
        builtins: Arc<dyn Builtins>,
    ) -> Arc<Registry> {
        let registry = Arc::new(Registry {
            members: ArcSwap::default(),
            changed: Arc::new(ToolChanges::default()),
            tracker: tracker.clone(),
            ct: ct.clone(),
            memory,
            builtins,
        });
        registry.apply(servers);
        registry
    }

    /// A registry of `servers` that nobody supervises (tests publish their states).
    #[cfg(test)]
    pub(super) fn unsupervised(
        servers: Vec<Arc<Downstream>>,
        changed: Arc<ToolChanges>,
        memory: Arc<dyn ToolMemory>,
        builtins: Arc<dyn Builtins>,
    ) -> Registry {
        Registry {
            members: ArcSwap::from_pointee(Members::new(servers)),
            changed,
            tracker: TaskTracker::new(),
            ct: CancellationToken::new(),
            memory,
            builtins,
        }
    }

    /// All servers, as of now.
    pub fn servers(&self) -> Vec<Arc<Downstream>> {
        self.members.load().servers.clone()
    }

    /// A server by name.
    pub fn get(&self, name: &str) -> Option<Arc<Downstream>> {
        self.members.load().get(name).cloned()
    }

    /// Notified whenever a server's status or tools change.
    pub fn changed(&self) -> &Arc<ToolChanges> {
        &self.changed
    }

    /// Waits until every enabled server has connected or failed at least once.
    pub async fn settled(&self) {
        self.first_connections(|_| true, Duration::MAX).await;
    }

    /// Waits for the servers `wanted` picks that are in their first
    /// connection: each at most its `connect_timeout_ms`, all at most `cap`.
    /// Servers past it (running, failed and retrying, idle) are not waited for.
    pub async fn first_connections(&self, wanted: impl Fn(&str) -> bool, cap: Duration) -> Startup {
        let starting: Vec<Arc<Downstream>> = self
            .servers()
            .into_iter()
            .filter(|s| wanted(s.name()) && s.state.borrow().first_connection())
            .collect();
        if !starting.is_empty() {
            let all = futures::future::join_all(starting.iter().map(|s| s.first_connected()));
            let _ = tokio::time::timeout(cap, all).await;
        }
        let mut outcome = Startup::default();
        for server in starting {
            let state = server.state.borrow();
            let name = server.name().to_string();
            if state.first_connection() {
                outcome.starting.push(name);
            } else if state.status.tools_known() {
                outcome.up.push(name);
            }
        }
        outcome
    }

    /// Makes `configs` the running set: starts new servers, stops removed
    /// ones, restarts those whose settings differ, and leaves the rest (and
    /// their calls in flight) alone.
    pub fn apply(&self, configs: &[ServerConfig]) -> Changes {
        let old = self.members.load_full();
        let mut changes = Changes::default();
        let mut servers = Vec::with_capacity(configs.len());
        for config in configs {
            match old.get(&config.name) {
                Some(current) if current.config == *config => {
                    changes.unchanged += 1;
                    servers.push(current.clone());
                    continue;
                }
                Some(current) => {
                    current.stop.cancel();
                    changes.restarted.push(config.name.clone());
                }
                None => changes.added.push(config.name.clone()),
            }
            telemetry::downstream_state(&config.name, false, 0, 0);
            let server = Arc::new(Downstream::new(
                config.clone(),
                self.ct.child_token(),
                self.memory.clone(),
                self.builtins.clone(),
                self.tracker.clone(),
                self.changed.clone(),
            ));
            if config.enabled && config.unconfigured().is_none() {
                self.tracker.spawn(supervise(server.clone(), self.changed.clone()));
            }
            servers.push(server);
        }
        for gone in old
            .servers
            .iter()
            .filter(|s| !configs.iter().any(|c| c.name == s.name()))
        {
            gone.stop.cancel();
            telemetry::downstream_state(gone.name(), false, 0, 0);
            changes.removed.push(gone.name().to_string());
        }
        self.members.store(Arc::new(Members::new(servers)));
        self.changed.notify_one();
        changes
    }
}
