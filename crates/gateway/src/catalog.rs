//! The catalog: an immutable snapshot of every running server's tools and
//! the search index over them, swapped atomically when a server's tools
//! change. Readers never lock and never wait for a rebuild.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use arc_swap::{ArcSwap, ArcSwapOption};
use rmcp::model::Tool;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tracing::{debug, error, warn};

use crate::auth::Caller;
use crate::security::{Held, Security};
use config::Overrides;
use downstream::Registry;
use search::semantic::{Semantic, Vectors};
use store::access::Grants;
use vocab::keys::ToolKey;
use vocab::wire::{KEY_SEPARATOR, MAX_TOOL_KEY_BYTES};

pub mod apps;
pub mod direct;
mod entry;
mod snapshots;
mod tokens;
mod view;

pub use entry::Entry;
use entry::Renames;
use rules::Rules;
pub use snapshots::own_listing_name;
use snapshots::{Snapshots, snapshots_of};
pub use tokens::tokens;
pub use view::View;

/// Why a catalog could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The search index.
    #[error(transparent)]
    Search(#[from] search::Error),
    /// The store, where tool pins are kept (nothing is shown unchecked).
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// One server's tools as the catalog takes them.
#[derive(Debug, Clone, Copy)]
pub struct Listing<'a> {
    /// The server's name.
    pub server: &'a str,
    /// Its description from the config.
    pub about: Option<&'a str>,
    /// The tools callers may see.
    pub tools: &'a [Tool],
    /// The security scan's tags, by tool (empty: none).
    pub flagged: &'a [Vec<String>],
    /// The tools held for review.
    pub held: &'a [Held],
}

impl<'a> From<(&'a str, Option<&'a str>, &'a [Tool])> for Listing<'a> {
    fn from((server, about, tools): (&'a str, Option<&'a str>, &'a [Tool])) -> Self {
        Self {
            server,
            about,
            tools,
            flagged: &[],
            held: &[],
        }
    }
}

/// Every running server's tools at one moment, and their search index.
#[derive(Debug)]
pub struct Snapshot {
    entries: Vec<Entry>,
    by_key: HashMap<ToolKey, u32>,
    /// Tools held for review, by key: hidden, and refused with the reason.
    held: HashMap<ToolKey, (String, Held)>,
    /// Each entry's name for direct exposure (`server__tool`), by ordinal.
    direct: Vec<String>,
    /// Ordinals by direct name.
    by_direct: HashMap<String, u32>,
    /// Each entry's `inputSchema` as listed ([`direct::portable_schema`]),
    /// made once here rather than at every listing and call by name.
    listed_schemas: Vec<Arc<rmcp::model::JsonObject>>,
    /// Distinct server names, in catalog order.
    servers: Vec<String>,
    index: search::bm25::Index,
    /// Tool embeddings, set once computed (off the request path).
    vectors: OnceLock<Vectors>,
    /// Each entry's o200k tokens as listed, set once counted (off the request path).
    tokens: OnceLock<Arc<[u32]>>,
}

impl Snapshot {
    /// Whether the tool behind `key` carries an MCP App, whoever asks (a
    /// lookup, before a caller's view is built).
    pub fn has_app(&self, key: &str) -> bool {
        self.by_key
            .get(key)
            .is_some_and(|&i| self.entries[i as usize].has_app())
    }

    /// The key the server knows the tool behind `key` by, when an override
    /// renamed it.
    pub fn real_key(&self, key: &str) -> Option<&ToolKey> {
        let entry = &self.entries[*self.by_key.get(key)? as usize];
        (entry.real_key != entry.key).then_some(&entry.real_key)
    }

    /// The definition of the tool named `name` in direct exposure, whoever
    /// may call it: what rmcp checks a 2026-07-28 request's `Mcp-Param-*`
    /// headers against (the call itself checks the caller).
    pub fn direct_tool(&self, name: &str) -> Option<Tool> {
        self.by_direct.get(name).map(|&i| self.direct_definition(i as usize))
    }

