//! The local rankings of one view: BM25F hits per query, blended with
//! meaning in hybrid search, lifted by the project's learned prior (its
//! terms, and in hybrid search the meanings it remembers), then fused
//! across queries.

use std::collections::HashMap;

use super::fuse;
use crate::catalog::View;
use learning::{Lift, Scored, order, terms};
use search::bm25::Hit;
use search::semantic::{self, Vectors};
use search::{Ranked, Request};

/// BM25F-ranked tools for `request`, among those the caller may use, each
/// with the terms that matched and where; several queries are ranked one by
/// one and fused. The project's learned prior, if any, lifts the tools it
/// used for these words.
pub fn bm25(view: &View, request: &Request) -> Vec<Ranked> {
    let lists = (0..request.queries.len())
        .map(|q| rank(view, request, q, lexical(view, request, q, false), None))
        .collect();
    fuse(lists, request.limit)
}

/// Hybrid-ranked tools: per query, BM25F relevance blended with the cosine
/// similarity of `query_vectors` (one unit vector per query) to every visible
/// tool, then fused like [`bm25`]. `None` while the snapshot's tool
/// embeddings are not computed yet.
pub fn hybrid<V: AsRef<[f32]>>(view: &View, request: &Request, query_vectors: &[V], alpha: f32) -> Option<Vec<Ranked>> {
    hybrid_blend(view, request, hybrid_lexical(view, request), query_vectors, alpha)
}

/// The word half of [`hybrid`], which needs no query vectors: it can run
/// while the model embeds the queries.
pub fn hybrid_lexical(view: &View, request: &Request) -> Vec<Lexical> {
    (0..request.queries.len())
        .map(|q| lexical(view, request, q, true))
        .collect()
}

/// The rest of [`hybrid`], once the query vectors are here.
pub fn hybrid_blend<V: AsRef<[f32]>>(
    view: &View,
    request: &Request,
    lexical: Vec<Lexical>,
    query_vectors: &[V],
    alpha: f32,
) -> Option<Vec<Ranked>> {
    let vectors = view.vectors()?;
    let lists = lexical
        .into_iter()
        .zip(query_vectors)
        .enumerate()
        .map(|(q, (mut words, vector))| {
            add_pulls(&mut words.boosts, meaning_pulls(view, request, vector.as_ref()));
            rank(view, request, q, words, Some((vectors, vector.as_ref(), alpha)))
        })
        .collect();
    Some(fuse(lists, request.limit))
}

/// One query's word half of a ranking (see [`hybrid_lexical`]).
pub struct Lexical {
    one: Request,
    hits: HashMap<u32, Hit>,
    boosts: HashMap<u32, (Lift, String)>,
}

/// Query `q`'s BM25F hits and learned boosts, as deep as the ranking needs
/// (deeper when meaning or the prior may lift what words ranked low).
fn lexical(view: &View, request: &Request, q: usize, hybrid: bool) -> Lexical {
    let query = &request.queries[q];
    let pool = per_query_pool(request);
    let boosts = boosts(view, request, query);
    let depth = if hybrid || !boosts.is_empty() {
        HYBRID_CANDIDATES.max(pool)
    } else {
        pool
    };
    let one = one_query(query, request, depth);
    let hits = view
        .index()
        .rank(&one, view.filter())
        .into_iter()
        .map(|h| (h.ordinal, h))
        .collect();
    Lexical { one, hits, boosts }
}

