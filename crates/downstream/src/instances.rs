//! A server's instances: for a project that holds its own credential, a
//! connection (an HTTP session, or a child process for a `command` server)
//! of its own, beside the shared one; and for a stateless `command` server
//! (`stateless_instances`), copies of its child that calls spread over.
//!
//! An instance is a [`Downstream`] like any other, supervised by the same
//! code: it starts on the call that needs it and stops after
//! `idle_timeout_ms` without calls (five minutes by default); the next call
//! starts it again. Beside a shared connection, the shared listing stands
//! for every project. A server without one (`shared = false`, or a sign-in
//! only) is listed per project: what a project's own connection listed is
//! that project's alone ([`Downstream::own_listings`]). An instance whose
//! credential changed (set anew, removed, signed in again) is stopped, and
//! calls already on it end with it.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use rmcp::transport::auth::AuthClient;
use tracing::{Instrument, info};

use super::{Downstream, Error, Status, ToolMemory};
use config::{DEFAULT_LAZY_IDLE_TIMEOUT, ServerConfig, Transport};

/// A project's own credential for one server, opened. `Debug` shows names, never values.
#[derive(Clone)]
pub struct ProjectCredential {
    /// The project's id.
    pub project_id: i64,
    /// Its name, for logs and errors.
    pub project: String,
    /// Headers sent to a `url` server, over the configured ones.
    pub headers: BTreeMap<String, String>,
    /// Environment of a `command` server's child, over the configured one.
    pub env: BTreeMap<String, String>,
    /// An OAuth sign-in: a client that adds the project's access token to
    /// every request and refreshes it when due.
    pub sign_in: Option<AuthClient<reqwest::Client>>,
    /// Changes whenever any value is set anew.
    pub fingerprint: String,
}

impl std::fmt::Debug for ProjectCredential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProjectCredential")
            .field("project", &self.project)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .field("sign_in", &self.sign_in.is_some())
            .finish()
    }
}

/// Instances of one server: by project id, and the copies of a stateless one.
#[derive(Debug, Default)]
pub(super) struct Instances {
    by_project: std::sync::Mutex<HashMap<i64, Arc<Downstream>>>,
    copies: std::sync::Mutex<Vec<Arc<Downstream>>>,
}

/// Instances remember nothing: a project's own listing is made afresh by
/// its connection (a remembered one would outlive a changed credential).
#[derive(Debug)]
pub(super) struct Forgetful;

impl ToolMemory for Forgetful {
    fn recall(&self, _: &ServerConfig) -> Option<Vec<rmcp::model::Tool>> {
        None
    }
    fn remember(&self, _: &ServerConfig, _: &[rmcp::model::Tool]) {}
    fn recall_protocol(&self, _: &ServerConfig) -> Option<String> {
        None
    }
    fn remember_protocol(&self, _: &ServerConfig, _: &str) {}
}

/// Whether an instance holds a connection or a child (counted against `max_instances`).
fn holds_connection(server: &Downstream) -> bool {
    matches!(server.state.borrow().status, Status::Connecting | Status::Running)
}

impl Downstream {
    /// The connection `credential`'s project uses: its own instance, started
    /// (or woken) as needed. An instance made with an older credential is
    /// stopped first. Past `max_instances`, a clear error.
    pub fn instance(self: &Arc<Self>, credential: ProjectCredential) -> Result<Arc<Downstream>, Error> {
        let mut instances = self.instances.by_project.lock().expect("instances lock");
        if let Some(current) = instances.get(&credential.project_id) {
            let same = current
                .own
                .as_ref()
                .is_some_and(|c| c.fingerprint == credential.fingerprint);
            let ended = current.stop.is_cancelled() || matches!(current.state.borrow().status, Status::Failed(_));
            if same && !ended {
                if holds_connection(current) || self.live_instances(&instances) < self.config.max_instances {
                    return Ok(current.clone());
                }
                return Err(self.too_many());
            }
            if !same {
                info!(server = %self.name(), project = %credential.project, "project credential changed; closing the connection that used the old one");
            }
            current.stop.cancel();
            instances.remove(&credential.project_id);
        }
        if self.live_instances(&instances) >= self.config.max_instances {
            return Err(self.too_many());
        }
        let instance = self.spawn_instance(Some(credential));
        instances.insert(instance.own.as_ref().expect("an instance").project_id, instance.clone());
        Ok(instance)
    }