    /// Entry `ordinal` as a direct tool: its direct name, a schema every
    /// client's converter takes, and its App URIs in its server's namespace.
    fn direct_definition(&self, ordinal: usize) -> Tool {
        let entry = &self.entries[ordinal];
        let mut tool = entry.tool.clone();
        tool.name = self.direct[ordinal].clone().into();
        tool.input_schema = self.listed_schemas[ordinal].clone();
        if let Some(meta) = tool.meta.as_mut() {
            apps::namespace(meta, &entry.server);
        }
        tool
    }

    /// Builds a snapshot from listings (or `(server, server description,
    /// tools)` triples); tools the rules disable are left out, so no caller
    /// can find or run them.
    pub fn build<'a, L: Into<Listing<'a>>>(
        servers: impl IntoIterator<Item = L>,
        rules: &Rules,
    ) -> Result<Self, search::Error> {
        Self::build_with(servers, rules, &Overrides::default(), search::bm25::Weights::default())
    }

    /// [`Snapshot::build`] with the operator's `overrides` (those for every
    /// project) and search `weights` (for tuning). A hidden tool is left out
    /// as a disabled one is; a rename that would take another tool's name
    /// is not applied.
    pub fn build_with<'a, L: Into<Listing<'a>>>(
        servers: impl IntoIterator<Item = L>,
        rules: &Rules,
        overrides: &Overrides,
        weights: search::bm25::Weights,
    ) -> Result<Self, search::Error> {
        let mut entries = Vec::new();
        let mut names: Vec<String> = Vec::new();
        let mut held = HashMap::new();
        for listing in servers {
            let Listing {
                server,
                about: description,
                tools,
                flagged,
                held: waiting,
            } = listing.into();
            for h in waiting {
                // Held under the name callers know it by; a hidden tool is not even held.
                let shape = overrides.global(server, &h.tool);
                if !shape.is_some_and(|o| o.hidden) {
                    let shown = shape.and_then(|o| o.name.as_deref()).unwrap_or(&h.tool);
                    held.insert(ToolKey::new(server, shown), (server.to_string(), h.clone()));
                }
            }
            let ordinal = match names.iter().position(|n| n == server) {
                Some(i) => i,
                None => {
                    names.push(server.to_string());
                    names.len() - 1
                }
            } as u32;
            let mut renames = Renames::default();
            for (i, tool) in tools.iter().enumerate() {
                // Execute refuses a key longer than a caller may send, so
                // discovery must not show one.
                if server.len() + KEY_SEPARATOR.len_utf8() + tool.name.len() > MAX_TOOL_KEY_BYTES {
                    warn!(
                        server,
                        name_bytes = tool.name.len(),
                        "a tool is left out: its toolKey would be longer than {MAX_TOOL_KEY_BYTES} bytes"
                    );
                    continue;
                }
                let verdict = rules.verdict(server, &tool.name, flagged.get(i).map_or(&[], Vec::as_slice));
                let shape = overrides.global(server, &tool.name);
                if verdict.enabled && !shape.is_some_and(|o| o.hidden) {
                    let shape = shape.filter(|o| renames.take(o, tools));
                    let mut entry = Entry::shaped(server, tool.clone(), verdict.tags, shape);
                    entry.server_description = description.map(str::to_string);
                    entry.server_ordinal = ordinal;
                    entries.push(entry);
                }
            }
        }
        let index = search::bm25::Index::build_with(entries.iter().map(Entry::text), weights)?;
        let by_key = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.key.clone(), i as u32))
            .collect();
        let direct = direct::names(entries.iter().map(|e| (e.server.as_str(), e.tool.name.as_ref())));
        let by_direct = direct.iter().enumerate().map(|(i, n)| (n.clone(), i as u32)).collect();
        let listed_schemas = entries
            .iter()
            .map(|e| direct::portable_schema(&e.tool.input_schema))
            .collect();
        Ok(Self {
            entries,
            by_key,
            held,
            direct,
            by_direct,
            listed_schemas,
            servers: names,
            index,
            vectors: OnceLock::new(),
            tokens: OnceLock::new(),
        })
    }

    /// The text each tool is embedded as, by ordinal.
    pub fn semantic_texts(&self) -> Vec<String> {
        self.entries.iter().map(Entry::semantic_text).collect()
    }

    /// Attaches the tools' embeddings (once; later calls are ignored).
    pub fn set_vectors(&self, vectors: Vectors) {
        let _ = self.vectors.set(vectors);
    }

    /// Whether the tools' embeddings are there (hybrid search needs them).
    pub fn has_vectors(&self) -> bool {
        self.vectors.get().is_some()
    }

    /// Tools of `server` in this snapshot: listed, and neither disabled by a
    /// rule, hidden by an override nor held for review.
    pub fn enabled_by(&self, server: &str) -> usize {
        self.entries.iter().filter(|e| e.server == server).count()
    }

    /// Tools of `server` that the security scan tagged `suspicious:…`.
    pub fn flagged_by(&self, server: &str) -> usize {
        self.entries
            .iter()
            .filter(|e| e.server == server && e.tags.iter().any(|t| t.starts_with("suspicious:")))
            .count()
    }

    /// Tools of `server` held for review.
    pub fn held_by(&self, server: &str) -> Vec<&Held> {
        let mut held: Vec<&Held> = self
            .held
            .values()
            .filter(|(s, _)| s == server)
            .map(|(_, h)| h)
            .collect();
        held.sort_by(|a, b| a.tool.cmp(&b.tool));
        held
    }

    /// Counts each entry's tokens as listed, once (a blocking thread's work:
    /// a thousand tools take tens of milliseconds).
    pub fn count_tokens(&self) {
        self.tokens
            .get_or_init(|| tokens::each((0..self.entries.len()).map(|i| self.direct_definition(i))));
    }

    /// Each entry's tokens as listed, by ordinal, once counted.
    pub(crate) fn listed_tokens(&self) -> Option<&[u32]> {
        self.tokens.get().map(|t| &t[..])
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no tools.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// What the operator's config makes of the servers' listings: which tools
/// exist (`[[rules]]`) and how callers see them (`[[overrides]]`).
#[derive(Debug, Clone, Default)]
pub struct Shaping {
    /// The tool rules.
    pub rules: Rules,
    /// The overrides.
    pub overrides: Overrides,
}

/// The current snapshots, replaced whole when a server's tools change.
#[derive(Debug)]
pub struct Catalog {
    current: ArcSwap<Snapshots>,
    shaping: ArcSwap<Shaping>,
    /// Reviews each listing before it is shown (pins, scanning).
    security: Arc<Security>,
    /// Counts installed snapshots; subscribers hear of each.
    installed: watch::Sender<u64>,
    /// The registry's change count the current snapshot reflects.
    built_from: AtomicU64,
    /// The embedding model, once loaded (it may arrive after start).
    semantic: ArcSwapOption<Semantic>,
    /// Why there is no model, while there is none.
    hybrid_off: ArcSwap<String>,
}

/// Which search answers projects set to hybrid, now, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchStatus {
    /// `hybrid`, or `bm25` while hybrid cannot answer.
    pub in_force: &'static str,
    /// One sentence for people.
    pub detail: String,
}

