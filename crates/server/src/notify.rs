//! Who hears of changes, and how: an initialized 2025 session over its
//! session, a 2026-07-28 `subscriptions/listen` stream over its sink.
//! `notifications/tools/list_changed` goes to each whose view of the catalog
//! changed; a resource's updates go to each that subscribed to it.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ErrorData, ResourceUpdatedNotificationParam, SubscriptionFilter};
use rmcp::service::{Peer, SubscriptionContext, SubscriptionSink};
use tokio_util::sync::{CancellationToken, DropGuard};
use tracing::{info, warn};

use super::Upstream;
use super::errors::{auth_error, downstream_error};
use downstream::Downstream;
use gateway::auth::Caller;
use gateway::catalog::View;
use store::access::{Grants, Project};

/// Where a listener's notifications go.
#[derive(Debug, Clone)]
pub(super) enum Notify {
    /// An initialized session.
    Session(Peer<RoleServer>),
    /// A `subscriptions/listen` stream, until it ends.
    Stream(SubscriptionSink, CancellationToken),
}

impl Notify {
    fn closed(&self) -> bool {
        match self {
            Self::Session(peer) => peer.is_transport_closed(),
            Self::Stream(_, ended) => ended.is_cancelled(),
        }
    }

    /// Tells of a tool-list change; a listener gone meanwhile is dropped at the next change.
    async fn tools_changed(&self) {
        match self {
            Self::Session(peer) => drop(peer.notify_tool_list_changed().await),
            Self::Stream(sink, _) => drop(sink.notify_tool_list_changed().await),
        }
    }

    /// Whether the update could be sent (else the listener is gone).
    async fn resource_updated(&self, uri: &str) -> bool {
        match self {
            Self::Session(peer) => peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                .await
                .is_ok(),
            Self::Stream(sink, _) => sink.notify_resource_updated(uri).await.is_ok(),
        }
    }
}

/// A session or stream and the view of the catalog it last saw.
#[derive(Debug)]
pub(super) struct Listener {
    to: Notify,
    /// Its project, whose grants and exposure may change while it lasts.
    project: String,
    grants: Arc<Grants>,
    fingerprint: u64,
}

impl Upstream {
    /// Adds `to` as a listener of what `caller` sees. The listeners whose
    /// session or stream has ended go first: the sweep at a change alone
    /// would keep every ended session's peer (its channel, its client's
    /// info) for as long as nothing changes, about 12 KiB a session.
    pub(super) fn listen(&self, to: Notify, caller: &Caller) {
        let view = self.gateway.catalog().view_of(caller);
        let listener = Listener {
            to,
            project: caller.project.name.clone(),
            grants: caller.grants.clone(),
            fingerprint: listing_fingerprint(&view, &caller.project),
        };
        let mut listeners = self.listeners.lock().expect("listeners lock");
        sweep(&mut listeners);
        listeners.push(listener);
        telemetry::change_listeners(1);
    }
}

/// Drops the listeners whose session or stream has ended.
fn sweep(listeners: &mut Vec<Listener>) {
    let before = listeners.len();
    listeners.retain(|l| !l.to.closed());
    telemetry::change_listeners(listeners.len() as isize - before as isize);
}