    /// The child a shared call goes to: the least busy of this server and
    /// its running copies. When every one is busy and fewer than
    /// `stateless_instances` run, one more starts, for the calls after this
    /// one (a child takes a while to start; this call does not wait for it).
    pub fn for_call(self: &Arc<Self>) -> Arc<Downstream> {
        let wanted = self.config.stateless_instances;
        if wanted <= 1 {
            return self.clone();
        }
        let mut copies = self.instances.copies.lock().expect("copies lock");
        // A copy that failed or went idle is let go: the next busy moment
        // starts a fresh one rather than waking it.
        copies.retain(|c| {
            let live = !c.stop.is_cancelled() && holds_connection(c);
            if !live {
                c.stop.cancel();
            }
            live
        });
        let busy = |c: &Arc<Downstream>| c.busy.load(std::sync::atomic::Ordering::SeqCst);
        let least = std::iter::once(self)
            .chain(copies.iter().filter(|c| c.state.borrow().status == Status::Running))
            .min_by_key(|c| busy(c))
            .expect("the server itself")
            .clone();
        if busy(&least) > 0 && copies.len() + 1 < wanted {
            copies.push(self.spawn_instance(None));
        }
        least
    }

    /// Stops `project_id`'s instance, if it has one (its credential was removed).
    pub fn drop_instance(&self, project_id: i64) {
        let gone = self
            .instances
            .by_project
            .lock()
            .expect("instances lock")
            .remove(&project_id);
        if let Some(gone) = gone {
            info!(server = %self.name(), project_id, "project credential removed; closing its own connection");
            gone.stop.cancel();
        }
    }

    /// Instances that hold a connection or child now.
    pub fn instance_count(&self) -> usize {
        self.live_instances(&self.instances.by_project.lock().expect("instances lock"))
    }

    fn live_instances(&self, instances: &HashMap<i64, Arc<Downstream>>) -> usize {
        instances.values().filter(|i| holds_connection(i)).count()
    }

    fn too_many(&self) -> Error {
        Error::TooManyInstances {
            server: self.name().to_string(),
            limit: self.config.max_instances,
        }
    }

    /// Whether `project_id` has an instance made with the credential of
    /// `fingerprint`, running or not (one that failed is tried again by
    /// the project's next call).
    pub fn has_instance_with(&self, project_id: i64, fingerprint: &str) -> bool {
        let instances = self.instances.by_project.lock().expect("instances lock");
        instances
            .get(&project_id)
            .and_then(|i| i.own.as_ref())
            .is_some_and(|own| own.fingerprint == fingerprint)
    }

    /// Stops the instances of projects not in `holders` (their credentials were removed).
    pub fn keep_instances_of(&self, holders: &[i64]) {
        let gone: Vec<i64> = (self.instances.by_project.lock().expect("instances lock").keys())
            .filter(|id| !holders.contains(id))
            .copied()
            .collect();
        for project_id in gone {
            self.drop_instance(project_id);
        }
    }

    /// What each project's own connection listed, by project name, for
    /// those whose tools are known (running, or idle after a listing).
    pub fn own_listings(&self) -> Vec<(String, Arc<[rmcp::model::Tool]>)> {
        let instances = self.instances.by_project.lock().expect("instances lock");
        let mut listings: Vec<_> = instances
            .values()
            .filter_map(|i| {
                let state = i.state.borrow();
                let known = state.status.tools_known() && !i.stop.is_cancelled();
                Some((i.own.as_ref()?.project.clone(), state.tools.clone())).filter(|_| known)
            })
            .collect();
        listings.sort_by(|a, b| a.0.cmp(&b.0));
        listings
    }

    /// A connection of a project's own (with its credential), or a copy of
    /// a stateless server (without one); stopped when idle.
    fn spawn_instance(self: &Arc<Self>, credential: Option<ProjectCredential>) -> Arc<Downstream> {
        let mut config = self.config.clone();
        if let Some(credential) = &credential {
            match &mut config.transport {
                Transport::Stdio { env, .. } => env.extend(credential.env.clone()),
                Transport::Http { headers, .. } => headers.extend(credential.headers.clone()),
                Transport::Builtin(_) => {}
            }
        }
        config.lazy = false;
        config.idle_timeout = Some(config.idle_timeout.unwrap_or(DEFAULT_LAZY_IDLE_TIMEOUT));
        let span = match &credential {
            Some(c) => tracing::info_span!("instance", project = %c.project),
            None => tracing::info_span!("instance", copy = true),
        };
        // Its listing changes rebuild the catalog: it may be its project's.
        let mut instance = Downstream::new(
            config,
            self.stop.child_token(),
            Arc::new(Forgetful),
            self.builtins.clone(),
            self.tracker.clone(),
            self.changed.clone(),
        );
        instance.own = credential;
        instance.parent = Arc::downgrade(self);
        let instance = Arc::new(instance);
        self.tracker
            .spawn(super::supervise(instance.clone(), self.changed.clone()).instrument(span));
        instance
    }
}