impl Catalog {
    /// A catalog built from the registry as it is now; with `semantic`, every
    /// snapshot gets its tools embedded in the background.
    pub fn new(
        registry: &Registry,
        shaping: Shaping,
        security: Arc<Security>,
        semantic: Option<Arc<Semantic>>,
    ) -> Result<Arc<Self>, Error> {
        // Read before the states, as a rebuild does: a server that comes up
        // while they are read is the next rebuild's, not counted as listed.
        let generation = registry.changed().count();
        let this = Arc::new(Self {
            current: ArcSwap::from_pointee(snapshots_of(registry, &shaping, &security)?),
            shaping: ArcSwap::from_pointee(shaping),
            security,
            installed: watch::Sender::new(0),
            built_from: AtomicU64::new(generation),
            semantic: ArcSwapOption::new(semantic),
            hybrid_off: ArcSwap::from_pointee("no embedding model is loaded".to_string()),
        });
        for snapshot in this.current.load().all() {
            this.prepare(snapshot.clone());
        }
        Ok(this)
    }

    /// The embedding model, if it is loaded.
    pub fn semantic(&self) -> Option<Arc<Semantic>> {
        self.semantic.load_full()
    }

    /// Puts a model that arrived after start (fetched in the background) to
    /// work: the current snapshot's tools are embedded, then hybrid answers.
    pub fn set_semantic(self: &Arc<Self>, semantic: Arc<Semantic>) {
        self.semantic.store(Some(semantic));
        for snapshot in self.current.load().all() {
            self.embed(snapshot.clone());
        }
    }