/// What a listener's `tools/list` follows: the tools its project lists
/// beside or instead of the meta-tools (on the `meta` exposure, Apps coming
/// and going; a server starting with no App changes nothing), and how its
/// project lists tools.
fn listing_fingerprint(view: &View, project: &Project) -> u64 {
    let listing = project.exposure as u64 | (project.apps as u64) << 8;
    let listed = match project.names_tools() {
        true => view.fingerprint(!project.exposure.lists_tools()),
        false => 0,
    };
    listed ^ listing.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// What a `subscriptions/listen` stream may carry: tool-list changes, and
/// updates of the resources asked for (each checked against the caller when
/// the stream starts).
pub(super) fn accepted(requested: &SubscriptionFilter) -> SubscriptionFilter {
    let mut accepted = SubscriptionFilter::new();
    accepted.tools_list_changed = Some(true);
    accepted.resource_subscriptions = requested.resource_subscriptions.clone();
    accepted
}

impl Upstream {
    /// Sends `notifications/tools/list_changed` to each listener whose view
    /// of the catalog changed (a reload, a server coming or going, its
    /// project's grants or exposure), and to no other, until `ct` is
    /// cancelled. Changes to the store are noticed within a second (its
    /// access generation). A stateless (2026-07-28) client without a
    /// `subscriptions/listen` stream asks again instead.
    pub async fn announce_changes(self, ct: CancellationToken) {
        let catalog = self.gateway.catalog().clone();
        let mut updates = catalog.updates();
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
        let mut generation = self.gateway.store().access_generation().ok();
        loop {
            tokio::select! {
                changed = updates.changed() => if changed.is_err() { return },
                _ = tick.tick() => {
                    let now = self.gateway.store().access_generation().ok();
                    if std::mem::replace(&mut generation, now) == now {
                        continue;
                    }
                }
                _ = ct.cancelled() => return,
            }
            let changed: Vec<Notify> = {
                let mut listeners = self.listeners.lock().expect("listeners lock");
                sweep(&mut listeners);
                listeners
                    .iter_mut()
                    .filter_map(|l| {
                        let now = match self.gateway.caller_for_project(&l.project) {
                            Ok(caller) => {
                                l.grants = caller.grants;
                                listing_fingerprint(&catalog.view_for(&l.project, l.grants.clone()), &caller.project)
                            }
                            Err(_) => 0,
                        };
                        (std::mem::replace(&mut l.fingerprint, now) != now).then(|| l.to.clone())
                    })
                    .collect()
            };
            if !changed.is_empty() {
                info!(
                    listeners = changed.len(),
                    "tools changed for some listeners; notifying them"
                );
            }
            for to in changed {
                to.tools_changed().await;
            }
        }
    }

    /// Subscribes `to` to the resource the caller calls `client_uri`, on the
    /// server that listed it (or the first of those that may have it, as a
    /// read goes); the updates flow until the guard is dropped.
    pub(super) async fn subscribe_for(
        &self,
        caller: &Caller,
        client_uri: &str,
        to: Notify,
    ) -> Result<(Arc<Downstream>, String, DropGuard), ErrorData> {
        let (candidates, uri) = self.readers_of(caller, client_uri).await?;
        let mut last = super::errors::unknown_resource(client_uri);
        for server in candidates {
            match server.subscribe(&uri).await {
                Ok(()) => {
                    let stop = CancellationToken::new();
                    tokio::spawn(relay_updates(
                        server.clone(),
                        uri.clone(),
                        client_uri.to_string(),
                        to,
                        stop.clone(),
                    ));
                    return Ok((server, uri, stop.drop_guard()));
                }
                Err(e) => last = downstream_error(e),
            }
        }
        Err(last)
    }

    /// One 2026-07-28 `subscriptions/listen` stream: tool-list changes of the
    /// caller's view, and updates of the resources it asked for, until the
    /// client ends it.
    pub(super) async fn listen_for(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let caller = self.caller(context.request_context()).await.map_err(auth_error)?;
        let ended = CancellationToken::new();
        let _ended = ended.clone().drop_guard();
        let to = Notify::Stream(context.sink().clone(), ended);
        let mut relays = Vec::new();
        for uri in context.accepted().resource_subscriptions.iter().flatten() {
            relays.push(self.subscribe_for(&caller, uri, to.clone()).await?);
        }
        self.listen(to, &caller);
        context.cancelled().await;
        for (server, uri, relay) in relays {
            drop(relay);
            if let Err(e) = server.unsubscribe(&uri).await {
                warn!(server = %server.name(), error = %e, "resources/unsubscribe failed downstream");
            }
        }
        Ok(())
    }
}

/// Relays `server`'s updates of `uri` to a subscriber (as `client_uri`, the
/// name it subscribed with) until `stop`, or until the subscriber is gone.
async fn relay_updates(server: Arc<Downstream>, uri: String, client_uri: String, to: Notify, stop: CancellationToken) {
    let mut updates = server.resource_updates();
    loop {
        let updated = tokio::select! {
            _ = stop.cancelled() => return,
            u = updates.recv() => u,
        };
        match updated {
            Ok(u) if u == uri => {
                if !to.resource_updated(&client_uri).await {
                    return;
                }
            }
            Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
        }
    }
}