/// Query `q` of `request` ranked alone: its BM25F hits, blended with meaning
/// when `semantic` is given (every visible tool competes), then lifted by the
/// prior; only the kept lexical hits are explained.
fn rank(
    view: &View,
    request: &Request,
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
    let lift = |score: f32, ordinal: u32, cosine: Option<f32>| {
        let (full, trusted) = match (!boosts.is_empty()).then(|| boosts.get(&ordinal)).flatten() {
            Some((lift, _)) => (terms::boosted(score, lift.full), terms::boosted(score, lift.trusted)),
            None => (score, score),
        };
        Scored {
            full,
            trusted,
            item: (ordinal, cosine),
        }
    };
    let scored: Vec<Scored<(u32, Option<f32>)>> = match semantic {
        Some((vectors, vector, alpha)) => {
            // By ordinal: a scan of every tool reads it in order, with no lookups.
            let mut bm25 = vec![0f32; view.catalog_len()];
            for h in lexical.values() {
                bm25[h.ordinal as usize] = h.relevance;
            }
            let query = semantic::QueryVector::new(vector);
            view.ordinals()
                .map(|ordinal| {
                    let cosine = vectors.cosine(ordinal, &query);
                    lift(
                        semantic::blend(bm25[ordinal as usize], cosine, alpha),
                        ordinal,
                        Some(cosine),
                    )
                })
                .collect()
        }
        None => {
            let mut scored: Vec<_> = lexical.values().map(|h| lift(h.relevance, h.ordinal, None)).collect();
            // Tools the words alone did not reach, on their learned pull.
            scored.extend(
                boosts
                    .keys()
                    .filter(|o| !lexical.contains_key(o))
                    .map(|&o| lift(0.0, o, None)),
            );
            scored
        }
    };
    // Ties by ordinal: which of several equal scores make the cut must not
    // depend on the hash maps' order.
    let scored = order(scored, pool, |a, b| a.0.cmp(&b.0));
    lexical.retain(|ordinal, _| scored.iter().any(|(_, (o, _))| o == ordinal));
    view.index().explain_hits(&one, lexical.values_mut());
    scored
        .into_iter()
        .map(|(score, (ordinal, cosine))| {
            let reasons: Vec<String> = [
                lexical.remove(&ordinal).and_then(|h| h.explanation),
                cosine.map(|c| format!("meaning: {c:.2}")),
                boosts.get(&ordinal).map(|(_, why)| why.clone()),
            ]
            .into_iter()
            .flatten()
            .collect();
            Ranked {
                key: view.key_at(ordinal).to_string(),
                relevance: score,
                explanation: (!reasons.is_empty()).then(|| reasons.join("; ")),
                query: q,
            }
        })
        .collect()
}

/// The prior's boosts for `query`, by ordinal, among the tools the view allows.
fn boosts(view: &View, request: &Request, query: &str) -> HashMap<u32, (Lift, String)> {
    let Some(prior) = &request.prior else {
        return HashMap::new();
    };
    prior
        .boosts(&view.query_terms(query))
        .into_iter()
        .filter_map(|(key, boost)| Some((view.ordinal(&key)?, boost)))
        .collect()
}

/// The pulls of the project's remembered meanings toward the tools the view
/// allows, for a query embedded as `vector`, by ordinal.
fn meaning_pulls(view: &View, request: &Request, vector: &[f32]) -> HashMap<u32, (Lift, String)> {
    let Some(prior) = &request.prior else {
        return HashMap::new();
    };
    prior
        .pulls(vector)
        .into_iter()
        .filter_map(|(key, pull)| Some((view.ordinal(&key)?, pull)))
        .collect()
}

/// Adds meaning `pulls` to term `boosts`: a tool both pull keeps both
/// explanations and their sum, within the prior's cap ([`Lift::plus`]).
fn add_pulls(boosts: &mut HashMap<u32, (Lift, String)>, pulls: HashMap<u32, (Lift, String)>) {
    for (ordinal, (pull, why)) in pulls {
        boosts
            .entry(ordinal)
            .and_modify(|(boost, reason)| {
                *boost = boost.plus(pull);
                reason.push_str("; ");
                reason.push_str(&why);
            })
            .or_insert((Lift::default().plus(pull), why));
    }
}

/// `query` alone, with `request`'s context, `limit` deep.
fn one_query(query: &str, request: &Request, limit: usize) -> Request {
    Request {
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
fn per_query_pool(request: &Request) -> usize {
    if request.queries.len() > 1 {
        request.limit.max(20)
    } else {
        request.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tool both priors pull keeps both reasons and their sum within the
    /// cap; a tool only meaning pulls gets its pull (the explanation the
    /// result shows is built from these).
    #[test]
    fn meaning_pulls_add_to_term_boosts_within_the_cap() {
        let lift = |full, trusted| Lift { full, trusted };
        let mut boosts = HashMap::from([(1, (lift(0.3, 0.05), "used once for 'forecast'".to_string()))]);
        add_pulls(
            &mut boosts,
            HashMap::from([
                (1, (lift(0.4, 0.2), "asked like this 7 times".to_string())),
                (2, (lift(0.2, 0.1), "asked like this once".to_string())),
            ]),
        );
        assert_eq!(
            boosts[&1],
            (
                lift(terms::CAP, 0.25),
                "used once for 'forecast'; asked like this 7 times".to_string()
            )
        );
        assert_eq!(boosts[&2], (lift(0.2, 0.1), "asked like this once".to_string()));
    }
}