    /// Waits until the current snapshot's tools are embedded, at most
    /// `timeout`; true at once when there is no model to wait for.
    pub async fn embedded(&self, timeout: std::time::Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if self.semantic().is_none() || self.snapshot().has_vectors() {
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// Records why there is no model (shown until one arrives).
    pub fn set_hybrid_off(&self, why: impl Into<String>) {
        self.hybrid_off.store(Arc::new(why.into()));
    }

    /// Why there is no model, while there is none.
    pub fn hybrid_off(&self) -> Arc<String> {
        self.hybrid_off.load_full()
    }

    /// Which search answers projects set to hybrid, now.
    pub fn search_status(&self) -> SearchStatus {
        let snapshot = self.snapshot();
        match self.semantic() {
            Some(_) if snapshot.has_vectors() => SearchStatus {
                in_force: "hybrid",
                detail: format!(
                    "BM25F blended with the embedding model over {} tools, for projects set to hybrid \
                     (new projects are); projects set to bm25 use BM25F",
                    snapshot.len()
                ),
            },
            Some(_) => SearchStatus {
                in_force: "bm25",
                detail: format!(
                    "BM25F while the embeddings of {} tools are computed; hybrid answers when they are ready",
                    snapshot.len()
                ),
            },
            None => SearchStatus {
                in_force: "bm25",
                detail: format!(
                    "BM25F for every project; hybrid search is off: {}",
                    self.hybrid_off.load()
                ),
            },
        }
    }

    /// Rebuilds now, on this thread (for one-shot commands that need an up-to-date view).
    pub fn refresh(self: &Arc<Self>, registry: &Registry) -> Result<(), Error> {
        self.install(snapshots_of(registry, &self.shaping.load(), &self.security)?);
        Ok(())
    }

    /// Every listed tool, the config's shaping set aside: what an
    /// operator's search of hidden tools ranks, never a caller's.
    pub fn unfiltered(&self, registry: &Registry) -> Result<Arc<Snapshot>, Error> {
        Ok(snapshots_of(registry, &Shaping::default(), &self.security)?.base)
    }

    /// The rules and overrides in force.
    pub fn shaping(&self) -> Arc<Shaping> {
        self.shaping.load_full()
    }

    /// Replaces the rules and overrides; the next rebuild applies them.
    pub fn set_shaping(&self, shaping: Shaping) {
        self.shaping.store(Arc::new(shaping));
    }

    /// Ticks once per installed snapshot.
    pub fn updates(&self) -> watch::Receiver<u64> {
        self.installed.subscribe()
    }

    fn install(self: &Arc<Self>, snapshots: Snapshots) {
        telemetry::catalog_size(snapshots.base.len());
        let snapshots = Arc::new(snapshots);
        self.current.store(snapshots.clone());
        self.installed.send_modify(|n| *n += 1);
        for snapshot in snapshots.all() {
            self.prepare(snapshot.clone());
        }
    }

    /// Off the request path: embeds `snapshot`'s tools and counts their tokens.
    fn prepare(self: &Arc<Self>, snapshot: Arc<Snapshot>) {
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let counted = snapshot.clone();
            runtime.spawn_blocking(move || counted.count_tokens());
        }
        self.embed(snapshot);
    }

    /// Computes `snapshot`'s tool embeddings on a blocking thread (cached
    /// ones are reused); given up if a newer snapshot replaces it meanwhile.
    fn embed(self: &Arc<Self>, snapshot: Arc<Snapshot>) {
        let Some(semantic) = self.semantic() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if snapshot.is_empty() {
            snapshot.set_vectors(Vectors::default());
            return;
        }
        let this = Arc::downgrade(self);
        runtime.spawn_blocking(move || {
            let started = std::time::Instant::now();
            let wanted = || {
                this.upgrade()
                    .is_some_and(|c| c.current.load().all().any(|s| Arc::ptr_eq(s, &snapshot)))
            };
            match semantic.vectors(&snapshot.semantic_texts(), wanted) {
                Ok(Some((vectors, pass))) => {
                    snapshot.set_vectors(vectors);
                    tracing::info!(
                        tools = snapshot.len(),
                        remembered = pass.remembered,
                        from_disk = pass.from_disk,
                        computed = pass.computed,
                        ms = started.elapsed().as_millis() as u64,
                        "tool embeddings ready"
                    );
                }
                Ok(None) => debug!("tool embeddings abandoned for a newer catalog"),
                Err(e) => error!(error = %e, "tool embeddings failed; hybrid search answers with BM25"),
            }
        });
    }

    /// The current snapshot, as every project without overrides of its own sees it.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.current.load().base.clone()
    }

