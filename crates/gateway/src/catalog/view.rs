//! What one caller may see of a snapshot: the tools, their direct names,
//! and what ranking ([`crate::rank`]) reads of them.

use std::sync::Arc;

use rmcp::model::Tool;

use super::{Entry, Snapshot};
use crate::security::Held;
use search::semantic::Vectors;
use store::access::{Access, Grants};

/// What one caller may see of a snapshot: tools of running servers that the
/// rules leave enabled and the caller's project is granted. Discovery and
/// execution both go through it, so discovery never shows a tool that
/// execution refuses.
#[derive(Clone)]
pub struct View {
    snapshot: Arc<Snapshot>,
    grants: Arc<Grants>,
    /// The caller's access per server of the snapshot, by server ordinal.
    access: Arc<[Access]>,
}

impl View {
    /// The view of `snapshot` for a caller with `grants`.
    pub fn new(snapshot: Arc<Snapshot>, grants: Arc<Grants>) -> Self {
        let access = snapshot.servers.iter().map(|s| grants.server_access(s)).collect();
        Self {
            snapshot,
            grants,
            access,
        }
    }

    fn allows(&self, entry: &Entry) -> bool {
        allowed(&self.access, &self.grants, entry)
    }

    fn discoverable(&self, entry: &Entry) -> bool {
        discoverable(&self.access, &self.grants, entry)
    }

    /// Changes whenever the tools [`View::direct_tools`] lists for this
    /// caller, or any of them, change (a reload, a server coming or going,
    /// new rules); with `apps_only`, only those for Apps count.
    pub fn fingerprint(&self, apps_only: bool) -> u64 {
        self.snapshot
            .entries
            .iter()
            .filter(|e| (!apps_only || e.for_apps()) && self.allows(e))
            .fold(0u64, |acc, e| acc.rotate_left(5) ^ e.fingerprint)
    }

    /// The tool behind `key`, if the caller may use it. Unknown and hidden
    /// keys are indistinguishable.
    pub fn get(&self, key: &str) -> Option<&Entry> {
        let entry = &self.snapshot.entries[*self.snapshot.by_key.get(key)? as usize];
        self.allows(entry).then_some(entry)
    }

