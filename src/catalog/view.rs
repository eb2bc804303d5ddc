//! What one caller may see of a snapshot, and the ranking over it: BM25F,
//! the hybrid blend, the learned prior, and direct names.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::Tool;

use super::{Entry, Snapshot};
use crate::search::semantic::{self, Vectors};
use crate::search::{self, Ranked, learning};
use crate::security::Held;
use crate::store::{Access, Grants};

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

    /// Changes whenever the set of tools this caller may use, or any of
    /// them, changes (a reload, a server coming or going, new rules).
    pub fn fingerprint(&self) -> u64 {
        self.snapshot
            .entries
            .iter()
            .filter(|e| self.allows(e))
            .fold(0u64, |acc, e| acc.rotate_left(5) ^ e.fingerprint)
    }

    /// The tool behind `key`, if the caller may use it. Unknown and hidden
    /// keys are indistinguishable.
    pub fn get(&self, key: &str) -> Option<&Entry> {
        let entry = &self.snapshot.entries[*self.snapshot.by_key.get(key)? as usize];
        self.allows(entry).then_some(entry)
    }

    /// BM25F-ranked tools for `request`, among those the caller may use,
    /// each with the terms that matched and where; several queries are
    /// ranked one by one and fused. The project's learned prior, if any,
    /// lifts the tools it used for these words.
    pub fn search(&self, request: &search::Request) -> Vec<Ranked> {
        let lists = (0..request.queries.len())
            .map(|q| self.rank(request, q, self.lexical(request, q, false), None))
            .collect();
        search::fuse(lists, request.limit)
    }

    /// Hybrid-ranked tools: per query, BM25F relevance blended with the
    /// cosine similarity of `query_vectors` (one unit vector per query) to
    /// every visible tool, then fused like [`View::search`]. `None` while the
    /// snapshot's tool embeddings are not computed yet.
    pub fn hybrid<V: AsRef<[f32]>>(
        &self,
        request: &search::Request,
        query_vectors: &[V],
        alpha: f32,
    ) -> Option<Vec<Ranked>> {
        self.hybrid_blend(request, self.hybrid_lexical(request), query_vectors, alpha)
    }

    /// The word half of [`View::hybrid`], which needs no query vectors: it
    /// can run while the model embeds the queries.
    pub fn hybrid_lexical(&self, request: &search::Request) -> Vec<Lexical> {
        (0..request.queries.len())
            .map(|q| self.lexical(request, q, true))
            .collect()
    }

    /// The rest of [`View::hybrid`], once the query vectors are here.
    pub fn hybrid_blend<V: AsRef<[f32]>>(
        &self,
        request: &search::Request,
        lexical: Vec<Lexical>,
        query_vectors: &[V],
        alpha: f32,
    ) -> Option<Vec<Ranked>> {
        let vectors = self.snapshot.vectors.get()?;
        let lists = lexical
            .into_iter()
            .zip(query_vectors)
            .enumerate()
            .map(|(q, (words, vector))| self.rank(request, q, words, Some((vectors, vector.as_ref(), alpha))))
            .collect();
        Some(search::fuse(lists, request.limit))
    }

    /// The analyzed terms of `query`, as search and learning see them.
    pub fn query_terms(&self, query: &str) -> Vec<String> {
        self.snapshot
            .index
            .query_terms(&one_query(query, &search::Request::default(), 0))
    }

    /// Query `q`'s BM25F hits and learned boosts, as deep as the ranking
    /// needs (deeper when meaning or the prior may lift what words ranked low).
    fn lexical(&self, request: &search::Request, q: usize, hybrid: bool) -> Lexical {
        let query = &request.queries[q];
        let pool = per_query_pool(request);
        let boosts = self.boosts(request, query);
        let depth = if hybrid || !boosts.is_empty() {
            HYBRID_CANDIDATES.max(pool)
        } else {
            pool
        };
        let one = one_query(query, request, depth);
        let hits = self
            .snapshot
            .index
            .rank(&one, self.visible())
            .into_iter()
            .map(|h| (h.ordinal, h))
            .collect();
        Lexical { one, hits, boosts }
    }

    /// Query `q` of `request` ranked alone: its BM25F hits, blended with
    /// meaning when `semantic` is given (every visible tool competes), then
    /// lifted by the prior; only the kept lexical hits are explained.
    fn rank(
        &self,
        request: &search::Request,
        q: usize,
        words: Lexical,
        semantic: Option<(&Vectors, &[f32], f32)>,
    ) -> Vec<Ranked> {
        let pool = per_query_pool(request);
        let Lexical {
            one,
            hits: mut lexical,
            boosts,
        } = words;
        // Called for every visible tool in a hybrid scan: no lookup when nothing was learned.
        let lift = |score: f32, ordinal: u32| match (!boosts.is_empty()).then(|| boosts.get(&ordinal)).flatten() {
            Some((boost, _)) => learning::boosted(score, *boost),
            None => score,
        };
        // (score, ordinal, cosine)
        let mut scored: Vec<(f32, u32, Option<f32>)> = match semantic {
            Some((vectors, vector, alpha)) => {
                // By ordinal: a scan of every tool reads it in order, with no lookups.
                let mut bm25 = vec![0f32; self.snapshot.entries.len()];
                for h in lexical.values() {
                    bm25[h.ordinal as usize] = h.relevance;
                }
                let query = semantic::QueryVector::new(vector);
                self.snapshot
                    .entries
                    .iter()
                    .enumerate()
                    .filter(|(_, e)| self.allows(e))
                    .map(|(i, _)| {
                        let ordinal = i as u32;
                        let cosine = vectors.cosine(ordinal, &query);
                        let score = lift(semantic::blend(bm25[i], cosine, alpha), ordinal);
                        (score, ordinal, Some(cosine))
                    })
                    .collect()
            }
            None => {
                let mut scored: Vec<_> = lexical
                    .values()
                    .map(|h| (lift(h.relevance, h.ordinal), h.ordinal, None))
                    .collect();
                // Tools the words alone did not reach, on their learned pull.
                scored.extend(
                    boosts
                        .iter()
                        .filter(|(o, _)| !lexical.contains_key(o))
                        .map(|(&o, (boost, _))| (learning::boosted(0.0, *boost), o, None)),
                );
                scored
            }
        };
        // Best first, ties by ordinal: which of several equal scores make the
        // cut must not depend on the hash maps' order.
        let order = |a: &(f32, u32, Option<f32>), b: &(f32, u32, Option<f32>)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        let cut = pool.min(scored.len());
        if cut > 0 && cut < scored.len() {
            scored.select_nth_unstable_by(cut - 1, order);
            scored.truncate(cut);
        }
        scored.sort_by(order);
        lexical.retain(|ordinal, _| scored.iter().any(|(_, o, _)| o == ordinal));
        self.snapshot.index.explain_hits(&one, lexical.values_mut());
        scored
            .into_iter()
            .map(|(score, ordinal, cosine)| {
                let reasons: Vec<String> = [
                    lexical.remove(&ordinal).and_then(|h| h.explanation),
                    cosine.map(|c| format!("meaning: {c:.2}")),
                    boosts.get(&ordinal).map(|(_, why)| why.clone()),
                ]
                .into_iter()
                .flatten()
                .collect();
                Ranked {
                    key: self.snapshot.entries[ordinal as usize].key.clone(),
                    relevance: score,
                    explanation: (!reasons.is_empty()).then(|| reasons.join("; ")),
                    query: q,
                }
            })
            .collect()
    }

    /// The prior's boosts for `query`, by ordinal, among the tools this view allows.
    fn boosts(&self, request: &search::Request, query: &str) -> HashMap<u32, (f32, String)> {
        let Some(prior) = &request.prior else {
            return HashMap::new();
        };
        prior
            .boosts(&self.query_terms(query))
            .into_iter()
            .filter_map(|(key, boost)| {
                let ordinal = *self.snapshot.by_key.get(&key)?;
                self.allows(&self.snapshot.entries[ordinal as usize])
                    .then_some((ordinal, boost))
            })
            .collect()
    }

    /// The index's filter for this view.
    fn visible(&self) -> search::bm25::Visible {
        let (snapshot, grants, access) = (self.snapshot.clone(), self.grants.clone(), self.access.clone());
        Arc::new(move |ordinal| allowed(&access, &grants, &snapshot.entries[ordinal as usize]))
    }

    /// Whether hybrid search can run on this view (tool embeddings computed).
    pub fn has_vectors(&self) -> bool {
        self.snapshot.has_vectors()
    }

    /// Every tool in the view, in catalog order.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.snapshot.entries.iter().filter(|e| self.allows(e))
    }

    /// The tools this caller may use, each under its direct name, in catalog order.
    pub fn direct_tools(&self) -> Vec<Tool> {
        self.snapshot
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| self.allows(e))
            .map(|(i, _)| self.snapshot.direct_definition(i))
            .collect()
    }

    /// The `server:tool` key behind a direct name, if the caller may use it.
    pub fn key_of_direct(&self, name: &str) -> Option<&str> {
        let entry = &self.snapshot.entries[*self.snapshot.by_direct.get(name)? as usize];
        self.allows(entry).then_some(entry.key.as_str())
    }

    /// The key of the one tool the caller may use whose own name is `name`:
    /// an MCP App calls its server's tools by the server's names.
    pub fn key_of_bare(&self, name: &str) -> Option<&str> {
        let mut named = self
            .snapshot
            .entries
            .iter()
            .filter(|e| e.tool.name == name && self.allows(e));
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

    /// Whether the caller sees anything of `server` (resources and prompts follow this).
    pub fn sees_server(&self, server: &str) -> bool {
        self.grants.sees_server(server)
    }
}