    /// The current snapshot as `project` sees it.
    pub fn snapshot_for(&self, project: &str) -> Arc<Snapshot> {
        let current = self.current.load();
        current.projects.get(project).unwrap_or(&current.base).clone()
    }

    /// Waits until the current snapshot lists each of `servers` (its tools,
    /// or that it has none): rebuilds happen off the request path, just
    /// after a server's tools change.
    pub async fn listing(&self, servers: &[&str]) {
        let mut installed = self.installed.subscribe();
        while !servers.iter().all(|s| self.snapshot().servers.iter().any(|n| n == s)) {
            if installed.changed().await.is_err() {
                return;
            }
        }
    }

    /// Waits until the snapshot was built after `changes` (a count of the
    /// registry's changes): a server that came up just before a call is
    /// listed, not missing, when the call reads the catalog.
    pub async fn caught_up(&self, changes: u64) {
        let mut installed = self.installed.subscribe();
        while self.built_from.load(Ordering::SeqCst) < changes {
            if installed.changed().await.is_err() {
                return;
            }
        }
    }

    /// Whether a rebuild is pending for changes up to `changes`.
    pub fn behind(&self, changes: u64) -> bool {
        self.built_from.load(Ordering::SeqCst) < changes
    }

    /// The direct tool named `name` in any project's snapshot, whoever may
    /// call it (see [`Snapshot::direct_tool`]; the call itself checks the caller).
    pub fn direct_tool(&self, name: &str) -> Option<Tool> {
        self.current.load().all().find_map(|s| s.direct_tool(name))
    }

    /// What `caller` may see now: its project's snapshot, through its grants.
    pub fn view_of(&self, caller: &Caller) -> View {
        self.view_for(&caller.project.name, caller.grants.clone())
    }

    /// What a caller of `project` with `grants` may see now.
    pub fn view_for(&self, project: &str, grants: Arc<Grants>) -> View {
        View::new(self.snapshot_for(project), grants)
    }

    /// What `grants` allow of the snapshot every project without overrides
    /// of its own sees: operators' pages, never a caller's view.
    pub fn operator_view(&self, grants: Arc<Grants>) -> View {
        View::new(self.snapshot(), grants)
    }