    /// o200k tokens of every tool discovery may show the caller, as a
    /// `tools/list` would carry them, and of those among them at
    /// `shown` (keys); `None` until the snapshot's tokens are counted.
    pub fn listed_tokens<'a>(&self, shown: impl Iterator<Item = &'a str>) -> Option<(i64, i64)> {
        let tokens = self.snapshot.listed_tokens()?;
        let all = self.ordinals().map(|o| i64::from(tokens[o as usize])).sum();
        let shown = shown
            .filter_map(|key| self.ordinal(key))
            .map(|o| i64::from(tokens[o as usize]))
            .sum();
        Some((all, shown))
    }

    /// The tool its server calls `real_key`, whatever an override named it,
    /// if the caller may use it (for operators' pages, which list what the
    /// servers say).
    pub fn by_real_key(&self, real_key: &str) -> Option<&Entry> {
        self.snapshot
            .entries
            .iter()
            .find(|e| e.real_key.as_str() == real_key && self.allows(e))
    }

    /// The analyzed terms of `query`, as search and learning see them.
    pub fn query_terms(&self, query: &str) -> Vec<String> {
        self.snapshot.index.query_terms(&search::Request {
            queries: vec![query.to_string()],
            ..search::Request::default()
        })
    }

    /// The snapshot's BM25F index (rank it with [`View::filter`]).
    pub fn index(&self) -> &search::bm25::Index {
        &self.snapshot.index
    }

    /// The snapshot's tool embeddings, once computed.
    pub fn vectors(&self) -> Option<&Vectors> {
        self.snapshot.vectors.get()
    }

    /// How many tools the snapshot holds, visible or not: the range of ordinals.
    pub fn catalog_len(&self) -> usize {
        self.snapshot.entries.len()
    }

    /// The ordinals of the tools discovery may show the caller, in catalog order.
    pub fn ordinals(&self) -> impl Iterator<Item = u32> + '_ {
        self.snapshot
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| self.discoverable(e))
            .map(|(i, _)| i as u32)
    }

    /// The ordinal of `key`, if the caller may use it.
    pub fn ordinal(&self, key: &str) -> Option<u32> {
        let ordinal = *self.snapshot.by_key.get(key)?;
        self.allows(&self.snapshot.entries[ordinal as usize]).then_some(ordinal)
    }

    /// The key of the tool at `ordinal`.
    pub fn key_at(&self, ordinal: u32) -> &str {
        &self.snapshot.entries[ordinal as usize].key
    }

    /// The index's filter for this view: what discovery may show.
    pub fn filter(&self) -> search::bm25::Visible {
        let (snapshot, grants, access) = (self.snapshot.clone(), self.grants.clone(), self.access.clone());
        Arc::new(move |ordinal| discoverable(&access, &grants, &snapshot.entries[ordinal as usize]))
    }

    /// Whether hybrid search can run on this view (tool embeddings computed).
    pub fn has_vectors(&self) -> bool {
        self.snapshot.has_vectors()
    }

    /// Every tool discovery may show the caller, in catalog order.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.snapshot.entries.iter().filter(|e| self.discoverable(e))
    }

    /// The tools this caller may use, each under its direct name, in catalog
    /// order; with `apps_only`, those that carry an MCP App or are for one
    /// alone: what the `meta` exposure lists beside the meta-tools, so that
    /// hosts render them.
    pub fn direct_tools(&self, apps_only: bool) -> Vec<Tool> {
        self.snapshot
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| (!apps_only || e.for_apps()) && self.allows(e))
            .map(|(i, _)| self.snapshot.direct_definition(i))
            .collect()
    }

    /// The direct name of the tool behind `key`, if the caller may use it.
    pub fn direct_name(&self, key: &str) -> Option<&str> {
        let ordinal = *self.snapshot.by_key.get(key)? as usize;
        self.allows(&self.snapshot.entries[ordinal])
            .then(|| self.snapshot.direct[ordinal].as_str())
    }

    /// The key of the tool a client calls `name`, if the caller may use it:
    /// its direct name, or its own name where the caller may use only one
    /// tool of that name (an MCP App calls its server's tools by their
    /// names). A tool an operator renamed answers to its new name alone.
    /// With `apps_only`, only tools listed for Apps answer.
    pub fn key_of_name(&self, name: &str, apps_only: bool) -> Option<&str> {
        let callable = |e: &&Entry| (!apps_only || e.for_apps()) && self.allows(e);
        let direct = self
            .snapshot
            .by_direct
            .get(name)
            .map(|&i| &self.snapshot.entries[i as usize]);
        if let Some(entry) = direct.filter(callable) {
            return Some(entry.key.as_str());
        }
        let mut named = self
            .snapshot
            .entries
            .iter()
            .filter(|e| e.tool.name == name)
            .filter(callable);
        match (named.next(), named.next()) {
            (Some(only), None) => Some(only.key.as_str()),
            _ => None,
        }
    }

    /// Why the tool behind `key` is held for review, if it is and the
    /// caller's grants would otherwise let it run.
    pub fn held(&self, key: &str) -> Option<&Held> {
        let (server, held) = self.snapshot.held.get(key)?;
        self.grants.allows(server, &held.tool).then_some(held)
    }

    /// This view with discovery narrowed to `servers` (a caller's
    /// `tool_discovery` `servers`): their tools only. A name the caller has
    /// no tool of, unknown or not granted alike, is refused, naming those
    /// it has.
    pub fn narrowed_to(mut self, servers: &[String]) -> Result<Self, String> {
        let mut usable = vec![false; self.snapshot.servers.len()];
        for e in self.snapshot.entries.iter().filter(|e| self.discoverable(e)) {
            usable[e.server_ordinal as usize] = true;
        }
        let usable: Vec<&str> = (self.snapshot.servers.iter().zip(usable))
            .filter_map(|(name, usable)| usable.then_some(name.as_str()))
            .collect();
        if let Some(unknown) = servers.iter().find(|s| !usable.contains(&s.as_str())) {
            return Err(format!(
                "no server '{}' among those you can use now: {}",
                leaks::quote(unknown),
                usable.join(", ")
            ));
        }
        self.access = (self.snapshot.servers.iter().zip(self.access.iter()))
            .map(|(name, access)| match servers.contains(name) {
                true => *access,
                false => Access::Nothing,
            })
            .collect();
        Ok(self)
    }

    /// Whether the caller may read `server`'s resource `uri` (as that
    /// server names it): every one of a server granted whole; of a server
    /// granted tool by tool, only the App templates of the tools it may use.
    pub fn opens_resource(&self, server: &str, uri: &str) -> bool {
        self.grants.opens_server(server) || self.apps_at(uri).any(|e| *e.server == *server)
    }

    /// The server of the first tool the caller may use whose App template is
    /// `uri` (as its server names it).
    pub fn app_server<'a>(&'a self, uri: &'a str) -> Option<&'a str> {
        self.apps_at(uri).next().map(|e| &*e.server)
    }

    /// The tools the caller may use whose App template is `uri`.
    fn apps_at<'a>(&'a self, uri: &'a str) -> impl Iterator<Item = &'a Entry> {
        self.snapshot.entries.iter().filter(move |e| {
            e.has_app() && self.allows(e) && super::apps::template(e.tool.meta.as_deref()) == Some(uri)
        })
    }
}

/// Whether discovery shows `entry` to a caller with `access` and `grants`:
/// they may use it, and it is not for its App alone (hosts keep such a tool
/// from the model, and so does discovery).
fn discoverable(access: &[Access], grants: &Grants, entry: &Entry) -> bool {
    !entry.app_only() && allowed(access, grants, entry)
}

/// Whether a caller with `access` (per server) and `grants` may use `entry`.
fn allowed(access: &[Access], grants: &Grants, entry: &Entry) -> bool {
    match access[entry.server_ordinal as usize] {
        Access::All => true,
        Access::Nothing => false,
        Access::PerTool => grants.allows(&entry.server, entry.real_name()),
    }
}