/// One query's word half of a ranking (see [`View::hybrid_lexical`]).
pub struct Lexical {
    one: search::Request,
    hits: HashMap<u32, search::bm25::Hit>,
    boosts: HashMap<u32, (f32, String)>,
}

/// `query` alone, with `request`'s context, `limit` deep.
fn one_query(query: &str, request: &search::Request, limit: usize) -> search::Request {
    search::Request {
        queries: vec![query.to_string()],
        context: request.context.clone(),
        limit,
        prior: None,
    }
}

/// BM25F hits per query considered for the hybrid blend (the rest of the
/// catalog competes on meaning alone).
const HYBRID_CANDIDATES: usize = 50;

/// How deep each query's ranking goes before fusion: deeper than the answer,
/// so a tool that is second for two queries can beat one that is first for
/// one. A lone query needs no more than the answer.
fn per_query_pool(request: &search::Request) -> usize {
    if request.queries.len() > 1 {
        request.limit.max(20)
    } else {
        request.limit
    }
}

/// Whether a caller with `access` (per server) and `grants` may use `entry`.
fn allowed(access: &[Access], grants: &Grants, entry: &Entry) -> bool {
    match access[entry.server_ordinal as usize] {
        Access::All => true,
        Access::Nothing => false,
        Access::PerTool => grants.allows(&entry.server, &entry.tool.name),
    }
}