    /// Rebuilds the snapshot whenever the registry signals a change, off the
    /// request path, until `ct` is cancelled. Bursts collapse into one rebuild.
    pub async fn maintain(self: Arc<Self>, registry: Arc<Registry>, ct: CancellationToken) {
        loop {
            tokio::select! {
                _ = registry.changed().notified() => {}
                _ = ct.cancelled() => return,
            }
            let this = self.clone();
            let reg = registry.clone();
            // Changes after this point are the next rebuild's.
            let generation = registry.changed().count();
            match tokio::task::spawn_blocking(move || snapshots_of(&reg, &this.shaping.load(), &this.security)).await {
                Ok(Ok(snapshots)) => {
                    debug!(
                        tools = snapshots.base.len(),
                        projects = snapshots.projects.len(),
                        "catalog rebuilt"
                    );
                    self.built_from.fetch_max(generation, Ordering::SeqCst);
                    self.install(snapshots);
                }
                Ok(Err(e)) => error!(error = %e, "catalog rebuild failed; keeping the previous one"),
                Err(e) => error!(error = %e, "catalog rebuild panicked; keeping the previous one"),
            }
            // A failed rebuild is caught up too: waiting would not mend it.
            self.built_from.fetch_max(generation, Ordering::SeqCst);
            self.installed.send_modify(|_| {});
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, schema: serde_json::Value) -> Tool {
        Tool::new(
            name.to_string(),
            format!("performs {name}"),
            schema.as_object().unwrap().clone(),
        )
    }

    #[test]
    fn keys_are_server_colon_tool_and_resolve() {
        let tools = [tool("add", json!({"type": "object"}))];
        let snap = Snapshot::build([("math", None, &tools[..])], &Rules::default()).unwrap();
        let view = View::new(Arc::new(snap), Arc::new(Grants::all_of(["math"])));
        assert_eq!(view.get("math:add").unwrap().tool.name, "add");
        assert!(view.get("math:sub").is_none());
        assert!(view.get("add").is_none());
    }

    /// Issue 41: execute refuses a `toolKey` over its bound, so a tool whose
    /// key would be longer is never found either.
    #[test]
    fn a_tool_whose_key_is_too_long_to_send_is_left_out() {
        let longest = "t".repeat(MAX_TOOL_KEY_BYTES - "math:".len());
        let too_long = format!("{longest}x");
        let tools = [
            tool(&longest, json!({"type": "object"})),
            tool(&too_long, json!({"type": "object"})),
        ];
        let snap = Snapshot::build([("math", None, &tools[..])], &Rules::default()).unwrap();
        let keys: Vec<&str> = snap.entries.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, [format!("math:{longest}")]);
    }

    #[test]
    fn arguments_are_checked_with_every_violation() {
        let schema = json!({
            "type": "object",
            "properties": { "a": { "type": "number" }, "b": { "type": "number" } },
            "required": ["a", "b"],
            "additionalProperties": false
        });
        let e = Entry::shaped("math", tool("add", schema), vec![], None);
        assert!(e.check_arguments(&json!({"a": 1, "b": 2})).is_ok());
        let errors = e.check_arguments(&json!({"a": "one", "c": true})).unwrap_err();
        assert!(errors.len() >= 3, "{errors:?}");
        assert!(errors.iter().any(|m| m.contains("/a")), "{errors:?}");
        assert!(errors.iter().any(|m| m.contains("\"b\"")), "{errors:?}");
    }

    #[test]
    fn a_schema_that_does_not_compile_is_not_enforced() {
        let e = Entry::shaped("x", tool("t", json!({"type": 12})), vec![], None);
        assert!(e.check_arguments(&json!({"anything": 1})).is_ok());
    }

