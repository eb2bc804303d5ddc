//! Tool search: which tools fit a query, among those a caller may see.
//!
//! Providers, chosen per project (`projects.optimization`): [`bm25`]
//! (local, always available), hybrid (BM25F blended with the local
//! embedding model of [`semantic`], when installed) and [`cloud`] (a remote
//! `POST /catalog/search` that falls back to the best local search).
//!
//! Several queries are ranked one by one and [`fuse`]d, so one call serves
//! both paraphrases of one need and the steps of a task. A project's
//! [`learning`] (the tools it ran after finding them) adds a bounded boost.

pub mod bm25;
pub mod cloud;
pub mod learning;
pub mod semantic;

use std::collections::HashMap;

pub use bm25::Error;

use crate::catalog::View;

/// A query: one or more phrasings of the need, plus optional background.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The model's phrasings; a tool matching several ranks higher.
    pub queries: Vec<String>,
    /// Background text: weak evidence.
    pub context: Option<String>,
    /// How many results at most.
    pub limit: usize,
    /// What the project's use taught, blended into local rankings.
    pub prior: Option<learning::Prior>,
}

/// One tool a provider picked.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    /// `server:tool`, always inside the caller's view.
    pub key: String,
    /// 0..1.
    pub relevance: f32,
    /// Why it was picked (matched terms and fields, or the provider's reason).
    pub explanation: Option<String>,
    /// Which of the request's queries found it (its best, after fusion).
    pub query: usize,
}

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
        Ok(view.search(request))
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
