//! Ranking: which of the tools a caller may see fit a query, best first.
//!
//! Providers, chosen per project (`projects.search`): [`Bm25`] (local,
//! always available), [`Hybrid`] (BM25F blended with the local embedding
//! model, when installed) and the cloud service (which falls back to the best
//! local search). They rank a catalog [`View`], so nothing outside it can
//! come back; the engines themselves live in [`search`].
//!
//! Several queries are ranked one by one and [`fuse`]d, so one call serves
//! both paraphrases of one need and the steps of a task. A project's learned
//! prior (the tools it ran after finding them) adds a bounded boost.

mod hybrid;
pub mod local;

use std::collections::HashMap;

pub use hybrid::Hybrid;

use crate::catalog::View;
use search::cloud::{CloudSearch, ToolInfo};
use search::{Ranked, Request};

/// A way of ranking the tools of a view.
pub trait SearchProvider {
    /// Ranks the tools of `view` for `request`, best first. An error means
    /// this provider could not answer (the caller may fall back).
    fn search(&self, view: &View, request: &Request) -> impl Future<Output = Result<Vec<Ranked>, String>> + Send;
}

/// The local BM25F provider over the snapshot's index.
#[derive(Debug, Clone, Copy, Default)]
pub struct Bm25;

impl SearchProvider for Bm25 {
    async fn search(&self, view: &View, request: &Request) -> Result<Vec<Ranked>, String> {
        Ok(local::bm25(view, request))
    }
}

impl SearchProvider for CloudSearch {
    /// The service ranks the caller's own tools; any failure is an `Err`
    /// with the reason, and the gateway then answers with local search.
    async fn search(&self, view: &View, request: &Request) -> Result<Vec<Ranked>, String> {
        let tools = view
            .entries()
            .map(|e| ToolInfo {
                tool_key: &e.key,
                tool_name: &e.tool.name,
                server_name: &e.server,
                description: e.tool.description.as_deref(),
            })
            .collect();
        self.rank(tools, request).await
    }
}

/// Fuses one ranking per query. Each tool scores the sum of its relevance
/// over the queries that found it (CombSUM: relevance is on one fixed scale
/// for every query), so a tool several paraphrases agree on rises; and each
/// query's best tools (a quota of `limit / queries / 2`, at least one) come
/// first, so every step of a task gets a tool before any step gets a second.
/// A tool keeps its best relevance and that query's explanation.
///
/// On the tune half of `benches/data` this edged out reciprocal-rank fusion
/// (k = 1, 5, 60) and fusion without the quota.
pub fn fuse(lists: Vec<Vec<Ranked>>, limit: usize) -> Vec<Ranked> {
    if lists.len() <= 1 {
        let mut only = lists.into_iter().next().unwrap_or_default();
        only.truncate(limit);
        return only;
    }
    let quota = (limit / lists.len() / 2).max(1);
    let mut fused: Vec<(f32, bool, Ranked)> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for list in &lists {
        let mut picked = 0;
        for r in list {
            let i = *at.entry(r.key.clone()).or_insert_with(|| {
                fused.push((0.0, false, r.clone()));
                fused.len() - 1
            });
            let (score, first, best) = &mut fused[i];
            *score += r.relevance;
            if r.relevance > best.relevance {
                *best = r.clone();
            }
            if picked < quota && !*first {
                *first = true;
                picked += 1;
            }
        }
    }
    // Quota picks first, each group by fused score; ties keep discovery order.
    fused.sort_by(|a, b| b.1.cmp(&a.1).then(b.0.total_cmp(&a.0)));
    fused.into_iter().take(limit).map(|(_, _, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(keys: &[&str]) -> Vec<Ranked> {
        keys.iter()
            .enumerate()
            .map(|(i, k)| Ranked {
                key: k.to_string(),
                relevance: 0.9 - i as f32 / 10.0,
                explanation: None,
                query: 0,
            })
            .collect()
    }

    fn keys(r: &[Ranked]) -> Vec<&str> {
        r.iter().map(|r| r.key.as_str()).collect()
    }

    #[test]
    fn one_query_keeps_its_order() {
        assert_eq!(keys(&fuse(vec![list(&["a", "b", "c"])], 2)), ["a", "b"]);
        assert!(fuse(vec![], 5).is_empty());
    }

    #[test]
    fn paraphrases_agreeing_on_a_tool_lift_it() {
        let fused = fuse(
            vec![list(&["a", "x", "b"]), list(&["b", "y", "a"]), list(&["x", "b", "z"])],
            10,
        );
        assert_eq!(keys(&fused)[0], "b", "{:?}", keys(&fused));
    }

    #[test]
    fn every_step_gets_its_best_tool_first() {
        // Step one matches many tools strongly; steps two and three one each.
        let fused = fuse(
            vec![
                list(&["a1", "a2", "a3", "a4", "a5"]),
                list(&["b1", "a2"]),
                list(&["c1"]),
            ],
            4,
        );
        let top3 = &keys(&fused)[..3];
        for k in ["a1", "b1", "c1"] {
            assert!(top3.contains(&k), "{k} in {top3:?}");
        }
        assert_eq!(keys(&fused)[3], "a2", "then the tool two steps share");
    }

    #[test]
    fn a_tool_keeps_its_best_relevance_and_explanation() {
        let mut second = list(&["q", "a"]);
        second[1].relevance = 0.95;
        second[1].explanation = Some("from two".into());
        let fused = fuse(vec![list(&["a"]), second], 10);
        let a = fused.iter().find(|r| r.key == "a").unwrap();
        assert_eq!((a.relevance, a.explanation.as_deref()), (0.95, Some("from two")));
    }
}