    /// xorshift64*: a tiny deterministic generator, so failures replay by seed.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len())]
        }
    }

    /// For random catalogs, rules and grants: discovery returns exactly the
    /// keys execute accepts, and those are exactly what rules and grants allow.
    #[test]
    fn discovery_and_execute_agree_for_random_catalogs() {
        use store::access::Permission;
        const SERVERS: [&str; 4] = ["fs", "gh", "db", "web"];
        const TOOLS: [&str; 10] = [
            "read_file",
            "delete_file",
            "list_dir",
            "query",
            "drop_table",
            "get_issue",
            "create_pr",
            "fetch",
            "search",
            "write",
        ];
        const PATTERNS: [&str; 7] = ["*delete*", "/^get_/", "!*drop*", "*", "list_*", "/FILE/i", "!create_*"];
        for seed in 1..=60u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let servers = &SERVERS[..1 + rng.below(SERVERS.len())];
            let catalog: Vec<(&str, Vec<Tool>)> = servers
                .iter()
                .map(|&s| {
                    let tools = TOOLS
                        .iter()
                        .filter(|_| rng.below(3) > 0)
                        .map(|&t| tool(t, json!({"type": "object", "properties": {"x": {"type": "string"}}})))
                        .collect();
                    (s, tools)
                })
                .collect();
            let specs: Vec<rules::RuleSpec> = (0..rng.below(4))
                .map(|_| rules::RuleSpec {
                    pattern: (0..1 + rng.below(2)).map(|_| rng.pick(&PATTERNS).to_string()).collect(),
                    server: (rng.below(3) == 0).then(|| rng.pick(servers).to_string()),
                    enabled: [None, Some(true), Some(false)][rng.below(3)],
                    tags: vec![],
                    tagged: None,
                })
                .collect();
            let rules = Rules::compile(&specs).unwrap();
            let permissions: Vec<Permission> = (0..rng.below(6))
                .map(|_| Permission {
                    server: rng.pick(servers).to_string(),
                    tool: (rng.below(2) == 0).then(|| rng.pick(&TOOLS).to_string()),
                    enabled: rng.below(3) > 0,
                })
                .collect();
            let grants = Grants::from_permissions(permissions);

            let snapshot = Snapshot::build(catalog.iter().map(|(s, t)| (*s, None, &t[..])), &rules).unwrap();
            let view = View::new(Arc::new(snapshot), Arc::new(grants.clone()));
            // Every tool's description says "performs"; one query reaches them all.
            let request = search::Request {
                queries: vec!["performs".into()],
                context: None,
                limit: 1000,
                prior: None,
            };
            let found: std::collections::BTreeSet<String> = crate::rank::local::bm25(&view, &request)
                .into_iter()
                .map(|r| r.key)
                .collect();
            for (server, tools) in &catalog {
                for t in tools {
                    let key = ToolKey::new(server, &t.name);
                    let allowed = rules.verdict(server, &t.name, &[]).enabled && grants.allows(server, &t.name);
                    assert_eq!(
                        found.contains(key.as_str()),
                        allowed,
                        "seed {seed}: discovery of {key} ({specs:?})"
                    );
                    assert_eq!(view.get(&key).is_some(), allowed, "seed {seed}: execute of {key}");
                }
            }
            assert!(view.get("nowhere:read_file").is_none());
        }
    }

    /// The prior lifts a tool the project used for these words, reaches one
    /// the words miss, and never shows a tool the caller may not see.
    #[test]
    fn learned_use_lifts_and_reaches_only_visible_tools() {
        use learning::{
            Prior,
            terms::{Learned, TermKeys},
        };
        use std::sync::RwLock;
        let plain = |name: &str, d: &str| {
            let mut t = tool(name, json!({"type": "object"}));
            t.description = Some(d.to_string().into());
            t
        };
        let fs = [
            plain("read_file", "Read a text file from disk"),
            plain("stat", "File size and times"),
        ];
        let secret = [plain("wipe", "Erase a file for good")];
        let snapshot = Arc::new(
            Snapshot::build([("fs", None, &fs[..]), ("vault", None, &secret[..])], &Rules::default()).unwrap(),
        );
        let view = View::new(snapshot, Arc::new(Grants::all_of(["fs"])));
        let mut learned = Learned::default();
        for _ in 0..5 {
            learned.record(&view.query_terms("how big is this file"), "fs:stat", 0);
            learned.record(&view.query_terms("how big is this file"), "vault:wipe", 0);
        }
        let request = |prior| search::Request {
            queries: vec!["how big is this file".into()],
            context: None,
            limit: 10,
            prior,
        };
        let before: Vec<String> = crate::rank::local::bm25(&view, &request(None))
            .into_iter()
            .map(|r| r.key)
            .collect();
        assert_ne!(before.first().map(String::as_str), Some("fs:stat"), "{before:?}");
        let prior = Prior {
            learned: Arc::new(RwLock::new(learned)),
            meanings: None,
            blend: Default::default(),
            keys: TermKeys::Text,
            now: 0,
        };
        let after = crate::rank::local::bm25(&view, &request(Some(prior)));
        assert_eq!(after[0].key, "fs:stat", "{after:?}");
        assert!(
            after[0]
                .explanation
                .as_deref()
                .unwrap()
                .contains("used 5 times for 'big'"),
            "{after:?}"
        );
        assert!(
            after.iter().all(|r| r.key != "vault:wipe"),
            "hidden stays hidden: {after:?}"
        );
    }
}
